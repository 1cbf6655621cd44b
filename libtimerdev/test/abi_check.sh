#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR MIT
# Copyright (C) 2026 The qtimer authors
#
# The shared library exports exactly the symbols of the version script, all
# under LIBTIMERDEV_1.0, and carries the soname.  Usage: abi_check.sh LIB MAP
set -eu

lib=$1
map=$2
tmp=${O:-/tmp}/abi-check
mkdir -p "$tmp"

fail() { echo "abi-check: FAIL: $*" >&2; exit 1; }

# Symbols named in the map's global section.
sed -n '/global:/,/local:/p' "$map" | tr -d ' \t;' |
	grep -E '^td_[a-z_]+$' | sort > "$tmp/expected"
[ -s "$tmp/expected" ] || fail "no symbols found in $map"

# Defined dynamic symbols, each must carry the version.
nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' | sort > "$tmp/exported"
if grep -v '@@LIBTIMERDEV_1.0$' "$tmp/exported"; then
	fail "symbols above are not versioned LIBTIMERDEV_1.0"
fi
sed 's/@@LIBTIMERDEV_1.0$//' "$tmp/exported" > "$tmp/exported.names"
if ! diff -u "$tmp/expected" "$tmp/exported.names"; then
	fail "exported symbols differ from $map"
fi

# Every public function of the header is in the map, and nothing more.
hdr=$(dirname "$map")/include/timerdev.h
grep -oE '\btd_[a-z_]+\(' "$hdr" | tr -d '(' | sort -u > "$tmp/declared"
if ! diff -u "$tmp/expected" "$tmp/declared"; then
	fail "functions declared in timerdev.h differ from $map"
fi

soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "${SONAME:-libtimerdev.so.1}" ] || fail "soname is '$soname'"

echo "abi-check: $(wc -l < "$tmp/expected") symbols, soname $soname: ok"
