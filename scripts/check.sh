#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole test run, "make check": set up the machine, run the native
# user-space tests, build the debug kernel, run the selftests in a QEMU VM
# on every test kernel, and prove the VM runner still catches a kernel
# warning.  Must run as root (scripts/setup.sh installs packages).
#
#   KERNELS="stock-6.1 ..."   kernels to boot (default: the matrix of
#                             selftests/suites.manifest, all five)
#   SELFTEST=0                skip the harness self-test (quick loops)
#   SUITES=glob[,glob]        run only these suites in each VM
#   KCSAN_SUITES=...          the suites kcsan-6.1 runs (default: those
#                             selftests/suites.manifest lists for it)
#
# Each kernel runs the suites selftests/suites.manifest lists for it; an
# entry of SUITES or KCSAN_SUITES that names no suite there is rejected
# before anything runs ("check.sh --check-config" does only that).
#
# The last line is "N passed, N failed, N skipped" (kselftest totals of
# every stage); the exit status is non-zero on any failure.  Logs:
# build/vm/<kernel>/ and build/check/.

set -uo pipefail

# All in one compound command: bash reads it whole before running any of
# it, so editing this file cannot upset runs already under way.
{

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
# shellcheck source=lib/preamble.sh
. "$top/scripts/lib/preamble.sh" check

selftest=${SELFTEST:-1}
log_dir=$top/build/check

stage() { printf '\ncheck: [%4ds] == %s\n' $((SECONDS - start)) "$*" >&2; }
summary=()
# tally PASSED FAILED SKIPPED WHAT
tally() {
	add_totals "$1" "$2" "$3"
	note "$4: $1 passed, $2 failed, $3 skipped"
	summary+=("$(printf '%5d passed, %3d failed, %3d skipped  %s' "$1" "$2" "$3" "$4")")
}

# Sum the kselftest "# Totals:" lines of a log: prints "passed failed
# skipped found", found being 1 if there was any such line.
sum_totals() {
	awk '/^# Totals: / {
		for (i = 3; i <= NF; i++) { split($i, kv, ":"); n[kv[1]] += kv[2] }
		found = 1
	} END {
		printf "%d %d %d %d\n", n["pass"] + n["xfail"], n["fail"] + n["error"] + n["xpass"],
			n["skip"], found
	}' "$1"
}

# --- Configuration ----------------------------------------------------------
# Which suites each kernel runs is selftests/suites.manifest's business
# (scripts/vm/suites.sh reads it; run.sh runs a kernel's list when given no
# --suites).  Reject a SUITES or KCSAN_SUITES entry that names no suite
# here, before an hour of VM runs quietly runs nothing for it.
config_ok=1
if ! matrix=$(scripts/vm/suites.sh kernels | paste -sd' ' -); then
	note "selftests/suites.manifest is malformed (see above)"
	config_ok=0
fi
kernels=${KERNELS-$matrix}
for var in SUITES KCSAN_SUITES; do
	[ -n "${!var:-}" ] || continue
	if ! scripts/vm/suites.sh select "${!var}" >/dev/null; then
		note "$var='${!var}': an entry names no suite in selftests/suites.manifest (see above)"
		config_ok=0
	fi
done
if [ "${1:-}" = --check-config ]; then
	[ "$config_ok" = 1 ] || exit 1
	note "configuration ok: kernels ${kernels:-none};" \
		"SUITES=${SUITES:-(from the manifest)}; KCSAN_SUITES=${KCSAN_SUITES:-(from the manifest)}"
	exit 0
fi
[ "$config_ok" = 1 ] || fail_run

stage "setup: the toolchain (scripts/setup.sh toolchain)"
setup_machine toolchain
mkdir -p "$log_dir"

# --- Debug kernels, built while the rest installs and the native checks run --
# On a fresh machine the two debug kernels take about 17 minutes to build,
# the rest of the setup mostly waits for downloads, and the native checks
# leave a CPU idle some of their time (dpkg, lintian and most scripts run
# one process).  So with the compiler and the kernel source installed the
# builds start, in the background at a lower priority, and the VM runs wait
# for them (below, "Debug kernels").  Nothing before that wait is timed, so
# the two only share the CPUs.  Measured on 2 cores: the builds were done
# 1217 s after the start, against about 1370 s one after the other (the
# native checks are busier than they look).  With the kernels cached,
# kernel.sh answers at once.
kill_tree() {
	local child
	for child in $(pgrep -P "$1"); do
		kill_tree "$child"
	done
	kill "$1" 2>/dev/null
}
kbuild_pid=
kbuild_kernels=()
for k in $kernels; do
	case "$k" in debug-6.1 | kcsan-6.1) kbuild_kernels+=("$k") ;; esac
