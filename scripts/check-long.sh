#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The long hardening run, "make check-long": set up the machine (as root,
# scripts/setup.sh, as make check does), then the hardening suites
# (selftests/hardening, installed as hardening_*) with stretched durations
# on the kernels with the checkers and the scheduling that find races: the
# debug kernel (KASAN, lockdep, kmemleak, fault injection), PREEMPT_RT and
# the KCSAN kernel.  The debug kernels are built (and cached) on first use
# by scripts/debug-kernel/build.sh, through scripts/vm/kernel.sh.
#
#   KERNELS="debug-6.1 rt-6.12 kcsan-6.1"   kernels to boot (the default)
#   QT_STRESS_SECONDS=60                    race/hotplug/clock-step/fuzz loops
#   QT_DOS_TIMERS=1000000                   size of the simultaneous-expiry storm
#   SUITES='hardening_*'                    suites to run in each VM
#   TIMEOUT=1800                            seconds per suite
#   QT_SEED=n                               replay the randomized suites
#
# The tunables reach the guest's suites as words on the kernel command line
# (the VM's init gives programs a fixed environment; the suites read
# /proc/cmdline when their environment lacks a tunable).  The last line is
# "N passed, N failed, N skipped", as for make check; the exit status is
# non-zero on any failure.  Logs: build/vm/<kernel>/long/ and
# build/check-long/.

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
# shellcheck source=lib/preamble.sh
. "$top/scripts/lib/preamble.sh" check-long

kernels=${KERNELS:-debug-6.1 rt-6.12 kcsan-6.1}
suites=${SUITES:-hardening_*}
timeout=${TIMEOUT:-1800}
stress=${QT_STRESS_SECONDS:-60}
dos=${QT_DOS_TIMERS:-1000000}
log_dir=$top/build/check-long

cmdline="QT_STRESS_SECONDS=$stress QT_DOS_TIMERS=$dos"
[ -z "${QT_SEED:-}" ] || cmdline+=" QT_SEED=$QT_SEED"
[ -z "${QT_FUZZ_SECONDS:-}" ] || cmdline+=" QT_FUZZ_SECONDS=$QT_FUZZ_SECONDS"

# The packages, test kernels and kernel source the VMs need: the same
# setup make check runs, so that check-long works on a fresh machine too.
# shellcheck disable=SC2119 # no STAGE: all of scripts/setup.sh
setup_machine

mkdir -p "$log_dir"
for k in $kernels; do
	log=$log_dir/$k.log
	t=$SECONDS
	note "[$((SECONDS - start))s] $k: $suites with $cmdline"
	res=$(vm_run "$k" "$k" --suites "$suites" --tag long \
		--timeout "$timeout" --cmdline "$cmdline")
	# No result line at all (the runner itself broke) is one failure.
	[ -n "$res" ] || res="0 1 0"
	read -r p f s <<<"$res"
	add_totals "$p" "$f" "$s"
	note "$k: $p passed, $f failed, $s skipped ($((SECONDS - t))s; log: ${log#"$top"/})"
done

note "done in $((SECONDS - start))s"
print_totals
