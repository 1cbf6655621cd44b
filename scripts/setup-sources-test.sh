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
# mixes them.  Natively, without root, in a scratch directory: /etc is
# never read.  The hosts are made up.  Prints kselftest TAP.

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=setup-sources.sh
. "$top/scripts/setup-sources.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=lib/tap.sh
. "$top/scripts/lib/tap.sh"
# check NAME WANT FILE...: debian_mirror_uri bookworm FILE... prints WANT
# and succeeds; WANT empty: it prints nothing and fails.
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
# sample NAME: write stdin to $tmp/NAME and print the path.
sample() { cat >"$tmp/$1"; printf '%s\n' "$tmp/$1"; }

tap_plan 19

f=$(sample plain.sources <<'EOF'
Types: deb
URIs: http://mirror.example.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
)
check "deb822: one stanza" http://mirror.example.org/debian "$f"

# The stock Debian 12 layout: security on another host, first.
f=$(sample stock.sources <<'EOF'
Types: deb
URIs: http://security.example.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
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
	https://mirror.example.org/debian/ "$f"

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
check "deb822: a mirror+file URI, as cloud images have" mirror+file:///etc/apt/mirrors/debian.list "$f"

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
check "one-line: no space after the options" http://mirror.example.org/debian "$f"

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

# A whole /etc/apt: debian_source_files picks what APT reads, in APT's
# order, and leaves out setup.sh's own entry.
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
mapfile -t files < <(debian_source_files "$etc" "$etc/sources.list.d/qtimer-bookworm-backports.sources")
check "/etc/apt without sources.list: the .sources entry" http://deb822.example.org/debian "${files[@]}"

cat >"$etc/sources.list" <<'EOF'
deb [arch=amd64] http://list.example.org/debian bookworm main
EOF
mapfile -t files < <(debian_source_files "$etc" "$etc/sources.list.d/qtimer-bookworm-backports.sources")
check "/etc/apt with sources.list: it comes first, as in APT" http://list.example.org/debian "${files[@]}"

rm "$etc/sources.list" "$etc/sources.list.d/debian.sources"
mapfile -t files < <(debian_source_files "$etc" "$etc/sources.list.d/qtimer-bookworm-backports.sources")
check "/etc/apt: neither our own entry nor a disabled file counts" "" "${files[@]}"

mapfile -t files < <(debian_source_files "$tmp/nowhere")
if [ "${#files[@]}" = 0 ]; then
	tap_ok "no /etc/apt at all: no files"
else
	tap_not_ok "no /etc/apt at all: no files" "got: ${files[*]}"
fi

tap_totals && [ "$tap_nr" = 19 ]
