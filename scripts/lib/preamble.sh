# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Copyright (C) 2026 The qtimer authors
#
# What make check, make check-long and make demo share around their VM
# runs, sourced with the name their messages start with:
#
#   top=$(cd "$(dirname "$0")/.." && pwd)
#   . "$top/scripts/lib/preamble.sh" check-long
#
#   note TEXT...          "NAME: TEXT" on stderr
#   need_root WHY         false unless root, noting WHY
#   setup_machine [STAGE] need_root, then scripts/setup.sh [STAGE]; either
#                         failing is fail_run's
#   fail_run [WHY]        the run fails before counting anything: notes
#                         WHY, prints "0 passed, 1 failed, 0 skipped" and
#                         exits 1
#   add_totals P F S      adds to total_passed, total_failed, total_skipped
#   print_totals          the last line of a run, "N passed, N failed, N
#                         skipped" of those; false on any failure
#   vm_run NAME ARGS...   scripts/vm/run.sh ARGS, its output on stderr and
#                         in $log_dir/NAME.log; prints the "P F S" of its
#                         vm-result line, nothing when it printed none
#
# $start is $SECONDS when this was sourced.  Bash reads a sourced file
# whole before running it, so editing this one does not upset the runs
# under way either.

preamble_name=${1:?source preamble.sh with the name of the run}
total_passed=0
total_failed=0
total_skipped=0
# shellcheck disable=SC2034 # for the scripts that source this
start=$SECONDS

note() { printf '%s: %s\n' "$preamble_name" "$*" >&2; }

need_root() {
	[ "$(id -u)" = 0 ] && return
	note "$1"
	return 1
}

fail_run() {
	[ $# = 0 ] || note "$@"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}

# shellcheck disable=SC2154 # $top: the caller's
setup_machine() {
	need_root "must run as root: scripts/setup.sh installs the build and test dependencies" || fail_run
	"$top/scripts/setup.sh" "$@" || fail_run "scripts/setup.sh${1:+ $1} failed"
}

add_totals() {
	total_passed=$((total_passed + $1))
	total_failed=$((total_failed + $2))
	total_skipped=$((total_skipped + $3))
}

print_totals() {
	echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
	[ "$total_failed" = 0 ]
}

# shellcheck disable=SC2154 # $top, $log_dir: the caller's
vm_run() {
	local log=$log_dir/$1.log
	shift
	"$top/scripts/vm/run.sh" "$@" 2>&1 | tee "$log" >&2
	sed -n 's/^vm-result: .* passed=\([0-9]*\) failed=\([0-9]*\) skipped=\([0-9]*\)$/\1 \2 \3/p' "$log" |
		tail -n 1
}
