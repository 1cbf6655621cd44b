#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR MIT
# Copyright (C) 2026 The qtimer authors
#
# The shared library exports exactly the symbols of the version script, each
# under the version node that names it, and carries the soname; and both are
# those of the released ABI in BASELINE (test/abi.baseline), so that a
# symbol dropped or moved from the map, or a soname changed, fails here
# until the baseline says so too.
# Usage: abi_check.sh LIB MAP BASELINE   (SONAME: the one the Makefile made)
set -eu
export LC_ALL=C

lib=$1
map=$2
baseline=$3
tmp=${O:-/tmp}/abi-check
mkdir -p "$tmp"

fail() { echo "abi-check: FAIL: $*" >&2; exit 1; }

# "symbol@@NODE" for every symbol the map's global sections name.
awk '/^[A-Z0-9_.]+ *\{/ { node = $1 }
     /global:/ { g = 1; next } /local:|\}/ { g = 0 }
     g && /^[ \t]*td_[a-z0-9_]+;/ { gsub(/[ \t;]/, ""); print $0 "@@" node }' \
	"$map" | sort > "$tmp/expected.versioned"
sed 's/@@.*//' "$tmp/expected.versioned" | sort > "$tmp/expected"
[ -s "$tmp/expected" ] || fail "no symbols found in $map"

# Defined dynamic symbols, each with the version node the map gives it.
nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' | sort > "$tmp/exported"
if ! diff -u "$tmp/expected.versioned" "$tmp/exported"; then
	fail "exported symbols or their versions differ from $map"
fi

# Every public function of the header is in the map, and nothing more: its
# names, and the symbols some of them are sent to (__asm__ labels).
hdr=$(dirname "$map")/include/timerdev.h
{ grep -oE '\btd_[a-z0-9_]+\(' "$hdr" | tr -d '('
  grep -oE '__asm__\("td_[a-z0-9_]+"\)' "$hdr" | sed 's/.*("\(.*\)")/\1/'; } |
	sort -u > "$tmp/declared"
if ! diff -u "$tmp/expected" "$tmp/declared"; then
	fail "functions declared in timerdev.h differ from $map"
fi

soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "${SONAME:?}" ] || fail "soname is '$soname', not '$SONAME'"

# The released ABI.
[ "$(sed -n 's/^soname //p' "$baseline")" = "$soname" ] ||
	fail "soname $soname is not the one of $baseline"
grep '^td_' "$baseline" | sort > "$tmp/baseline"
if ! diff -u "$tmp/baseline" "$tmp/exported"; then
	fail "exported symbols or their versions differ from $baseline"
fi

echo "abi-check: $(wc -l < "$tmp/expected") symbols, soname $soname: ok"
