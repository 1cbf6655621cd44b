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
# It also holds STYLE.md's one naming rule, that a function's prefix names
# the file that owns it, so that a reader who sees a call knows which file
# to open: every function a file of kmod/ defines that another file can
# call (not static in a .c; any in a .h, whose are static inline) is
# qt_<file>_... or qt_<file> itself, <file> its name without .c or .h; and
# a static function, which may have a short name, has no other file's
# prefix.  A name belongs to the longest file name it starts with, so that
# ring_settle.c's qt_ring_settle_all() is not ring.c's.  It proves that
# check can fail too, on misnamed functions planted into a copy.
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

# Functions the naming rule does not hold, as "file:function", and why:
#  compat.h defines hrtimer_setup() and vm_flags_set() for the kernels that
#  lack them, under mainline's names, so that the rest reads as mainline.
# Not definitions the check sees, so not listed: the trace_qtimer_*() that
# TRACE_EVENT() generates in trace.h, and main.c's module_init() and
# module_exit() entry points, which are static (qt_mod_init(), qt_mod_exit()).
name_exempt="compat.h:hrtimer_setup compat.h:vm_flags_set"

# Every function definition in @files, as "file line kind name", kind
# being static, inline (static inline) or extern.  Kernel style is what
# makes this simple: a definition starts at column 0 (the return type may
# have a line of its own) and its body opens with a "{" alone at column 0.
definitions() {
	awk '
	FNR == 1 { buf = ""; incomment = 0 }
	{
		# The line without its comments, which may span lines.
		line = $0; out = ""
		while (line != "") {
			if (incomment) {
				i = index(line, "*/")
				if (!i)
					break
				line = substr(line, i + 2); incomment = 0
				continue
			}
			i = index(line, "/*"); j = index(line, "//")
			if (j && (!i || j < i)) {
				out = out substr(line, 1, j - 1)
				break
			}
			if (!i) {
				out = out line
				break
			}
			out = out substr(line, 1, i - 1)
			line = substr(line, i + 2); incomment = 1
		}
		line = out
	}
	line ~ /^#/ { buf = ""; next }
	line ~ /^\{/ {
		if (buf != "" && match(buf, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
			name = substr(buf, RSTART, RLENGTH)
			sub(/[ \t]*\($/, "", name)
			kind = "extern"
			if (buf ~ /(^|[^A-Za-z0-9_])static([^A-Za-z0-9_]|$)/)
				kind = buf ~ /inline/ ? "inline" : "static"
			f = FILENAME; sub(/.*\//, "", f)
			print f, start, kind, name
		}
		buf = ""; next
	}
	line ~ /^[A-Za-z_]/ {
		if (buf == "")
			start = FNR
		buf = buf " " line
		if (line ~ /[;}][ \t]*$/)
			buf = ""
		next
	}
	line ~ /^[ \t]/ && buf != "" {
		buf = buf " " line
		if (line ~ /;[ \t]*$/)
			buf = ""
		next
	}
	{ buf = "" }
	' "$@"
}

# What breaks the naming rule in @kmod, a line each; nothing when right.
misnamed() {
	local kmod=$1 stems
	stems=$(for f in "$kmod"/*.c "$kmod"/*.h; do
		f=${f##*/}
		echo "${f%.[ch]}"
	done | sort -u)
	definitions "$kmod"/*.c "$kmod"/*.h |
	awk -v stems="$stems" -v exempt="$name_exempt" '
	BEGIN {
		nstems = split(stems, stem)
		n = split(exempt, ex)
		for (i = 1; i <= n; i++)
			exempted[ex[i]] = 1
	}
	# The file a name says it belongs to: the longest that fits.
	function owner(name,	n, i, best) {
		n = name
		sub(/^_+/, "", n)
		best = ""
		for (i = 1; i <= nstems; i++)
			if ((n == "qt_" stem[i] || index(n, "qt_" stem[i] "_") == 1) &&
			    length(stem[i]) > length(best))
				best = stem[i]
		return best
	}
	{
		file = $1; line = $2; kind = $3; name = $4
		if (exempted[file ":" name])
			next
		own = file
		sub(/\.[ch]$/, "", own)
		is = owner(name)
		if (file ~ /\.h$/ || kind == "extern") {
			if (is != own)
				printf "%s:%s: %s() is not qt_%s_*\n", file, line, name, own
		} else if (is != "" && is != own) {
			printf "%s:%s: static %s() has %s'"'"'s prefix\n", file, line, name, is
		}
	}'
}

kmod=${1:-$top/kmod}
rst=${2:-$top/Documentation/design.rst}

tap_plan 5

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
rm "$tmp/kmod/planted.c"

out=$(misnamed "$kmod")
if [ -z "$out" ]; then
	tap_ok "every function kmod/ shares is named qt_<file>_, after its file"
else
	sed 's/^/# /' <<<"$out"
	tap_not_ok "every function kmod/ shares is named qt_<file>_, after its file"
fi

# Into the lowest .c, a function another file can call under the highest
# header's prefix; into the lowest header, an inline with no prefix.
lowc=$(layers "$rst" | grep '\.c ' | sort -k2,2n | head -n1 | cut -d' ' -f1)
lowh=$(layers "$rst" | grep '\.h ' | sort -k2,2n | head -n1 | cut -d' ' -f1)
other=${high%.h}
printf '\nint qt_%s_planted(void)\n{\n\treturn 0;\n}\n' "$other" >>"$tmp/kmod/$lowc"
printf '\nstatic inline int planted(void)\n{\n\treturn 0;\n}\n' >>"$tmp/kmod/$lowh"
out=$(misnamed "$tmp/kmod")
if grep -q "^$lowc:[0-9]*: qt_${other}_planted() is not qt_${lowc%.c}_\*$" <<<"$out" &&
   grep -q "^$lowh:[0-9]*: planted() is not qt_${lowh%.h}_\*$" <<<"$out"; then
	tap_ok "misnamed functions planted into $lowc and $lowh are caught"
else
	tap_not_ok "misnamed functions planted into $lowc and $lowh are caught" "$out"
fi

tap_totals
