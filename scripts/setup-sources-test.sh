#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Proves that scripts/setup-sources.sh, which scripts/setup.sh uses to copy
# the machine's Debian mirror into its bookworm-backports entry, finds the
# mirror in every form of APT source entry: deb822 stanzas (continuation
# lines, an embedded key, comments, deb-src and disabled stanzas), one-line
# entries with and without bracketed options, and a sources.list.d that
# mixes them.  APT (apt-get indextargets) reads each sample from an APT
# directory of its own: natively, without root; /etc/apt's sources are
# never read.  The hosts are made up.  Prints kselftest TAP.

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=setup-sources.sh
. "$top/scripts/setup-sources.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=lib/tap.sh
. "$top/scripts/lib/tap.sh"
# check NAME WANT APT_DIR [SKIP]: debian_mirror_uri bookworm APT_DIR [SKIP]
# prints WANT and succeeds; WANT empty: it prints nothing and fails.
check() {
	local name=$1 want=$2 got rc
	shift 2
	got=$(debian_mirror_uri bookworm "$@" 2>&1)
	rc=$?
	if { [ -n "$want" ] && [ "$rc" = 0 ]; } || { [ -z "$want" ] && [ "$rc" != 0 ]; } &&
	   [ "$got" = "$want" ]; then
		tap_ok "$name"
	else
		tap_not_ok "$name" \
			"want '${want}' (status $([ -n "$want" ] && echo 0 || echo 1)), got '$got' (status $rc)"
	fi
}
# sample NAME: an APT directory of its own whose one source file, NAME
# (sources.list, or one in sources.list.d), holds stdin; prints its path.
sample() {
	local dir=$tmp/$1.d
	mkdir -p "$dir/sources.list.d"
	if [ "$1" = sources.list ]; then
		cat >"$dir/sources.list"
	else
		cat >"$dir/sources.list.d/$1"
	fi
	printf '%s\n' "$dir"
}

tap_plan 19

mirror_stanza='Types: deb
URIs: http://mirror.example.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg'

f=$(sample plain.sources <<<"$mirror_stanza")
check "deb822: one stanza" http://mirror.example.org/debian "$f"

# The stock Debian 12 layout: security on another host, first, then the
# same stanza as above.
f=$(sample stock.sources <<EOF
Types: deb
URIs: http://security.example.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

$mirror_stanza
EOF
)
check "deb822: the stanza for the suite, not bookworm-security's" http://mirror.example.org/debian "$f"

f=$(sample skipped.sources <<'EOF'
# A comment: the mirror.
Types: deb-src
URIs: http://src.example.org/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://off.example.org/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb
URIs: http://backports.example.org/debian
Suites: bookworm-backports
Components: main

types: deb deb-src
uris: https://mirror.example.org/debian/
suites: bookworm
components: main contrib
EOF
)
check "deb822: deb-src, disabled and other-suite stanzas skipped; field names in any case" \
	https://mirror.example.org/debian "$f"

# Signed-By with the key inline: continuation lines, and " ." for its
# blank lines, which must not end the stanza.
f=$(sample embedded-key.sources <<'EOF'
Types: deb
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBGPL0BUBEADmW5NlOeRbZ3a2VzYUT8ZprM1qExampleKeyMaterialOnly
 =abcd
 -----END PGP PUBLIC KEY BLOCK-----
URIs: http://mirror.example.org/debian
Suites: bookworm
Components: main
EOF
)
check "deb822: an embedded Signed-By key before URIs" http://mirror.example.org/debian "$f"

f=$(sample multi-uri.sources <<'EOF'
Types: deb
URIs:
 http://one.example.org/debian
 http://two.example.org/debian
Suites:
 bookworm
Components: main
EOF
)
check "deb822: URIs and Suites on continuation lines; the first URI" http://one.example.org/debian "$f"

