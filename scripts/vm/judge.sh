#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Judge a finished test VM from its logs: the verdict half of
# scripts/vm/run.sh, which boots the VM and then runs this.  It reads only
# files, so scripts/vm/judge-test.sh can prove it on small sample logs,
# natively, that it fails every run it must fail.
#
#   judge.sh --kernel KERNEL [--name NAME] [--accel tcg|kvm] [--run]
#            [--suites GLOBS] [--rig-warn] [--expect "SUITE..."]
#            [--unbuilt "SUITE..."] [--failed N] [--problem TEXT]...
#            [--qemu-status RC] [--stopped-early WHY] [--vm-timeout SEC]
#            [--vm-secs SEC] [--elapsed SEC] LOG_DIR
#
# LOG_DIR holds the run's result.log (ttyS1: the init's records),
# console.log (ttyS0: kernel console and program output) and qemu.log.
# KERNEL is the kernel's name as scripts/vm/kernel.sh knows it (debug-* and
# kcsan-* excuse every "hrtimer: interrupt took" under TCG); NAME (KERNEL by
# default) prefixes the messages and the vm-result line.  --run: the VM ran
# one --run program instead of suites, and passes when it exited 0;
# --suites is what the run asked for, named when no suite matched.
# --expect lists the suites the run must have started, less those
# --unbuilt lists (the payload had no binary of them, which run.sh judged
# before the boot).  --failed and --problem hand over the failures run.sh
# found before the boot: N failures in all, and each one's reason.
# --qemu-status is QEMU's exit status (33 pass and 35 fail from
# isa-debug-exit, 124 or 137 the host's timeout, which was --vm-timeout
# seconds), --stopped-early why run.sh stopped QEMU itself.  --vm-secs and
# --elapsed are the VM's time and the whole run's so far, for the last
# message.  QTIMER_TCG_STALL_NS: see the splat rules below.
#
# The suites ran through the kernel's kselftest runner, and each one's
# result is read from the runner's TAP (see "Suites" below).  The run
# fails on: a suite failure, a crashed, timed-out or unfinished suite (or
# runner), a missing "# Totals:" line, an expected suite that never started,
# a failed insmod or rmmod, a kmemleak suspect, a splat on the console,
# taint D, W or L, a missing verdict or one QEMU's exit status contradicts.
# The reasons go to stderr, then the last line, on stdout, is
#   vm-result: NAME passed=P failed=F skipped=S
# and the exit status is 0 exactly when F is 0.  A --run program's output
# goes to stdout before it.

set -euo pipefail

# All in one compound command: bash reads it whole before running any of
# it, so editing this file cannot upset runs already under way.
{

top=$(cd "$(dirname "$0")/../.." && pwd)

usage() {
	sed -n '/^#   judge.sh/,/LOG_DIR$/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

kernel='' name='' accel=tcg run_mode=0 suites='' rig_warn=0
expected=() unbuilt=() failed=0 problems=()
qemu_rc='' stopped_early='' vm_timeout='' vm_secs=0 elapsed=0
while [ $# -gt 1 ]; do
	case "$1" in
	--kernel) kernel=$2; shift ;;
	--name) name=$2; shift ;;
	--accel) accel=$2; shift ;;
	--run) run_mode=1 ;;
	--suites) suites=$2; shift ;;
	--rig-warn) rig_warn=1 ;;
	--expect) read -ra expected <<<"$2"; shift ;;
	--unbuilt) read -ra unbuilt <<<"$2"; shift ;;
	--failed) failed=$2; shift ;;
	--problem) problems+=("$2"); shift ;;
	--qemu-status) qemu_rc=$2; shift ;;
	--stopped-early) stopped_early=$2; shift ;;
	--vm-timeout) vm_timeout=$2; shift ;;
	--vm-secs) vm_secs=$2; shift ;;
	--elapsed) elapsed=$2; shift ;;
	*) usage ;;
	esac
	shift
