#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The layers of kmod/ are Documentation/design.rst's "Layout" table: a file
# may include only headers of its own layer or below.  This reads that
# table and every #include "..." of kmod/, and fails on:
#
#   - a file of kmod/ (not Kbuild) the table does not list, or a file the
#     table lists that kmod/ does not have: the map is the tree;
#   - an include that points up a layer, or at a header the table lacks.
#
# Then it proves it can fail: on a copy of kmod/ with an upward include
# planted into the lowest file, and with a file the table does not list.
#
#   scripts/check-layers.sh [KMOD_DIR [DESIGN_RST]]
#
# Prints kselftest TAP ending with a "# Totals:" line; exits non-zero on a
# failure.

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/tap.sh
. "$top/scripts/lib/tap.sh"

# "file layer" for each file of the table, {c,h} spelt out.
layers() {
	awk '/^===== /	{ rule++; next }
	     rule == 2 && /^[0-9]+ +``/ {
		f = $2; gsub(/`/, "", f)
		if (sub(/\.\{c,h\}$/, "", f)) { print f ".c", $1; print f ".h", $1 }
		else print f, $1
	     }' "$1"
}

# What is wrong with @kmod against @rst, a line each; nothing when right.
problems() {
	local kmod=$1 rst=$2 table f b lf inc li
	table=$(layers "$rst")
	if [ -z "$table" ]; then
		echo "no layer table in $rst"
		return
	fi
	while read -r f _; do
		[ -e "$kmod/$f" ] || echo "$f: in the table, not in kmod/"
	done <<<"$table"
	for f in "$kmod"/*.c "$kmod"/*.h; do
		b=${f##*/}
		lf=$(awk -v f="$b" '$1 == f { print $2 }' <<<"$table")
		if [ -z "$lf" ]; then
			echo "$b: not in the table"
			continue
		fi
		for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
			li=$(awk -v f="$inc" '$1 == f { print $2 }' <<<"$table")
			if [ -z "$li" ]; then
				echo "$b includes $inc, which the table lacks"
			elif [ "$li" -gt "$lf" ]; then
				echo "$b (layer $lf) includes $inc (layer $li)"
			fi
		done
	done
}

kmod=${1:-$top/kmod}
rst=${2:-$top/Documentation/design.rst}

tap_plan 3

out=$(problems "$kmod" "$rst")
if [ -z "$out" ]; then
	tap_ok "kmod/ includes point down only, and design.rst's map is the tree"
else
	sed 's/^/# /' <<<"$out"
	tap_not_ok "kmod/ includes point down only, and design.rst's map is the tree"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$kmod" "$tmp/kmod"
# The lowest file of the table includes the highest header.
low=$(layers "$rst" | sort -k2,2n | head -n1 | cut -d' ' -f1)
high=$(layers "$rst" | grep '\.h ' | sort -k2,2n | tail -n1 | cut -d' ' -f1)
printf '#include "%s"\n' "$high" >>"$tmp/kmod/$low"
# (Whole outputs, not pipes into grep -q: pipefail would count its
# early exit as a failure of problems().)
out=$(problems "$tmp/kmod" "$rst")
if grep -q "^$low (layer [0-9]*) includes $high " <<<"$out"; then
	tap_ok "a planted include of $high into $low is caught"
else
	tap_not_ok "a planted include of $high into $low is caught"
fi
cp "$kmod/$low" "$tmp/kmod/$low"
echo '/* unlisted */' >"$tmp/kmod/planted.c"
out=$(problems "$tmp/kmod" "$rst")
if grep -q '^planted.c: not in the table' <<<"$out"; then
	tap_ok "a file design.rst does not list is caught"
else
	tap_not_ok "a file design.rst does not list is caught"
fi

tap_totals
