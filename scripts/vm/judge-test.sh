#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Proves scripts/vm/judge.sh, the verdict on a test VM's logs, natively and
# in seconds: it passes a clean run and fails each kind of run it exists to
# fail, naming why.  The samples are in scripts/vm/testdata/: clean/ is a
# clean run of two suites (result.log, console.log, qemu.log), splats one
# kernel message per class of splat; each case here copies clean/ and
# changes what it is about (a splat after the module's load, a taint bit, a
# failed, crashed or missing suite, a missing record, QEMU's exit status),
# and the cases that must pass keep the judge honest the other way.  Prints
# kselftest TAP; make check runs it as a native check.
#
#   judge-test.sh [JUDGE]
#
# JUDGE (default scripts/vm/judge.sh) is the judge under test, so that a
# deliberately broken copy can show this test fails; it finds
# scripts/vm/suites.sh relative to itself, as judge.sh does.

set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
judge=${1:-$top/scripts/vm/judge.sh}
data=$top/scripts/vm/testdata
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=../lib/tap.sh
. "$top/scripts/lib/tap.sh"
# tap_check NAME CHECK...: a failure shows what the checker said.
tap_detail="$tmp/out $tmp/err"

# sample NAME: a fresh copy of the clean run, in $run, for one case.
sample() {
	run=$tmp/$1
	rm -rf "$run"
	cp -r "$data/clean" "$run"
}
# Edits of the sample: a console line after the module's load or before
# the init's boot record; sed expressions on result.log.
console_edit() {
	awk -v line="$2" "$1" "$run/console.log" >"$run/console.new" &&
		mv "$run/console.new" "$run/console.log"
}
after_load() { console_edit '{ print } /qtimer-vm: insmod ok/ { print line }' "$1"; }
before_boot() { console_edit '/qtimer-vm: boot / { print line } { print }' "$1"; }
results() { sed -i "$@" "$run/result.log"; }

# The judge on $run as run.sh would call it for the clean run; options
# given later override these.  Its stdout goes to $tmp/out, its stderr to
# $tmp/err, and its exit status to $rc.
judge() {
	"$judge" --kernel stock-6.1 --accel tcg --qemu-status 33 \
		--suites qtimer_basic_test,rig_test --expect 'qtimer_basic_test rig_test' \
		"$@" "$run" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
vm_result() { tail -n 1 "$tmp/out"; }
fail_lines() { grep '^vm: [^ ]*: FAIL: ' "$tmp/err"; }

# The checks.  passes [OPTS...]: exit 0, no failure counted, none named.
passes() {
	judge "$@"
	[ "$rc" = 0 ] && [[ $(vm_result) == "vm-result: "*" failed=0 "* ]] && ! fail_lines >/dev/null
}
# counts WANT [OPTS...]: the vm-result line is "vm-result: stock-6.1 WANT",
# and the exit status says whether WANT has a failure.
counts() {
	local want=$1
	shift
	judge "$@"
	[ "$(vm_result)" = "vm-result: stock-6.1 $want" ] || return 1
	if [[ $want == *" failed=0 "* ]]; then [ "$rc" = 0 ]; else [ "$rc" != 0 ]; fi
}
# fails_naming TEXT [OPTS...]: a non-zero exit, failures counted, and a
# FAIL line that contains TEXT.
fails_naming() {
	local text=$1
	shift
	judge "$@"
	[ "$rc" != 0 ] && [[ $(vm_result) != *" failed=0 "* ]] && fail_lines | grep -qF -- "$text"
}
# splat_named WORD [OPTS...]: fails, naming WORD among the kinds of splat.
splat_named() {
	local word=$1
	shift
	fails_naming 'kernel splat on the console: ' "$@" &&
		fail_lines | grep -F 'kernel splat on the console: ' | grep -qF -- "$word"
}
# fail_lines_are TEXT: the last judge named exactly one failure, TEXT.
fail_lines_are() { [ "$(fail_lines | sed 's/^vm: [^ ]*: FAIL: //')" = "$1" ]; }
# shown KERNEL-MESSAGE [OPTS...]: passes, and the message is shown as not
# counted.
shown() {
	local text=$1
	shift
	passes "$@" && grep -F 'shown, not counted: ' "$tmp/err" | grep -qF -- "$text"
}

echo "TAP version 13"

# --- A clean run ------------------------------------------------------------
sample clean
tap_check "a clean run passes, counting its suites' passes and skips" \
	counts 'passed=4 failed=0 skipped=1'

# --- Splats -----------------------------------------------------------------
# Each class fails the run, and the failure names it among the kinds seen.
while IFS=$'\t' read -r word line; do
	case "$word" in '#'* | '') continue ;; esac
	sample splat
	after_load "$line"
	tap_check "a splat fails the run: $word" splat_named "$word"
