# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# kselftest-style TAP for the project's shell checks, sourced:
#
#   . "$top/scripts/lib/tap.sh"
#   tap_plan 3
#   tap_ok "what held" ["detail, each line a TAP comment" ...]
#   tap_not_ok "what did not" ["detail, each line a TAP comment" ...]
#   tap_error "what could not be tried" ["detail" ...]   # not ok ... # ERROR
#   tap_skip "what was not tried" "why"
#   tap_diag "comment, each line a TAP comment" ...
#   tap_totals          # the "# Totals:" line check.sh sums; false on a
#                       # failure or an error
#   tap_exit            # tap_totals, then exit with its status
#
# The counters are tap_nr, tap_pass, tap_fail, tap_errors and tap_skipped.
#
#   tap_run NAME CMD... one test, passing when CMD succeeds; on a failure
#                       the command and what it printed are its detail
#   tap_scratch NAME    $scratch: a directory of its own, removed at exit
#                       unless KEEP=1 (then its path is printed)
#   tap_tail FILE [N]   the last N (25) lines of a log, for a not-ok detail
#   tap_keep_module DIR KERNEL KO
#                       KO copied to DIR/KERNEL/ (alone there) for a
#                       caller's VM to boot
#   tap_vm_module NAME KERNEL TAG KO SUITES
#                       one test: a VM of KERNEL boots with the prebuilt
#                       module KO (scripts/vm/run.sh --module, logs in
#                       build/vm/KERNEL/TAG/) and SUITES pass; the run's
#                       output as comments (its "# Totals:" lines are the
#                       VM's: this counts the run as one test)

tap_nr=0
tap_pass=0
tap_fail=0
tap_errors=0
tap_skipped=0

tap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

# tap_diag DETAIL...: each line of each DETAIL becomes a comment.
tap_diag() {
	local l
	for l in "$@"; do
		sed 's/^/# /' <<<"$l"
	done
}

# tap_result OK NAME [DETAIL...]: the next test's line, "OK N NAME" (OK
# being "ok" or "not ok"), then its DETAILs as tap_diag's comments.
tap_result() {
	tap_nr=$((tap_nr + 1))
	echo "$1 $tap_nr $2"
	shift 2
	tap_diag "$@"
}

# tap_ok, tap_not_ok and tap_error NAME [DETAIL...]; tap_error is a test
# that could not be carried out (kselftest's "error"), not one that failed:
# check.sh counts both as failures.
tap_ok() { tap_pass=$((tap_pass + 1)); tap_result ok "$@"; }
tap_not_ok() { tap_fail=$((tap_fail + 1)); tap_result "not ok" "$@"; }
tap_error() { tap_errors=$((tap_errors + 1)); tap_result "not ok" "$1 # ERROR" "${@:2}"; }
tap_skip() { tap_skipped=$((tap_skipped + 1)); tap_result ok "$1 # SKIP $2"; }

tap_totals() {
	echo "# Totals: pass:$tap_pass fail:$tap_fail xfail:0 xpass:0 skip:$tap_skipped error:$tap_errors"
	[ "$tap_fail" = 0 ] && [ "$tap_errors" = 0 ]
}

tap_exit() {
	tap_totals
	exit
}

# tap_check NAME CMD...: one test, passing when CMD... succeeds.  On a
# failure the files $tap_detail names (space-separated) are shown as
# comments: where the caller's checkers leave what they saw.
tap_check() {
	local name=$1
	shift
	if "$@"; then
		tap_ok "$name"
	else
		tap_not_ok "$name"
		# shellcheck disable=SC2086 # a list of files, split on purpose
		[ -z "${tap_detail:-}" ] || sed 's/^/# /' $tap_detail 2>/dev/null
	fi
}

tap_run() {
	# Named apart: CMD is often the caller's function, which reads the
	# caller's globals (deb-check.sh's $out).
	local tap_name=$1 tap_out
	shift
	if tap_out=$("$@" 2>&1); then
		tap_ok "$tap_name"
	else
		tap_not_ok "$tap_name" "command: $*" "${tap_out:-(no output)}"
	fi
}

tap_scratch() {
	scratch=$(mktemp -d "/tmp/qtimer-$1.XXXXXX") || exit 1
	trap tap_scratch_remove EXIT
}

tap_scratch_remove() {
	if [ "${KEEP:-0}" = 1 ]; then
		echo "# kept $scratch"
	else
		rm -rf "$scratch"
	fi
}

tap_tail() {
	tail -n "${2:-25}" "$1" 2>/dev/null
}

# tap_keep_module DIR KERNEL KO: KO as DIR/KERNEL/<its name>, alone there,
# for a caller that boots it (make check's VMs; DKMS_CHECK_MODULES and
# DEB_CHECK_MODULES).
tap_keep_module() {
	rm -rf "${1:?}/$2"
	mkdir -p "$1/$2"
	cp "$3" "$1/$2/"
}

tap_vm_module() {
	local name=$1 kernel=$2 tag=$3 ko=$4 suites=$5 log rc result run
	log=$scratch/vm-$tag.log
	run=("$top/scripts/vm/run.sh" "$kernel" --tag "$tag" --module "$ko" --suites "$suites")
	[ -z "${QTIMER_VM_LOCK:-}" ] || run=(flock "$QTIMER_VM_LOCK" "${run[@]}")
	"${run[@]}" >"$log" 2>&1
	rc=$?
	sed 's/^/#   /' "$log"
	result=$(grep '^vm-result: ' "$log" | tail -n 1)
	if [ "$rc" = 0 ] && grep -q ' failed=0 ' <<<"$result "; then
		tap_ok "$name: ${result#vm-result: }"
	else
		tap_not_ok "$name" "run.sh exited $rc: ${result:-no vm-result line}" \
			"logs: build/vm/$kernel/$tag/"
	fi
}
