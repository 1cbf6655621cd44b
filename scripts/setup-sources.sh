# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Shell functions (sourced, not run) that find the mirror a Debian machine's
# APT source entries use for a suite.  scripts/setup.sh enables
# bookworm-backports by copying the URI of the entry that serves bookworm,
# so that no host name is written into the tree; scripts/setup-sources-test.sh
# feeds these functions sample entries, without root and without /etc.
#
# APT reads the entries itself: `apt-get indextargets` lists every index
# an update would fetch with the entry it comes from, whatever the format
# (deb822 *.sources, one-line sources.list and *.list), continuation lines,
# options, disabled stanzas and all.  Only "deb" entries count (not
# deb-src), and only one whose suite is exactly the one asked for:
# bookworm-security lives elsewhere, and bookworm-updates says nothing
# about bookworm itself.  A CD-ROM entry names a disc, not a mirror.

# debian_mirror_uri SUITE [APT_DIR [SKIP]]: print the URI of the first "deb"
# entry for SUITE in APT's order, APT_DIR being APT's configuration
# directory (default /etc/apt) and SKIP a source file to leave out
# (setup.sh's own backports entry).  The slash APT appends to a URI is
# dropped.  Fails, printing nothing, when there is no such entry or APT
# cannot read the entries.
debian_mirror_uri() {
	local suite=$1 dir=${2:-/etc/apt} skip=${3:-} targets
	# shellcheck disable=SC2016 # $(...) are apt's fields, not the shell's
	targets=$(apt-get -o Dir::Etc="$dir" indextargets --no-release-info \
		--format '$(TARGET_OF) $(RELEASE) $(REPO_URI) $(SOURCESENTRY)' 2>/dev/null) ||
		return 1
	awk -v want="$suite" -v skip="$skip" '
		$1 == "deb" && $2 == want && $3 !~ /^cdrom:/ &&
		!(skip != "" && index($4, skip ":") == 1) {
			uri = $3
			sub(/\/$/, "", uri)
			print uri
			found = 1
			exit
		}
		END { exit !found }
	' <<<"$targets"
}