done
[ $# = 1 ] && [ -n "$kernel" ] || usage
case "$1" in -*) usage ;; esac
out_dir=${1%/}
name=${name:-$kernel}
# The last message counts the whole run's time, which began in run.sh.
SECONDS=$elapsed
start=0
passed=0 skipped=0
# shellcheck source=scripts/vm/verdict.sh
. "$top/scripts/vm/verdict.sh"

suites_sh=$top/scripts/vm/suites.sh
console=$out_dir/console.log
result=$out_dir/result.log

# --- Suites ---------------------------------------------------------------
# Per suite (or --run program): name, how it ended, time, and its kselftest
# totals.  Program output is the "| " lines between the init's start and
# end records.  The suites ran through the kernel's kselftest runner,
# run_kselftest.sh, whose TAP is that output: per suite a header
# "# selftests: <collection>: <suite>", the suite's output prefixed "# "
# (so its totals read "# # Totals: ..."), and one result line the suite
# cannot fake: "ok N selftests: <collection>: <suite>", with "# SKIP"
# (exit 4), or "not ok N ..." with "# exit=RC" (RC above 128: killed by
# signal RC - 128), "# TIMEOUT S seconds" or nothing (no such file).  The
# init's "took" record after each result line is that suite's time; the
# runner's own end record comes last.
summary=$(awk -v run_mode="$run_mode" '
	function close_prog(endrec) {
		if (cur == "") return
		printf "%s\t%s\t%s\t%s\n", cur, endrec, secs, totals
		cur = ""
	}
	function open_prog(name) { close_prog("unfinished"); cur = name; totals = "-"; secs = "?" }
	run_mode && /^qtimer-vm: start / { open_prog($3); next }
	run_mode && /^qtimer-vm: end / {
		status = "unfinished"; secs = "?"
		for (i = 4; i <= NF; i++) {
			if ($i ~ /^secs=/) secs = substr($i, 6)
			else status = $i
		}
		if (cur == $3) close_prog(status)
		next
	}
	run_mode { next }
	/^\| # selftests: [^ ]+: [^ ]+$/ { open_prog($NF); next }
	/^\| # # Totals: / && cur != "" { totals = $0; sub(/^\| # # Totals: /, "", totals); next }
	/^\| (not )?ok [0-9]+ selftests: / {
		line = substr($0, 3); directive = ""
		if (match(line, / # /)) { directive = substr(line, RSTART + 3); line = substr(line, 1, RSTART - 1) }
		n = split(line, w, " ")
		if (cur != w[n]) open_prog(w[n])
		if (w[1] == "ok") status = directive == "SKIP" ? "exit=4" : "exit=0"
		else if (directive ~ /^TIMEOUT [0-9]+/) { split(directive, t, " "); status = "timeout=" t[2] }
		else if (directive ~ /^exit=[0-9]+$/) {
			rc = substr(directive, 6) + 0
			status = rc > 128 ? "signal=" (rc - 128) : "exit=" rc
		} else status = "missing"
		pending = cur
		close_prog(status)
		next
	}
	/^qtimer-vm: took secs=/ && pending != "" { took[pending] = substr($3, 6); pending = ""; next }
	/^qtimer-vm: end / {
		close_prog("unfinished")
		runner = $3; status = "unfinished"; rsecs = "?"
		for (i = 4; i <= NF; i++) {
			if ($i ~ /^secs=/) rsecs = substr($i, 6)
			else status = $i
		}
	}
	END {
		close_prog("unfinished")
		if (runner != "") printf "%s\t%s\t%s\t%s\n", "runner:" runner, status, rsecs, "-"
		for (p in took) printf "took:%s\t%s\n", p, took[p]
	}
' "$result")
declare -A took=()
while IFS=$'\t' read -r prog secs; do
	took[${prog#took:}]=$secs
done < <(grep '^took:' <<<"$summary" || true)

runner_seen=0
while IFS=$'\t' read -r prog status secs totals; do
	[ -n "$prog" ] || continue
	case "$prog" in took:*) continue ;; esac
	# The runner itself: it exits 0 whatever its suites did, so any other
	# end (the init's bound on it, a crash) is a failure of its own.
	if [[ $prog == runner:* ]]; then
		runner_seen=1
		say "${prog#runner:}: $status (${secs}s)"
		[ "$status" = exit=0 ] || problem "${prog#runner:}: $status"
		continue
	fi
	[ "$secs" != '?' ] || secs=${took[$prog]:-?}
	p=0 f=0 x=0 y=0 s=0 e=0
	if [ "$totals" != - ]; then
		for kv in $totals; do
			case "$kv" in
			pass:*) p=${kv#pass:} ;; fail:*) f=${kv#fail:} ;;
			xfail:*) x=${kv#xfail:} ;; xpass:*) y=${kv#xpass:} ;;
			skip:*) s=${kv#skip:} ;; error:*) e=${kv#error:} ;;
			esac
		done
	fi
	if [ "$run_mode" = 1 ]; then
		# A --run program is one check: did it exit 0?  Show what it said.
		awk -v p="$prog" '$0 == "qtimer-vm: start " p { on = 1; next }
			on && /^qtimer-vm: end / { exit } on' "$result" | sed 's/^| //'
		if [ "$status" = exit=0 ]; then passed=$((passed + 1)); else problem "$prog: $status"; fi
		say "$prog: $status (${secs}s)"
		continue
	fi
	passed=$((passed + p + x))
	failed=$((failed + f + e + y))
	skipped=$((skipped + s))
	# A suite that skipped itself whole (KSFT_SKIP) without totals: one skip.
	[ "$status" != exit=4 ] || [ "$totals" != - ] || skipped=$((skipped + 1))
	say "$(printf '%-28s %s (%ss)' "$prog:" "${totals/#-/no Totals line}" "$secs") $status"
	case "$status" in
	exit=0) [ "$totals" != - ] || problem "$prog printed no '# Totals:' line" ;;
	exit=4) ;;	# KSFT_SKIP: the whole suite skipped itself
	exit=*) [ $((f + e + y)) -gt 0 ] || problem "$prog: $status with no failed test" ;;
	missing) problem "$prog: the runner found no such file" ;;
	*) problem "$prog: $status" ;;
	esac
	if [ "$status" != exit=0 ] && [ "$status" != exit=4 ]; then
		# Show what the failing suite said: its failures and diagnostics.
		awk -v h="| # selftests: " -v p="$prog" '
			index($0, h) == 1 { on = ($NF == p); next }
			on && /^(\| (not )?ok [0-9]+ selftests: |qtimer-vm: )/ { on = 0 } on' "$result" |
			sed 's/^| # //' | grep -E '^(not ok|#)' | grep -v '^# Totals' | tail -n 40 | sed 's/^/    /' >&2 || true
	fi