done <"$data/splats"

sample glued
sed -i 's/^# ok 2 global.open_close$/&[    5.101234] WARNING: CPU: 1 PID: 187 at kmod\/ctx.c:456 qt_ctx_release+0x12\/0x34 [qtimer]/' \
	"$run/console.log"
tap_check "a kernel message glued to a line of test output still counts" \
	fails_naming "kernel splat on the console: WARNING:"

sample test-output
sed -i 's/^# #            OK  global.open_close$/# # WARNING: BUG: KASAN: the test only says so\n&/' "$run/console.log"
tap_check "a test's own output naming a splat (no printk timestamp) does not count" passes

sample kmemleak-count
after_load '[    9.201234] kmemleak: 3 new suspected memory leaks (see /sys/kernel/debug/kmemleak)'
tap_check "kmemleak's own count of boot-time suspects is shown, not counted" \
	shown 'kmemleak: 3 new suspected memory leaks'

# --- "hrtimer: interrupt took" ------------------------------------------------
sample hang-before-load
before_boot '[    2.101234] hrtimer: interrupt took 153012 ns'
tap_check "a hang message before the module's load is shown, not counted" \
	shown 'hrtimer: interrupt took 153012 ns'

sample hang-long
after_load '[    5.101234] hrtimer: interrupt took 6012345 ns'
tap_check "a hang message of 2 ms or more under TCG is shown, not counted" \
	shown 'hrtimer: interrupt took 6012345 ns'
tap_check "a hang message of 2 ms or more under KVM counts" \
	fails_naming 'kernel splat on the console: hrtimer: interrupt took' --accel kvm

sample hang-debug
after_load '[    5.101234] hrtimer: interrupt took 153012 ns'
tap_check "any hang message on debug-6.1 under TCG is shown, not counted" \
	shown 'hrtimer: interrupt took 153012 ns' --kernel debug-6.1
tap_check "a hang message on debug-6.1 under KVM counts" \
	fails_naming 'hrtimer: interrupt took' --kernel debug-6.1 --accel kvm
QTIMER_TCG_STALL_NS=100000 \
	tap_check "QTIMER_TCG_STALL_NS lowers the bound of a descheduled vCPU" \
	shown 'hrtimer: interrupt took 153012 ns'

# --- Taint --------------------------------------------------------------------
for t in '12416:D(died)' '12800:W(warning)' '28672:L(soft lockup)'; do
	sample taint
	results "s/^qtimer-vm: tainted .*/qtimer-vm: tainted ${t%%:*}/"
	tap_check "taint ${t#*:} fails the run" fails_naming "kernel tainted ${t%%:*}: ${t#*:}"
done

# --- Suites -------------------------------------------------------------------
# The suites ran through the kernel's kselftest runner: rig_test is the
# block from its header to its result line.
rig_block='/^| # selftests: qtimer: rig_test$/,/^| ok 2 selftests: qtimer: rig_test$/'
rig_result='^| ok 2 selftests: qtimer: rig_test$'
tap_check "a suite's time is the init's record after its result line" \
	grep -qE '^vm: stock-6.1: rig_test: .*\(0\.262s\) exit=0$' "$tmp/err"

sample failed-suite
results -e 's/^| # ok 2 global.open_close$/| # # open_close: Expected 0 (0) == fd (-1)\n| # not ok 2 global.open_close/' \
	-e "$rig_block"'s/^\(| # # Totals: pass:\)2 fail:0/\11 fail:1/' \
	-e "$rig_block"'s/^| # # PASSED: 2 \/ 2 tests passed\.$/| # # FAILED: 1 \/ 2 tests passed./' \
	-e "s/$rig_result/| not ok 2 selftests: qtimer: rig_test # exit=1/"
tap_check "a failed test fails the run and counts once" counts 'passed=3 failed=1 skipped=1'
tap_check "a failed suite's failures are shown" grep -qx '    not ok 2 global.open_close' "$tmp/err"

