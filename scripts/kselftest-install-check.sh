#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Checks the kselftest tree "make -C selftests install INSTALL_PATH=..."
# makes, natively: the kernel's runner (run_kselftest.sh, executable, and
# each file it sources, the same bytes as in the kernel source), a
# kselftest-list.txt naming every suite of selftests/suites.manifest in the
# qtimer collection with its executable there, the collection's settings
# with a timeout and its config fragment; that the runner itself lists
# the suites and, dry, would run them; and that the tree stands alone: the
# programs the suites run are in it, and every ELF file in it, in a copy
# elsewhere and with no environment, finds each shared library inside the
# tree or is left with glibc's and libgcc_s.  Prints kselftest TAP ending with a
# "# Totals:" line; exits non-zero on a failure.
#
#   scripts/kselftest-install-check.sh          install into a scratch dir
#                                               and check that
#   scripts/kselftest-install-check.sh TREE     check TREE, an install made
#                                               before (to show the check
#                                               fails a broken one)
#
# KSFT_PAYLOAD (make's, default build/kselftest) is where the install
# builds the suites; check.sh hands it the payload it built already.
# KEEP=1 keeps the scratch directory.

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
ksft=${KSFT_DIR:-$top/build/src/linux-source-6.1/tools/testing/selftests}
collection=qtimer
scratch=$(mktemp -d /tmp/qtimer-kselftest-check.XXXXXX)
cleanup() {
	if [ "${KEEP:-0}" = 1 ]; then echo "# kept $scratch"; else rm -rf "$scratch"; fi
}
trap cleanup EXIT

# shellcheck source=lib/tap.sh
. "$top/scripts/lib/tap.sh"
# shellcheck source=../selftests/kselftest-host-libs.sh
. "$top/selftests/kselftest-host-libs.sh"
# check NAME CMD...: one test, passing when CMD succeeds and prints
# nothing; what it prints is the reason it failed.
check() {
	local name=$1 out
	shift
	out=$("$@" 2>&1)
	if [ $? = 0 ] && [ -z "$out" ]; then tap_ok "$name"; else tap_not_ok "$name" "${out:-$* failed}"; fi
}

tap_plan 9

