#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run qtbench (bench/) in one VM and report.  `make bench` runs it.
#
#   bench/bench.sh [KERNEL] [--quick] [--big] [--n LIST] [--mech LIST]
#                  [--workloads LIST] [--budget SECS] [--timeout SECS]
#                  [--no-tsc] [--report-only] [--profile REGEX]
#                  [--profile-secs N] [--profile-until REGEX]
#                  [--profile-windows N] [--profile-callers REGEX]
#                  [-- more qtbench options]
#
# KERNEL is any kernel scripts/vm/run.sh boots (default stock-6.1).  The
# default run is N = 10k, 100k, 1M for every mechanism and workload (the
# lazy ones, reset and startstop, too: bench/lazy.c) and the
# ticker at K = 1k and 10k, then the parallel workloads (1, 2 and 4 threads,
# a file per thread and one shared file) at N = 400k, about 20-25 minutes
# under TCG; --quick is N = 10k, 100k, K = 1k and parallel at 100k; --big
# adds N = 5M and 10M for the qtimer mechanisms, as in the seed's start/stop
# table
# (and raises qtimer's per-fd and per-user caps to match).  --budget bounds
# each timed phase in the guest (default 45 s): a mechanism whose cost
# explodes (io_uring's linear timeout list, the POSIX timer hash) stops
# there and is reported as partial rather than eating the run.
#
# Output, in build/bench/KERNEL/: results.csv (the CSV qtbench printed),
# parallel.csv (the parallel workloads' figures: bench/parallel.c),
# notes.txt (its remarks: skips, partial runs, lost or early expiries),
# report.txt (the table, growth and goals printed at the end),
# ns_per_op.png, fire.png and parallel.png.  The VM's own logs are in
# build/vm/KERNEL/bench/.  --report-only redoes the report from the files.
#
# The guest boots with tsc=reliable, as every guest of scripts/vm/run.sh
# does: under TCG the kernel otherwise finds the (emulated) TSCs
# unsynchronised and falls back to the HPET, which has no vDSO, so every
# clock read, in the kernel's timer code and in the benchmark's per-record
# timestamps alike, becomes an emulated MMIO access and dominates what is
# measured.  QEMU's TCG TSC follows the host's, which is synchronised; the
# never-early checks would catch it if it were not.  --no-tsc adds
# tsc=unstable, which takes the TSC away as the kernel would by itself.
#
# --profile REGEX samples the vCPUs (bench/profile.py, through QEMU's
# gdbstub; the guest boots with nokaslr) from the first progress line that
# matches REGEX, for --profile-secs (default 20) or until a line matches
# --profile-until (default: the next workload starts), into
# build/bench/KERNEL/profile.txt; --profile-windows N samples the next N - 1
# such windows as well (a phase of qtbench --reps N recurs N times);
# --profile-callers REGEX names, for samples in functions matching REGEX
# (native_queued_spin_lock_slowpath, say), the module function that called.
# qtbench marks each timed phase ("phase arm", "phase modify", ...) and the
# fire window ("the window opens").  Stopping the VM every few ms slows it:
# the figures of a profiled run are not comparable.
#
# The exit status is non-zero only when the benchmark broke (a run crashed
# or a mechanism failed mid-run) or the VM run failed (a kernel splat, a
# leak, a failed rmmod...); missed goals are information.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)

usage() {
	sed -n '/^#   bench\/bench.sh/,/^#                  \[-- more/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

kernel=stock-6.1
quick=0 big=0 report_only=0 timeout=3600 cmdline=
profile='' profile_secs=20 profile_windows=1 profile_until='^\| qtbench: .* N='
profile_callers=()
qt_args=()
case "${1:-}" in -* | '') ;; *) kernel=$1; shift ;; esac
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--big) big=1 ;;
	--n | --mech | --workloads | --budget) qt_args+=("$1" "$2"); shift ;;
	--timeout) timeout=$2; shift ;;
	--report-only) report_only=1 ;;
	--no-tsc) cmdline=tsc=unstable ;;
	--profile) profile=$2; shift ;;
	--profile-secs) profile_secs=$2; shift ;;
	--profile-windows) profile_windows=$2; shift ;;
	--profile-until) profile_until=$2; shift ;;
	--profile-callers) profile_callers=(--callers "$2"); shift ;;
	-h | --help) usage ;;
	--) shift; qt_args+=("$@"); break ;;
	*) usage ;;
	esac
	shift
done

out=$top/build/bench/$kernel
vm_out=$top/build/vm/$kernel/bench
csv=$out/results.csv
par_csv=$out/parallel.csv
notes=$out/notes.txt
mkdir -p "$out"
say() { printf 'bench: %s\n' "$*" >&2; }

report() {
	python3 "$top/bench/report.py" "$csv" --notes "$notes" --plot-dir "$out" \
		--parallel "$par_csv" | tee "$out/report.txt"
}