done <<<"$summary"
# The runner must have run and ended: without its end record the guest
# died or hung under it (judged below too, by the missing verdict).
if [ "$run_mode" = 0 ] && [ "$runner_seen" = 0 ] && grep -q '^qtimer-vm: start ' "$result"; then
	problem "run_kselftest.sh never ended"
fi

# Every expected suite that was built must have started.
if [ "${#expected[@]}" -gt 0 ]; then
	declare -A is_unbuilt=()
	for suite in "${unbuilt[@]}"; do is_unbuilt[$suite]=1; done
	to_check=() unrun=()
	for suite in "${expected[@]}"; do
		[ -n "${is_unbuilt[$suite]:-}" ] || to_check+=("$suite")
	done
	[ "${#to_check[@]}" = 0 ] ||
		mapfile -t unrun < <("$suites_sh" unrun "$result" "${to_check[@]}" || true)
	[ "${#unrun[@]}" = 0 ] ||
		problem_n "${#unrun[@]}" "expected but never started (see console.log): ${unrun[*]}"
fi

# --- The init's records -----------------------------------------------------
record() { sed -n "s/^qtimer-vm: $1 //p" "$result" | tail -n 1; }
grep -q '^qtimer-vm: insmod ok' "$result" || {
	r=$(sed -n 's/^qtimer-vm: insmod //p' "$result")
	problem "insmod ${r:-never happened}"
}
if grep -q '^qtimer-vm: insmod ok' "$result" && ! grep -q '^qtimer-vm: rmmod ok' "$result"; then
	r=$(sed -n 's/^qtimer-vm: rmmod //p' "$result")
	problem "rmmod ${r:-never happened}"
