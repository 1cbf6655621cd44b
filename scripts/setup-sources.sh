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
# APT takes entries in two formats, and a machine may mix them:
#
#   deb822 (*.sources): stanzas separated by blank lines, fields
#     "Types: deb", "URIs: ...", "Suites: ...", "Components: ...",
#     "Signed-By: ..." (field names in any case; a value may continue on
#     lines that start with white space, as an embedded key does, with "."
#     for its empty lines; "Enabled: no" turns a stanza off)
#   one-line (sources.list, *.list): "deb [opt=val ...] URI SUITE COMPONENT..."
#     where the bracketed options are optional and may contain spaces
#
# Only "deb" entries count (not deb-src), and only one whose suite is
# exactly the one asked for: bookworm-security lives elsewhere, and
# bookworm-updates says nothing about bookworm itself.

# debian_source_files APT_DIR [SKIP]: the source files APT reads under
# APT_DIR (normally /etc/apt), in APT's order: sources.list, then
# sources.list.d/*.list and *.sources by name.  SKIP, a path, is left out
# (setup.sh's own backports entry).
debian_source_files() {
	local dir=$1 skip=${2:-} f
	for f in "$dir/sources.list" "$dir"/sources.list.d/*; do
		case "$f" in
		*/sources.list | *.list | *.sources) ;;
		*) continue ;;
		esac
		if [ ! -f "$f" ] || [ "$f" = "$skip" ]; then
			continue
		fi
		printf '%s\n' "$f"
	done
}

# debian_mirror_uri SUITE FILE...: print the first URI of the first "deb"
# entry for SUITE in the FILEs, read in the order given; fail, printing
# nothing, when there is none.
debian_mirror_uri() {
	local suite=$1 f uri
	shift
	for f in "$@"; do
		case "$f" in
		*.sources) uri=$(debian_mirror_uri_deb822 "$suite" <"$f") ;;
		*) uri=$(debian_mirror_uri_one_line "$suite" <"$f") ;;
		esac
		if [ -n "$uri" ]; then
			printf '%s\n' "$uri"
			return 0
		fi
	done
	return 1
}

# debian_mirror_uri_deb822 SUITE <FILE: the deb822 format.
debian_mirror_uri_deb822() {
	awk -v want="$1" '
		function has_word(list, word,    n, i, w) {
			n = split(list, w, /[[:space:]]+/)
			for (i = 1; i <= n; i++)
				if (w[i] == word)
					return 1
			return 0
		}
		function first_word(list,    w) {
			sub(/^[[:space:]]+/, "", list)
			split(list, w, /[[:space:]]+/)
			return w[1]
		}
		# A stanza ends at a blank line or at the end of the file; the
		# first that serves the suite wins.  exit still runs END, hence
		# done.
		function stanza_end() {
			if (has_word(f["types"], "deb") &&
			    tolower(f["enabled"]) !~ /^[[:space:]]*no[[:space:]]*$/ &&
			    has_word(f["suites"], want) && first_word(f["uris"]) != "") {
				print first_word(f["uris"])
				done = 1
				exit
			}
			split("", f)
			field = ""
		}
		{ sub(/\r$/, "") }
		/^#/ { next }
		/^[[:space:]]*$/ { stanza_end(); next }
		/^[[:space:]]/ { if (field != "") f[field] = f[field] " " $0; next }
		{
			i = index($0, ":")
			if (i == 0) { field = ""; next }
			field = tolower(substr($0, 1, i - 1))
			f[field] = substr($0, i + 1)
		}
		END { if (!done) stanza_end() }
	'
}

# debian_mirror_uri_one_line SUITE <FILE: the one-line format.
debian_mirror_uri_one_line() {
	awk -v want="$1" '
		{
			line = $0
			sub(/\r$/, "", line)
			sub(/#.*/, "", line)
			sub(/^[[:space:]]+/, "", line)
			if (line !~ /^deb([[:space:]]|\[)/)
				next
			line = substr(line, 4)
			sub(/^[[:space:]]+/, "", line)
			# The options: everything up to the closing bracket,
			# spaces included.
			if (substr(line, 1, 1) == "[") {
				i = index(line, "]")
				if (i == 0)
					next
				line = substr(line, i + 1)
				sub(/^[[:space:]]+/, "", line)
			}
			split(line, w, /[[:space:]]+/)
			uri = w[1]
			got = w[2]
			# A CD-ROM entry names a disc, not a mirror.
			if (got == want && uri != "" && uri !~ /^cdrom:/) {
				print uri
				exit
			}
		}
	'
}
