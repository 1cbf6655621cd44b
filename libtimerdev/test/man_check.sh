#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR MIT
# Copyright (C) 2026 The qtimer authors
#
# Every man page renders without a single groff warning, every .so link
# points at an existing page, every page says "Link with -ltimerdev" and
# leaves its footer's version to make install, and every public function
# has a page.
# Usage: man_check.sh PAGE...   (MAN_OUT: scratch directory)
set -eu

out=${MAN_OUT:-/tmp/man-check}
fail() { echo "man-check: FAIL: $*" >&2; exit 1; }

# Lay the pages out as they are installed, so that ".so man3/x.3" resolves.
rm -rf "$out"
mkdir -p "$out/man3" "$out/man7"
for page in "$@"; do
	cp "$page" "$out/man${page##*.}/"
done

cd "$out"
nr=0
for page in man3/* man7/*; do
	target=$(sed -n 's/^\.so //p' "$page")
	if [ -n "$target" ]; then
		[ -f "$target" ] || fail "$page: .so target $target is missing"
	else
		for section in NAME SYNOPSIS DESCRIPTION; do
			grep -q "^\.SH $section" "$page" || fail "$page: no $section section"
		done
		case $page in
		man3/*)
			for section in "RETURN VALUE" ERRORS "SEE ALSO"; do
				grep -q "^\.SH \"*$section" "$page" ||
					fail "$page: no $section section"
			done
			;;
		esac
		# The footer's version is filled in by make install, from
		# timerdev.h: a number written here would be said twice.
		grep -q '^\.TH [^ ]* [37] [^ ]* "libtimerdev @VERSION@" ' "$page" ||
			fail "$page: .TH must say \"libtimerdev @VERSION@\""
		# Every page says how to link, as man-pages(7) asks.
		grep -q '^Link with$' "$page" && grep -q '^\.IR \\-ltimerdev' "$page" ||
			fail "$page: no \"Link with -ltimerdev\" line"
	fi
	warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
	[ -z "$warnings" ] || fail "$page: groff: $warnings"
	if command -v man > /dev/null; then
		warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 > /dev/null)
		[ -z "$warnings" ] || fail "$page: man: $warnings"
	fi
	nr=$((nr + 1))
done

# One page (or .so link) per exported function.
map=$(dirname "$0")/../libtimerdev.map
for fn in $(sed -n 's/^[[:space:]]*\(td_[a-z_]*\);$/\1/p' "$map"); do
	[ -f "man3/$fn.3" ] || fail "no man page for $fn"
done
echo "man-check: $nr pages render cleanly"