sample exit-no-failure
results "s/$rig_result/| not ok 2 selftests: qtimer: rig_test # exit=1/"
tap_check "a suite that exits 1 with no failed test fails the run" \
	fails_naming 'rig_test: exit=1 with no failed test'

for end in 'exit=139:signal=11' 'TIMEOUT 300 seconds:timeout=300'; do
	sample "suite-${end#*:}"
	results -e "$rig_block"'{/^| # # Totals/d}' \
		-e "s/$rig_result/| not ok 2 selftests: qtimer: rig_test # ${end%%:*}/"
	tap_check "a suite the runner reports as '${end%%:*}' fails the run as ${end#*:}" \
		fails_naming "rig_test: ${end#*:}"
done

sample no-file
results -e "$rig_block"'{/^| # [^s]/d}' \
	-e "s/$rig_result/| # Warning: file rig_test is missing!\n| not ok 2 selftests: qtimer: rig_test/"
tap_check "a suite the runner found no file of fails the run" \
	fails_naming 'rig_test: the runner found no such file'

sample unfinished
results "/$rig_result/,\$d"
tap_check "a suite that never ends fails the run" fails_naming 'rig_test: unfinished'
tap_check "... and so does the runner that never ended" fails_naming 'run_kselftest.sh never ended'

sample runner-bound
results -e "/$rig_result/,/^qtimer-vm: took /d" \
	-e 's/^qtimer-vm: end run_kselftest.sh .*/qtimer-vm: end run_kselftest.sh timeout=640 secs=640.002/'
tap_check "a runner the init stopped fails the run, naming the suite it was in" \
	fails_naming 'rig_test: unfinished'
tap_check "... and the runner's end" fails_naming 'run_kselftest.sh: timeout=640'

sample faked
results 's/^| # # Totals: pass:2 fail:0 xfail:0 xpass:0 skip:1 error:0$/&\n| # # selftests: qtimer: qtimer_cancel_test\n| # ok 3 selftests: qtimer: qtimer_cancel_test/'
tap_check "a suite's own output cannot start or pass another suite" \
	fails_naming 'expected but never started (see console.log): qtimer_cancel_test' \
	--expect 'qtimer_basic_test rig_test qtimer_cancel_test'
tap_check "... nor change the counts" counts 'passed=4 failed=1 skipped=1' \
	--expect 'qtimer_basic_test rig_test qtimer_cancel_test'

sample no-totals
results "$rig_block"'{/^| # # Totals/d}'
tap_check "a suite that exits 0 without a Totals line fails the run" \
	fails_naming "rig_test printed no '# Totals:' line"

sample skipped-whole
results -e "$rig_block"'{/^| # [^s]/d}' -e "s/$rig_result/& # SKIP/"
tap_check "a suite that skips itself whole passes, as one skip" counts 'passed=2 failed=0 skipped=2'

sample missing-suite
tap_check "an expected suite that never started fails the run, named" \
	fails_naming 'expected but never started (see console.log): qtimer_cancel_test' \
	--expect 'qtimer_basic_test rig_test qtimer_cancel_test'
unbuilt_problem='selftests/suites.manifest lists, but the payload has no binary of: qtimer_cancel_test'
tap_check "a suite judged unbuilt before the boot fails once, as handed over" \
	counts 'passed=4 failed=1 skipped=1' --expect 'qtimer_basic_test rig_test qtimer_cancel_test' \
	--unbuilt qtimer_cancel_test --failed 1 --problem "$unbuilt_problem"
tap_check "... and its reason is the one handed over" fail_lines_are "$unbuilt_problem"

sample no-match
results '/^qtimer-vm: start /,/^qtimer-vm: end /d; s/^qtimer-vm: module text .*/&\nqtimer-vm: no suite matches/'
tap_check "a selection that matched no suite fails the run" \
	fails_naming "no suite matches 'qtimer_basic_test,rig_test'" --expect ''

# --- The init's records ---------------------------------------------------------
sample insmod-failed
results -e '/^qtimer-vm: start /,/^qtimer-vm: end /d' -e '/^qtimer-vm: module text/d' \
	-e '/^qtimer-vm: rmmod/d' -e 's/^qtimer-vm: insmod ok/qtimer-vm: insmod failed File exists/' \
	-e 's/^qtimer-vm: verdict pass/qtimer-vm: verdict fail/'