done
if [ "${#kbuild_kernels[@]}" -gt 0 ] && [ -x scripts/debug-kernel/build.sh ]; then
	stage "kernels ${kbuild_kernels[*]}: build in the background (cached after the first time)"
	for k in "${kbuild_kernels[@]}"; do
		rm -f "$log_dir/kernel-$k.rc"
	done
	(
		for k in "${kbuild_kernels[@]}"; do
			nice -n 10 scripts/vm/kernel.sh "$k" >"$log_dir/kernel-$k.log" 2>&1
			echo $? >"$log_dir/kernel-$k.rc"
		done
	) &
	kbuild_pid=$!
fi

stage "setup, the rest (scripts/setup.sh)"
if ! scripts/setup.sh; then
	note "scripts/setup.sh failed"
	[ -z "$kbuild_pid" ] || kill_tree "$kbuild_pid"
	fail_run
fi

# --- Native user-space tests ------------------------------------------------
# native_check NAME CMD...: a host-side check that prints kselftest TAP
# (its "# Totals:" lines are summed); one without TAP counts as one test.
# A non-zero exit with no failing test counts as one failure.
native_check() {
	local name=$1 log=$log_dir/$1.log rc p f s found
	shift
	stage "native: $*"
	"$@" >"$log" 2>&1
	rc=$?
	read -r p f s found < <(sum_totals "$log")
	if [ "$found" = 0 ]; then
		if [ "$rc" = 0 ]; then p=1; else f=1; fi
	elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		f=1
	fi
	if [ "$f" != 0 ]; then
		grep -E '^not ok' "$log" | head -n 20 >&2
		tail -n 30 "$log" >&2
		note "$* exited with $rc (log: ${log#$top/})"
	fi
	tally "$p" "$f" "$s" "$name"
}

native_check heap make -C selftests/heap check
# The id table, built natively: stale, forged and wrapped ids name nothing.
native_check ids make -C selftests/ids check
# The timing wheel the benchmarks compare the heap with: never early, none lost.
native_check wheel make -C bench wheel-check WHEEL_O="$top/build/check/wheel"
# libtimerdev: unit tests against a fake device, ABI, headers, man pages,
# install; qtimerctl: man page and the checks that need no module (the
# rest runs in the VM); Documentation: every page renders, the YNL spec
# matches the uapi header; the whole tree's make install under DESTDIR.
# WERROR=1: here a warning fails the run; a user's or a distribution's
# build (CFLAGS of its own, a newer compiler) only warns.
native_check libtimerdev make -C libtimerdev check O="$top/build/check/libtimerdev" WERROR=1
native_check qtimerctl make -C qtimerctl check O="$top/build/check/qtimerctl" WERROR=1
native_check documentation make -C Documentation check
native_check install scripts/install-check.sh
# The module refuses to build for a 32-bit kernel (kmod/Kbuild), with a
# message: built against an i386 tree prepared from linux-source-6.1.
native_check check-32bit scripts/check-32bit.sh
# What a kernel reviewer runs first: W=1 and sparse builds with no warning,
# checkpatch.pl --strict clean over kmod/ and uapi/.
native_check kmod-lint scripts/check-kmod-lint.sh
# kmod/'s includes point down design.rst's layer table, which lists
# exactly kmod/'s files; and the check catches a planted upward include.
native_check layers scripts/check-layers.sh
# setup.sh finds the Debian mirror in every form of APT source entry.
native_check setup-sources scripts/setup-sources-test.sh
# The suite manifest's checker catches what it is for: a missing suite, an
# unlisted one, a misspelt selection (and check.sh rejects the latter).
native_check suites-manifest-selftest scripts/vm/suites-test.sh
# The VM run's judge fails what it must on sample logs: each class of
# splat, taint D, W and L, a failed, crashed or missing suite, a missing
# record, QEMU's exit status (the harness self-test below proves it once
# on a real WARN).
native_check vm-judge-selftest scripts/vm/judge-test.sh