if [ $# = 1 ]; then
	tree=$1
	tap_ok "checking the tree $tree"
else
	tree=$scratch/kselftest
	if make -C "$top/selftests" --no-print-directory install INSTALL_PATH="$tree" \
		>"$scratch/install.log" 2>&1; then
		tap_ok "make -C selftests install INSTALL_PATH=$tree"
	else
		tap_not_ok "make -C selftests install INSTALL_PATH=$tree" "$(tail -n 30 "$scratch/install.log")"
	fi
fi

# The runner is the kernel's own, whole: run_kselftest.sh and every file it
# and runner.sh source, byte for byte as in the kernel source.
runner_is_the_kernels() {
	local f
	[ -x "$tree/run_kselftest.sh" ] || echo "run_kselftest.sh is missing or not executable"
	for f in $({ printf '%s\n' run_kselftest.sh kselftest/runner.sh
		    sed -n 's|^\. *\./||p' "$tree/run_kselftest.sh" "$tree/kselftest/runner.sh" 2>/dev/null; } |
		  sort -u); do
		cmp -s "$tree/$f" "$ksft/$f" || echo "$f: missing, or not the kernel's ($ksft/$f)"
	done
}
check "run_kselftest.sh, executable, and what it sources are the kernel's" runner_is_the_kernels

# Every suite of the manifest, in the qtimer collection, with its binary.
list_names_every_suite() {
	local s all
	[ -r "$tree/kselftest-list.txt" ] || { echo "no kselftest-list.txt"; return; }
	all=$("$top/scripts/vm/suites.sh" all) || { echo "selftests/suites.manifest is malformed"; return; }
	for s in $all; do
		grep -qxF "$collection:$s" "$tree/kselftest-list.txt" ||
			echo "kselftest-list.txt does not list $collection:$s"
		[ -f "$tree/$collection/$s" ] && [ -x "$tree/$collection/$s" ] ||
			echo "$collection/$s: missing or not executable"
	done
}
check "kselftest-list.txt lists every suite of the manifest as $collection:<suite>, each installed" \
	list_names_every_suite

settings_has_timeout() {
	grep -Eqx 'timeout=[1-9][0-9]*' "$tree/$collection/settings" 2>/dev/null ||
		echo "$collection/settings is missing or has no timeout=<seconds> line"
}
check "$collection/settings sets the suites' timeout" settings_has_timeout

# A merge_config.sh fragment: CONFIG_ lines and comments, and at least the
# options without which whole suites cannot run.
config_is_a_fragment() {
	local c opt
	c=$tree/$collection/config
	[ -s "$c" ] || { echo "$collection/config is missing or empty"; return; }
	grep -Evx '#.*|CONFIG_[A-Z0-9_]+=.+|' "$c" | sed 's/^/not a config line: /'
	for opt in HIGH_RES_TIMERS TIME_NS HOTPLUG_CPU FTRACE FAULT_INJECTION USERFAULTFD; do
		grep -qx "CONFIG_$opt=y" "$c" || echo "$collection/config does not set CONFIG_$opt=y"
	done
}
check "$collection/config is a config fragment naming the options the suites need" config_is_a_fragment

# The runner itself: what it would run is what the list says.
runner_lists() {
	local out
	out=$(cd / && sh "$tree/run_kselftest.sh" --list 2>&1) || { echo "run_kselftest.sh --list failed: $out"; return; }
	[ "$out" = "$(cat "$tree/kselftest-list.txt")" ] ||
		echo "run_kselftest.sh --list does not print kselftest-list.txt: $out"
}
check "run_kselftest.sh --list prints the list" runner_lists

runner_dry_run() {
	local out want
	out=$(cd / && sh "$tree/run_kselftest.sh" --dry-run --collection "$collection" 2>&1) ||
		{ echo "run_kselftest.sh --dry-run failed: $out"; return; }
	want=$(sed -n "s/^$collection://p" "$tree/kselftest-list.txt" | paste -sd' ' -)
	grep -qxF "run_many $want" <<<"$out" ||
		echo "run_kselftest.sh --dry-run -c $collection does not run the list's suites: $out"
}
check "run_kselftest.sh --dry-run -c $collection would run every listed suite" runner_dry_run

# A kernel CI runs the tree from wherever it unpacked it.
moved_tree_runs() {
	cp -a "$tree" "$scratch/moved" || return
	(cd / && sh "$scratch/moved/run_kselftest.sh" --list) | cmp -s - "$tree/kselftest-list.txt" ||
		echo "a copy of the tree elsewhere does not list the same suites"
}
check "the tree works from another directory" moved_tree_runs

# What a kernel CI host has of ours is the module: the suites' programs and
# every library beyond glibc's come with the tree (kselftest-install.sh),
# found through RUNPATHs relative to each file, so the moved copy and an
# empty environment must do.
stands_alone() {
	local t=$scratch/moved/$collection f lib magic
	for f in bin/qtimerctl bin/hello lib/ynl/bin/python3; do
		[ -x "$t/$f" ] || echo "$collection/$f: not bundled"
	done
	while IFS= read -r -d '' f; do
		magic=
		IFS= read -r -n 4 magic <"$f" 2>/dev/null
		[ "$magic" = $'\x7fELF' ] || continue
		readelf -d "$f" 2>/dev/null | grep '(NEEDED)' >/dev/null || continue
		while read -r lib; do
			case "$lib" in
			"not found") echo "${f#"$t"/}: a library is not found: $(env -i ldd "$f" | grep 'not found')" ;;
			"$scratch/moved/"*) ;;
			*) ksft_from_host "$lib" ||
				echo "${f#"$t"/}: $lib comes from the host, not the tree" ;;
			esac
		done < <(env -i ldd "$f" 2>/dev/null | awk '/=> not found/ { print "not found"; next } /=> \// { print $3 }')
	done < <(find "$t" -type f \( -perm -u+x -o -name '*.so' -o -name '*.so.*' \) -print0)
}
check "the tree stands alone: its programs are in it, every library is in it or glibc's" stands_alone

tap_totals
