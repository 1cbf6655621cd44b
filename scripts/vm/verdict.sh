# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154  # name and the counts come from the sourcing script
#
# Copyright (C) 2026 The qtimer authors
#
# Sourced by run.sh and judge.sh, which decide a VM run's verdict between
# them (run.sh until the VM is gone, then judge.sh, which it execs): the
# vm-result line that every way out prints, and the list of reasons.
# Both set $name and the counts (failed, passed, skipped) first.

say() { printf 'vm: %s: %s\n' "$name" "$*" >&2; }

# From here on every way out prints the vm-result line.
result_printed=0
finish() {
	local rc=$?
	if [ "$result_printed" = 0 ]; then
		for p in "${problems[@]}"; do say "FAIL: $p"; done
		[ "$failed" -gt 0 ] || failed=1
		echo "vm-result: $name passed=$passed failed=$failed skipped=$skipped"
	fi
	[ "$rc" != 0 ] || [ "$failed" = 0 ] || rc=1
	exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM
# The verdict's reasons, printed at the end; problem_n counts N failures.
problem() { problems+=("$*"); failed=$((failed + 1)); }
problem_n() { problems+=("${*:2}"); failed=$((failed + $1)); }