# --- Debug kernels ----------------------------------------------------------
run_kernels=()
for k in $kernels; do
	case "$k" in
	debug-6.1 | kcsan-6.1)
		if [ ! -x scripts/debug-kernel/build.sh ]; then
			note "skipping $k: scripts/debug-kernel/build.sh does not exist yet"
			continue
		fi
		if [ -n "$kbuild_pid" ]; then
			stage "kernel $k: waiting for its build (log: build/check/kernel-$k.log)"
			wait "$kbuild_pid"
			kbuild_pid=
		fi
		if [ "$(cat "$log_dir/kernel-$k.rc" 2>/dev/null)" != 0 ]; then
			tail -n 30 "$log_dir/kernel-$k.log" >&2
			tally 0 1 0 "kernel $k build (log: build/check/kernel-$k.log)"
			continue
		fi
		grep -h '^debug-kernel' "$log_dir/kernel-$k.log" | tail -n 2 >&2
		;;
	esac
	run_kernels+=("$k")
done

# --- VM runs --------------------------------------------------------------
# vm_run NAME ARGS... (scripts/lib/preamble.sh) keeps each run's output in
# build/check/NAME.log.

# The guest's user-space programs are the same for every kernel: build them
# once here; each run then builds only the module.
if [ "${#run_kernels[@]}" -gt 0 ] || [ "$selftest" != 0 ]; then
	stage "guest user space: make guest-user"
	export QTIMER_GUEST_USER=$top/build/check/guest-user
	rm -rf "$QTIMER_GUEST_USER"
	if ! make -j"$(nproc)" --no-print-directory guest-user OUT="$QTIMER_GUEST_USER" WERROR=1 >"$log_dir/guest-user.log" 2>&1; then
		tail -n 40 "$log_dir/guest-user.log" >&2
		tally 0 1 0 "guest user space build (log: build/check/guest-user.log)"
		run_kernels=()
		selftest=0
	else
		# Every suite the manifest lists is built, and every suite built
		# is listed (an unlisted one would run on no kernel).
		native_check suites-manifest scripts/vm/suites.sh check-payload "$QTIMER_GUEST_USER"
		# make -C selftests install makes the kselftest tree a kernel CI
		# runs: the kernel's runner, the list, settings and config (on
		# the payload just built).
		KSFT_PAYLOAD=$QTIMER_GUEST_USER native_check kselftest-install scripts/kselftest-install-check.sh
		# The real dkms builds and installs the module from a make
		# install tree for the test kernels; stock-6.1's whole list
		# below runs on the module it installed.
		rm -rf "$log_dir/modules-dkms" "$log_dir/modules-deb"
		DKMS_CHECK_MODULES=$log_dir/modules-dkms native_check dkms scripts/dkms-check.sh
		# The Debian packages: dpkg-buildpackage on a copy of the tree
		# (outputs in build/deb), lintian without errors, each package's
		# contents, a program built with the -dev package's pkg-config,
		# the module built from the qtimer-dkms source for the test
		# kernels; stock-6.12's and rt-6.12's whole lists below run on
		# those, qtimer_autoload_test loading them by their aliases.
		DEB_CHECK_MODULES=$log_dir/modules-deb native_check deb scripts/deb-check.sh
	fi
fi

for k in "${run_kernels[@]}"; do
	stage "kernel $k: selftests in a VM"
	t=$SECONDS
	# Without --suites, run.sh runs the kernel's list from the manifest.
	sel=${SUITES:-}
	[ "$k" != kcsan-6.1 ] || [ -n "$sel" ] || sel=${KCSAN_SUITES:-}
	# The Debian kernels boot the module as users get it: dkms-check's
	# for stock-6.1, the package's for the 6.12 ones (built from the
	# same kmod/ by the same Kbuild; one boot each instead of two).  If
	# that build failed (counted above), the run builds its own.
	ko=
	case "$k" in
	stock-6.1) ko=$(find "$log_dir/modules-dkms/$k" -name 'qtimer.ko*' 2>/dev/null | head -n 1) ;;
	stock-6.12 | rt-6.12) ko=$(find "$log_dir/modules-deb/$k" -name 'qtimer.ko*' 2>/dev/null | head -n 1) ;;
	esac
	[ -z "$ko" ] || note "kernel $k: booting the module from ${ko#"$top"/}"
	res=$(vm_run "$k" "$k" ${sel:+--suites "$sel"} ${ko:+--module "$ko"})
	[ -n "$res" ] || res="0 1 0"
	read -r p f s <<<"$res"
	# Fault injection is what debug-6.1 is for: there the failnth suites
	# (hardening_failnth_*, one a kind of call) must each run, not skip.
	# Skips only add up, so a kernel that lost failslab or fail-nth would
	# leave every one of their tests skipped and the run green.  Their
	# names come from the manifest; a manifest that lists none for
	# debug-6.1 fails here too.
	if [ "$k" = debug-6.1 ] && [ -z "$sel" ]; then
		failnth=$("$top/scripts/vm/suites.sh" list debug-6.1 | grep '^hardening_failnth_')
		if [ -z "$failnth" ]; then
			f=$((f + 1))
			summary+=("        the manifest lists no hardening_failnth_* suite for debug-6.1")
		fi
		for suite in $failnth; do
			grep -aqE "^vm: debug-6\.1: $suite: +pass:[1-9][0-9]* fail:0 .*skip:0 " \
				"$log_dir/$k.log" && continue
			f=$((f + 1))
			summary+=("        $suite did not run on debug-6.1 (skipped or missing)")
		done
	fi
	tally "$p" "$f" "$s" "kernel $k ($((SECONDS - t))s)"
	# The run's own reasons, again in the summary at the end.
	while IFS= read -r line; do
		summary+=("        ${line#vm: }")
	done < <(grep -aE '^vm: [^ ]*: (FAIL|booting again): ' "$log_dir/$k.log")