tap_check "a failed insmod fails the run" fails_naming 'insmod failed File exists' --qemu-status 35 --expect ''

sample no-rmmod
results '/^qtimer-vm: rmmod ok/d'
tap_check "a missing rmmod fails the run" fails_naming 'rmmod never happened'
sample rmmod-failed
results 's/^qtimer-vm: rmmod ok/qtimer-vm: rmmod failed Resource temporarily unavailable/'
tap_check "a failed rmmod fails the run" fails_naming 'rmmod failed Resource temporarily unavailable'

sample kmemleak
results 's/^qtimer-vm: kmemleak suspects=0/qtimer-vm: kmemleak suspects=2/'
tap_check "a kmemleak suspect fails the run" fails_naming 'kmemleak: 2 suspected leak(s)'

sample rig
results 's/^qtimer-vm: module text .*/&\nqtimer-vm: rig-warn insmod ok\nqtimer-vm: rig-warn rmmod ok/'
tap_check "--rig-warn with qtimer_rig.ko loaded passes (its splats are judged as any)" passes --rig-warn
tap_check "qtimer_rig.ko loaded without --rig-warn fails the run" \
	fails_naming 'the init loaded qtimer_rig.ko without --rig-warn'
sample rig-missing
tap_check "--rig-warn without qtimer_rig.ko loaded fails the run" \
	fails_naming '--rig-warn: insmod qtimer_rig.ko never happened' --rig-warn

# --- Verdict and QEMU's exit ------------------------------------------------------
sample no-verdict
results '/^qtimer-vm: verdict /d'
tap_check "a missing verdict fails the run" \
	fails_naming 'no verdict from the guest (crash or hang; see console.log)' --qemu-status 124 --vm-timeout 900
tap_check "a host timeout fails the run" fails_naming 'VM killed after 900s (host timeout)' \
	--qemu-status 124 --vm-timeout 900

sample verdict-fail
results 's/^qtimer-vm: verdict pass/qtimer-vm: verdict fail/'
tap_check "the guest's fail verdict fails a run with nothing else wrong" \
	fails_naming "the guest's verdict is fail" --qemu-status 35
tap_check "QEMU's pass status against a fail verdict fails the run" \
	fails_naming "QEMU exit status 33 (pass) but verdict 'fail'"
sample verdict-pass
tap_check "QEMU's fail status against a pass verdict fails the run" \
	fails_naming 'verdict pass but QEMU exit status 35 (fail)' --qemu-status 35
tap_check "a VM run.sh stopped early fails the run" \
	fails_naming 'VM stopped early: wedged' --qemu-status 143 --stopped-early wedged
echo 'qemu-system-x86_64: Could not access KVM kernel module: No such file or directory' >"$run/qemu.log"
tap_check "QEMU's own failure fails the run" fails_naming 'QEMU exited with status 1 (see qemu.log)' --qemu-status 1
tap_check "... and shows qemu.log" grep -qF 'Could not access KVM kernel module' "$tmp/err"
tap_check "QEMU exiting 0 without a reset record fails the run" \
	fails_naming 'QEMU exited with status 0' --qemu-status 0
sample reset
results 's/^qtimer-vm: verdict pass/&\nqtimer-vm: exit by reset/'
tap_check "a VM the init ended by a reset passes on its verdict" passes --qemu-status 0

sample no-result
rm "$run/result.log"
tap_check "a run without result.log fails, still with a vm-result line" \
	counts 'passed=0 failed=1 skipped=0'

# --- --run ------------------------------------------------------------------------
sample run
results -e '/^qtimer-vm: start /,/^qtimer-vm: end /d' \
	-e 's/^qtimer-vm: module text .*/&\nqtimer-vm: start \/bin\/qtimer-demo\n| demo: 3 timers fired\nqtimer-vm: end \/bin\/qtimer-demo exit=0 secs=1.002/'
tap_check "a --run program that exits 0 passes, as one test" counts 'passed=1 failed=0 skipped=0' --run --expect ''
tap_check "... and its output goes to stdout" grep -qx 'demo: 3 timers fired' "$tmp/out"
results 's/^\(qtimer-vm: end \/bin\/qtimer-demo\) exit=0/\1 exit=1/'
tap_check "a --run program that exits 1 fails the run" fails_naming '/bin/qtimer-demo: exit=1' --run --expect ''

echo "1..$tap_nr"
tap_totals