fi
grep -q '^qtimer-vm: no suite matches' "$result" && problem "no suite matches '$suites'"
# The self-test module: asked for, it must have loaded (its WARN and hang
# message are judged with every other splat, below); not asked for, it
# must not have.
if [ "$rig_warn" = 1 ]; then
	grep -q '^qtimer-vm: rig-warn insmod ok' "$result" || {
		r=$(sed -n 's/^qtimer-vm: rig-warn insmod //p' "$result")
		problem "--rig-warn: insmod qtimer_rig.ko ${r:-never happened}"
	}
elif grep -q '^qtimer-vm: rig-warn ' "$result"; then
	problem "the init loaded qtimer_rig.ko without --rig-warn"
fi
leaks=$(sed -n 's/^qtimer-vm: kmemleak suspects=\([0-9]*\).*/\1/p' "$result" | tail -n 1)
[ -z "$leaks" ] || [ "$leaks" = 0 ] || problem "kmemleak: $leaks suspected leak(s) (report in result.log)"

tainted=$(record tainted)
if [ -n "$tainted" ]; then
	bad=''
	(( tainted & 128 )) && bad+=' D(died)'
	(( tainted & 512 )) && bad+=' W(warning)'
	(( tainted & 16384 )) && bad+=' L(soft lockup)'
	[ -z "$bad" ] || problem "kernel tainted $tainted:$bad"
fi

# --- Verdict and QEMU's exit ------------------------------------------------
verdict=$(record verdict)
case "$verdict" in
pass | fail) ;;
*) problem "no verdict from the guest (crash or hang; see console.log)" ;;
esac
# isa-debug-exit: 33 = pass, 35 = fail; 124 = host timeout.
[ -z "$stopped_early" ] || qemu_rc="stopped"
# A kernel without ioperm() ends the VM by a reset, which exits QEMU with 0;
# the init says so on the result channel, and the verdict record decides.
[ "$qemu_rc" != 0 ] || ! grep -q '^qtimer-vm: exit by reset' "$result" || qemu_rc=reset
case "$qemu_rc" in
reset) ;;
stopped) problem "VM stopped early: $stopped_early" ;;
33) [ "$verdict" = pass ] || problem "QEMU exit status 33 (pass) but verdict '$verdict'" ;;
35) [ "$verdict" != pass ] || problem "verdict pass but QEMU exit status 35 (fail)" ;;
124 | 137) problem "VM killed after ${vm_timeout}s (host timeout)" ;;
*) problem "QEMU exited with status $qemu_rc (see qemu.log)"
   sed 's/^/    /' "$out_dir/qemu.log" | tail -n 5 >&2 ;;
esac
[ "$verdict" != fail ] || [ "$failed" -gt 0 ] || problem "the guest's verdict is fail"