if [ "$report_only" = 1 ]; then
	[ -s "$csv" ] || { say "no $csv to report on"; exit 1; }
	report
	exit 0
fi

[ "$quick" = 0 ] || qt_args=(--quick "${qt_args[@]}")
max_n=1000000
if [ "$big" = 1 ]; then
	qt_args+=(--big 5M,10M)
	max_n=10000000
fi
# Room for every timer of the largest run, twice over.
cap=$((2 * max_n))
[ "$cap" -ge 4194304 ] || cap=4194304
modparams="max_timers_per_fd=$cap max_timers_per_user=$cap"
cmd="/bin/qtbench --kernel $kernel ${qt_args[*]}"

say "kernel $kernel: $cmd"
say "module parameters: $modparams; program timeout ${timeout}s; kernel command line +${cmdline:-nothing}"
start=$SECONDS

# Progress: the guest's result channel, followed while the VM runs.
result_log=$vm_out/result.log
mkdir -p "$vm_out"
rm -f "$result_log"
gdb_sock=''
if [ -n "$profile" ]; then
	system_map=$("$top/scripts/vm/kernel-syms.sh" "$kernel")
	gdb_sock=$(mktemp -u /tmp/qtimer-gdb.XXXXXX)
	cmdline="${cmdline:+$cmdline }nokaslr"
fi
QTIMER_GDB=$gdb_sock "$top/scripts/vm/run.sh" "$kernel" --tag bench --run "$cmd" --modparams "$modparams" \
	--timeout "$timeout" ${cmdline:+--cmdline "$cmdline"} >"$out/run.log" 2> >(tee "$out/run.stderr" >&2) &
run_pid=$!
tail -n +1 -F --pid="$run_pid" "$result_log" 2>/dev/null |
	sed -un -e 's/^| qtbench: /bench: guest: /p' -e 's/^| \(qtbench-note: .*\)/bench: guest: \1/p' \
		-e 's/^qtimer-vm: \(insmod.*\|end .*\|verdict.*\)/bench: vm: \1/p' >&2 &
tail_pid=$!
if [ -n "$profile" ]; then
	python3 "$top/bench/profile.py" "$gdb_sock" "$result_log" \
		"$system_map" "$vm_out/guest/qtimer.ko" \
		--after "$profile" --until "$profile_until" --seconds "$profile_secs" \
		--windows "$profile_windows" "${profile_callers[@]}" \
		>"$out/profile.txt" || say "profiling failed (see $out/profile.txt)"
	say "profile: $out/profile.txt"
fi
set +e
wait "$run_pid"
vm_rc=$?
[ -z "$gdb_sock" ] || rm -f "$gdb_sock"
set -e
wait "$tail_pid" 2>/dev/null || true

if [ ! -f "$result_log" ]; then
	say "the VM produced no result channel (see $out/run.log and build/vm/$kernel/bench/)"
	tail -n 20 "$out/run.log" >&2 || true
	exit 1
fi
sed -n 's/^| qtbench-csv: //p' "$result_log" >"$csv"
sed -n 's/^| qtbench-par: //p' "$result_log" >"$par_csv"
sed -n 's/^| qtbench-note: //p' "$result_log" >"$notes"
say "$(($(wc -l <"$csv") - 1)) result rows, $(($(wc -l <"$par_csv") - 1)) parallel, $(wc -l <"$notes") notes; $((SECONDS - start)) s in all"
if [ "$(wc -l <"$csv")" -le 1 ] && [ "$(wc -l <"$par_csv")" -le 1 ]; then
	say "no results: see $result_log"
	exit 1
fi
report

# The benchmark itself: did qtbench exit 0?
status=$(sed -n 's|^qtimer-vm: end /bin/qtbench ||p' "$result_log" | tail -n 1)
rc=0
case "$status" in
exit=0*) ;;
*) say "qtbench FAILED: ${status:-it never finished} (see $notes)"; rc=1 ;;
esac
# The VM's verdict.  hrtimer_interrupt() complains once when an interrupt
# takes long, which emulation on a busy host makes routine under this load:
# with nothing else wrong that is a warning, not a broken benchmark.
if [ "$vm_rc" != 0 ]; then
	fails=$(grep -E '^vm: .*: (FAIL|error):' "$out/run.stderr" || true)
	others=$(grep -vE 'FAIL: kernel splat on the console: hrtimer: interrupt took$' <<<"$fails" | grep . || true)
	if [ -n "$fails" ] && [ -z "$others" ]; then
		say "warning: the kernel said \"hrtimer: interrupt took ...\" (emulation under load; see build/vm/$kernel/bench/console.log)"
	else
		say "the VM run FAILED (run.sh exit $vm_rc):"
		printf '%s\n' "${others:-$(tail -n 1 "$out/run.log")}" >&2
		rc=1
	fi
fi
exit "$rc"