f=$(sample mirror-file.sources <<'EOF'
Types: deb
URIs: mirror+file:///etc/apt/mirrors/debian.list
Suites: bookworm bookworm-updates bookworm-backports
Components: main
EOF
)
# (APT writes file:///x as file:/x, the same URI.)
check "deb822: a mirror+file URI, as cloud images have" mirror+file:/etc/apt/mirrors/debian.list "$f"

f=$(printf 'Types: deb\r\nURIs: http://mirror.example.org/debian\r\nSuites: bookworm\r\nComponents: main\r\n' |
	sample crlf.sources)
check "deb822: CRLF line ends" http://mirror.example.org/debian "$f"

f=$(sample none.sources <<'EOF'
Types: deb
URIs: http://mirror.example.org/debian
Suites: bookworm-updates
Components: main
EOF
)
check "deb822: no stanza for the suite" "" "$f"

f=$(sample plain.list <<'EOF'
deb http://mirror.example.org/debian bookworm main
EOF
)
check "one-line: deb URI suite comps" http://mirror.example.org/debian "$f"

f=$(sample options.list <<'EOF'
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg arch=amd64] http://mirror.example.org/debian bookworm main
EOF
)
check "one-line: [signed-by=... arch=...] options" http://mirror.example.org/debian "$f"

f=$(sample spaced-options.list <<'EOF'
deb [ arch=amd64,arm64  signed-by=/usr/share/keyrings/x.gpg ]	http://mirror.example.org/debian	bookworm main
EOF
)
check "one-line: options with spaces inside the brackets, tabs between fields" \
	http://mirror.example.org/debian "$f"

f=$(sample tight-options.list <<'EOF'
deb [trusted=yes]http://mirror.example.org/debian bookworm main
EOF
)
check "one-line: no space after the options is malformed, as APT says" "" "$f"

f=$(sample sources.list <<'EOF'
# deb http://commented.example.org/debian bookworm main
deb cdrom:[Debian GNU/Linux 12.5.0 _Bookworm_ - Official amd64 DVD]/ bookworm main
deb-src http://src.example.org/debian bookworm main
deb http://security.example.org/debian-security bookworm-security main
deb http://mirror.example.org/debian bookworm-updates main
   deb http://mirror.example.org/debian bookworm main contrib # the main one
EOF
)
check "one-line: comments, cdrom, deb-src and other suites skipped" http://mirror.example.org/debian "$f"

f=$(sample broken.list <<'EOF'
deb [arch=amd64 http://mirror.example.org/debian bookworm main
EOF
)
check "one-line: an unclosed option bracket is no entry" "" "$f"

f=$(sample empty.list </dev/null)
check "an empty file" "" "$f"

# A whole /etc/apt: what APT reads, in APT's order, but setup.sh's own
# entry.
etc=$tmp/etc/apt
mkdir -p "$etc/sources.list.d"
cat >"$etc/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://deb822.example.org/debian
Suites: bookworm
Components: main
EOF
cat >"$etc/sources.list.d/aaa-other.list" <<'EOF'
deb [signed-by=/usr/share/keyrings/other.gpg] https://other.example.org/repo stable main
EOF
cat >"$etc/sources.list.d/qtimer-bookworm-backports.sources" <<'EOF'
Types: deb
URIs: http://ours.example.org/debian
Suites: bookworm
Components: main
EOF
cat >"$etc/sources.list.d/0-disabled.list.disabled" <<'EOF'
deb http://disabled.example.org/debian bookworm main
EOF
ours=$etc/sources.list.d/qtimer-bookworm-backports.sources
check "/etc/apt without sources.list: the .sources entry" http://deb822.example.org/debian "$etc" "$ours"

cat >"$etc/sources.list" <<'EOF'
deb [arch=amd64] http://list.example.org/debian bookworm main
EOF
check "/etc/apt with sources.list: it comes first, as in APT" http://list.example.org/debian "$etc" "$ours"

rm "$etc/sources.list" "$etc/sources.list.d/debian.sources"
check "/etc/apt: neither our own entry nor a disabled file counts" "" "$etc" "$ours"

check "no APT directory at all" "" "$tmp/nowhere"

tap_totals && [ "$tap_nr" = 19 ]