# --- Splats -----------------------------------------------------------------
# Kernel messages only, i.e. lines carrying a printk timestamp
# (printk.time=1), so that a test printing one of these words cannot fail
# the run, while a kernel message glued to a line of test output by the
# shared serial port is still caught.
splat_re='BUG:|WARNING:|KASAN:|UBSAN:|KCSAN:|KFENCE:|ODEBUG:|kernel BUG at'
splat_re+='|possible circular locking|inconsistent lock state|possible recursive locking'
splat_re+='|suspicious RCU usage|Invalid wait context|sleeping function called from invalid context'
splat_re+='|unreferenced object|suspected memory leak'
splat_re+='|soft lockup|hard LOCKUP|self-detected stall|RCU stall|rcu: INFO:|detected stall'
splat_re+='|hung_task|blocked for more than'
splat_re+='|hrtimer: interrupt took|Kernel panic|Oops|general protection fault|double fault'
splat_re+='|list_add corruption|list_del corruption|refcount_t:'
ts_re='\[ *[0-9]+\.[0-9]+\]'
#
# Some hits are shown but not counted:
# - "hrtimer: interrupt took" before the module is loaded: it cannot have
#   caused it.  From the load on it counts (the init re-arms this once-only
#   message before the insmod, so a late one is seen at all), with two
#   exceptions under TCG, where the host runs four virtual CPUs on fewer
#   cores and may deschedule one for a timeslice in the middle of its
#   timer interrupt (the kernel's own comment names VMs as a cause):
#   * an interrupt that took QTIMER_TCG_STALL_NS (2 ms) or more.  A host
#     timeslice is milliseconds, and on the Debian kernels every such
#     message seen since the expirer moved to a soft hrtimer (one that
#     cannot make the interrupt retry) took 6-35 ms, in suites that keep
#     all four CPUs busy, and one came at boot before the module was
#     loaded.  One that took less means timers kept coming due for real,
#     which is what the check is for: the expirer's hard-irq chains it
#     caught took 9 us to 1 ms in most runs (a few 2-4 ms).
#   * anything on the instrumented kernels, where KASAN or KCSAN make the
#     tick itself slow enough that they print it on most boots before
#     anything of ours runs.
# - kmemleak's own "N new suspected memory leaks": it counts boot-time
#   objects too, while the init counts only those allocated after the
#   insmod and reports them on the result channel, which is judged above.
# (6.1's printk/8250 "Invalid wait context" false positive is fixed in the
# debug kernel itself, by scripts/debug-kernel/printk-legacy-wait-override.patch,
# so every lockdep report counts.)
noise_re='kmemleak: [0-9]+ new suspected memory leak'
hang_re='hrtimer: interrupt took'
hang_any=0 stall_ns=0
if [ "$accel" != kvm ]; then
	stall_ns=${QTIMER_TCG_STALL_NS:-2000000}
	case $kernel in debug-* | kcsan-*) hang_any=1 ;; esac
fi
# The init's "boot" record comes right before it re-arms the message and
# loads the module.
load_line=$({ grep -anEm1 "$ts_re.* qtimer-vm: boot " "$console" || echo 0:; } | cut -d: -f1)
splat_lines=$({ grep -anE "$ts_re.*($splat_re)" "$console" || true; } |
	awk -F: -v re="$noise_re" -v hang="$hang_re" -v any="$hang_any" \
	    -v load="$load_line" -v stall="$stall_ns" '
		function took(s) { sub(/.*interrupt took /, "", s); return s + 0 }
		$0 ~ re || ($0 ~ hang && (any || !load || $1 < load ||
					  (stall && took($0) >= stall))) {
			print "    shown, not counted: " substr($0, length($1) + 2) > "/dev/stderr"; next
		}
		{ print $1 }')
if [ -n "$splat_lines" ]; then
	kinds=$(sed -n "$(sed 's/$/p/' <<<"$splat_lines" | paste -sd';' -)" "$console" |
		grep -aoE "$splat_re" | sort -u | paste -sd, -)
	problem "kernel splat on the console: $kinds"
	# Each hit with a little context, at most 150 lines in all.
	awk -v hits="$(tr '\n' ' ' <<<"$splat_lines")" '
		BEGIN { n = split(hits, h, " "); for (i = 1; i <= n; i++) for (j = h[i] - 3; j <= h[i] + 12; j++) show[j] = 1 }
		show[NR] { if (NR != last + 1 && last) print "    ..."; print "    " NR ": " $0; last = NR }
	' "$console" | head -n 150 >&2
fi

for p in "${problems[@]}"; do say "FAIL: $p"; done
say "$( [ "$failed" = 0 ] && echo passed || echo FAILED ) in ${vm_secs}s of VM time, $((SECONDS - start))s in all; logs: ${out_dir#$top/}/"
result_printed=1
echo "vm-result: $name passed=$passed failed=$failed skipped=$skipped"
[ "$failed" = 0 ]
exit
}