done

# --- A CPU isolated from timers ----------------------------------------------
# QTIMER_F_CPU must refuse a CPU booted as nohz_full=
# (qtimer_validate_cpu_test's arm_cpu_isolated_from_timers, which skips on
# a kernel booted without it).
# One short boot with CPU 3 isolated runs that suite, native and through
# the 32-bit compat path, and the test must have run in both, not skipped.
if printf '%s\n' "${run_kernels[@]}" | grep -qx stock-6.12; then
	stage "isolated CPU: stock-6.12 with nohz_full=3, qtimer_validate_cpu_test (and compat32)"
	res=$(vm_run isolated-cpu stock-6.12 --tag isolated-cpu --cmdline nohz_full=3 \
		--suites qtimer_validate_cpu_test,compat32_qtimer_validate_cpu_test)
	[ -n "$res" ] || res="0 1 0"
	read -r p f s <<<"$res"
	# (the kselftest runner prefixes a suite's own lines with "# ", and
	# the serial console ends lines with \r)
	if [ "$(grep -acE $'^(# )?ok [0-9]+ validate\\.arm_cpu_isolated_from_timers\r?$' \
	       "$top/build/vm/stock-6.12/isolated-cpu/console.log")" != 2 ]; then
		f=$((f + 1))
		why="arm_cpu_isolated_from_timers did not pass twice, native and compat32 (skipped or missing)"
	fi
	tally "$p" "$f" "$s" "isolated CPU (nohz_full=3) on stock-6.12"
	[ -z "${why:-}" ] || summary+=("        $why")
fi

# --- Harness self-test ------------------------------------------------------
# run.sh --rig-warn has the guest's init also load the test-only
# qtimer_rig.ko (scripts/vm/rig-module), which WARNs at load and prints a
# line that reads as the hrtimer core's hang message.  The rig must turn
# that into a failed run that names the WARN, the hang message and the W
# taint; a rig that reports success here would hide real splats.
if [ "$selftest" != 0 ]; then
	stage "harness self-test: stock-6.1 with --rig-warn must fail"
	log=$log_dir/harness-selftest.log
	res=$(vm_run harness-selftest stock-6.1 --tag harness-selftest --rig-warn --suites rig_test)
	read -r _ failed_count _ <<<"$res"
	if [ -n "$res" ] && [ "${failed_count:-0}" -gt 0 ] &&
	   grep -q 'kernel splat on the console: .*WARNING:' "$log" &&
	   grep -q 'kernel splat on the console: .*hrtimer: interrupt took' "$log" &&
	   grep -q 'kernel tainted .*W(warning)' "$log"; then
		tally 1 0 0 "harness self-test (the rig caught the WARN, the hang message and the W taint)"
	else
		tally 0 1 0 "harness self-test (the rig did NOT report the deliberate WARN, hang message and W taint)"
	fi
fi

stage "done in $((SECONDS - start))s"
# The slowest suite runs over all kernels: where the hour goes, for
# whoever has to keep make check within it on a slow host.
while read -r secs k name; do
	summary+=("$(printf '  slow: %7.1fs %-10s %s' "$secs" "$k" "$name")")
done < <(for k in "${run_kernels[@]}"; do
		sed -n 's/^vm: [^ ]*: \([A-Za-z0-9_]*\): .* (\([0-9.]*\)s) exit=.*/\2 '"$k"' \1/p' \
			"$log_dir/$k.log" 2>/dev/null
	done | sort -rn | head -n 8)
# Every stage's counts once more, so that the end of the output (all a CI
# log may keep) says what failed.
printf 'check: %s\n' "${summary[@]}" >&2
print_totals
exit
}
