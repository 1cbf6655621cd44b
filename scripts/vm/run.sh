#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one test kernel in QEMU with qtimer.ko and the selftests, and judge
# the run (scripts/vm/judge.sh reads the logs once the VM has exited).
#
#   run.sh KERNEL [--suites GLOB[,GLOB]] [--modparams "a=1 b=2"]
#                 [--run "prog args"] [--timeout SEC] [--vm-timeout SEC]
#                 [--tag NAME] [--cmdline "extra kernel args"] [--rig-warn]
#                 [--module PATH/qtimer.ko] [-v]
#
# KERNEL is a name scripts/vm/kernel.sh resolves (stock-6.1, stock-6.12,
# rt-6.12, debug-6.1, kcsan-6.1).  The guest payload comes from
# "make guest" (see the top Makefile); scripts/vm/init.c (with
# init_report.c and init_run.c) is PID 1 and reports on the second serial
# port.  The suites run through the kernel's
# kselftest runner, from the payload's kselftest tree ($(OUT)/kselftest,
# "make -C selftests install"'s layout).  Without --suites the VM runs the
# suites selftests/suites.manifest lists for KERNEL; --suites runs those
# its globs name, and a glob that names no suite of the manifest or the
# payload is an error.  --timeout is per suite (it goes into the tree's
# settings file, which the runner enforces; default: the settings file's
# own) or per --run program (default 300); --vm-timeout bounds the whole
# VM from the host.  --run runs one
# program (e.g. /bin/qtimer-demo) instead of the suites and shows its output;
# its words are split as a shell would split them, quotes included.
# --rig-warn is the rig's self-test: the init also loads the test-only
# qtimer_rig.ko (scripts/vm/rig-module), which WARNs and prints a forged
# "hrtimer: interrupt took" line, and the run must then fail naming the
# WARNING, the hang message and taint W (scripts/check.sh checks that).
# --module boots with that prebuilt qtimer.ko (e.g. one DKMS built:
# scripts/dkms-check.sh) instead of building one from kmod/; it must have
# been built for KERNEL's release, and may be compressed (.ko.xz, .ko.zst,
# .ko.gz, as dkms installs it for a kernel whose modules are).
# -v streams the guest console while it runs.  --accel (or QTIMER_ACCEL)
# is tcg by default; auto uses KVM if a probe boot under KVM works.
# QTIMER_GDB=SOCKET opens QEMU's gdbstub there (bench/profile.py).
# QTIMER_TCG_STALL_NS (default 2 ms): under TCG, an "hrtimer: interrupt
# took" at least this long is taken for the emulator descheduling a
# virtual CPU and shown, not counted (see the splat rules below).
#
# Logs go to build/vm/KERNEL/ (build/vm/KERNEL/TAG/ with --tag): build.log,
# console.log (ttyS0: kernel console and program output), result.log (ttyS1:
# the init's records), qemu.log, and console.bootN.log for each boot that
# died before the init ran and was booted again (see "Boot" below).  The
# run fails on: a suite failure, a crashed, timed-out or unfinished suite,
# a missing "# Totals:" line, a suite the manifest expects (among those
# selected) that has no binary in the payload or never started (one
# failure each), a failed insmod or rmmod, a kmemleak suspect, a splat on
# the console, taint D, W or L, or a missing verdict.  The last line is
#   vm-result: KERNEL passed=P failed=F skipped=S
# (the suites' kselftest totals plus the rig's own failures; a suite that
# skipped itself whole without totals counts as one skip), and the exit
# status is 0 exactly when F is 0.

set -euo pipefail

# All in one compound command: bash reads it whole before running any of
# it, so editing this file cannot upset runs already under way.
{

top=$(cd "$(dirname "$0")/../.." && pwd)
vm_dir=$top/build/vm

usage() {
	sed -n '/^#   run.sh/,/^# -v/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

[ $# -ge 1 ] || usage
kernel=$1
shift
case "$kernel" in -*) usage ;; esac

suites='' modparams='' run_cmd='' suite_timeout='' vm_timeout='' tag='' verbose=0
extra_cmdline='' accel=${QTIMER_ACCEL:-tcg} rig_warn=0 module=''
while [ $# -gt 0 ]; do
	case "$1" in
	--suites) suites=$2; shift ;;
	--modparams) modparams=$2; shift ;;
	--run) run_cmd=$2; shift ;;
	--timeout) suite_timeout=$2; shift ;;
	--vm-timeout) vm_timeout=$2; shift ;;
	--tag) tag=$2; shift ;;
	--cmdline) extra_cmdline=$2; shift ;;
	--accel) accel=$2; shift ;;
	--rig-warn) rig_warn=1 ;;
	--module) module=$2; shift ;;
	-v | --verbose) verbose=1 ;;
	*) usage ;;
	esac
	shift
done

name=$kernel${tag:+/$tag}
out_dir=$vm_dir/$kernel${tag:+/$tag}
failed=0 passed=0 skipped=0 problems=()
# shellcheck source=scripts/vm/verdict.sh
. "$top/scripts/vm/verdict.sh"
give_up() { say "error: $*"; failed=$((failed + 1)); exit 1; }

mkdir -p "$out_dir"
# One run per log directory at a time; runs with different tags share only
# the kernel's module build copy, which is locked while the payload builds.
exec 8>"$out_dir/.run.lock"
if ! flock -n 8; then
	say "waiting for another run in ${out_dir#$top/}"
	flock 8
fi

start=$SECONDS

# --- Kernel, init and guest payload ----------------------------------------
kinfo=$("$top/scripts/vm/kernel.sh" "$kernel") || give_up "cannot resolve kernel $kernel"
vmlinuz=$(sed -n 's/^vmlinuz=//p' <<<"$kinfo")
kdir=$(sed -n 's/^kdir=//p' <<<"$kinfo")
release=$(sed -n 's/^release=//p' <<<"$kinfo")

# PID 1 is static and the same for every kernel; build it once, atomically,
# so that concurrent runs for different kernels share it safely, and again
# when one of its files is newer than the build.
init=$vm_dir/init
init_srcs=("$top/scripts/vm/init.c" "$top/scripts/vm/init_report.c" "$top/scripts/vm/init_run.c")
(
	flock 9
	if [ ! -x "$init" ] ||
	   [ -n "$(find "${init_srcs[@]}" "$top/scripts/vm/init.h" -newer "$init")" ]; then
		gcc -static -O2 -Wall -Wextra -Werror -o "$init.tmp.$$" "${init_srcs[@]}"
		mv -f "$init.tmp.$$" "$init"
	fi
) 9>"$vm_dir/.init.lock" || give_up "building scripts/vm/init.c failed"

# The user-space part does not depend on the kernel: check.sh builds it
# once and hands it to every run in QTIMER_GUEST_USER, so that only the
# modules (qtimer.ko and the rig's qtimer_rig.ko) are built per kernel.
guest=$out_dir/guest
rm -rf "$guest"
# A --module built for another release would only fail at insmod, inside
# the guest, as "Invalid module format": say so here instead.
if [ -n "$module" ]; then
	[ -f "$module" ] || give_up "--module $module: no such file"
	module_release=$(modinfo -F vermagic "$module" 2>/dev/null | cut -d' ' -f1)
	[ "$module_release" = "$release" ] ||
		give_up "--module $module was built for '${module_release:-?}', not for $kernel ($release)"
fi
if [ -n "${QTIMER_GUEST_USER:-}" ]; then
	what=(guest-rig-module)
	[ -n "$module" ] || what=(guest-module "${what[@]}")
elif [ -n "$module" ]; then
	what=(guest-rig-module guest-user)
else
	what=(guest)
fi
say "building ${what[*]} for $release${module:+ (qtimer.ko: $module)} (log: ${out_dir#$top/}/build.log)"
if ! flock "$vm_dir/$kernel/.build.lock" \
	make -j"$(nproc)" -C "$top" --no-print-directory "${what[@]}" KERNEL="$kernel" KDIR="$kdir" OUT="$guest" \
	>"$out_dir/build.log" 2>&1; then
	tail -n 40 "$out_dir/build.log" >&2
	give_up "make ${what[*]} failed"
fi
if [ -n "${QTIMER_GUEST_USER:-}" ]; then
	cp -a "$QTIMER_GUEST_USER/." "$guest/" || give_up "cannot copy $QTIMER_GUEST_USER"
fi
# The init loads /qtimer.ko with insmod, uncompressed.
if [ -n "$module" ]; then
	case "$module" in
	*.xz) unpack=(xz -dc) ;;
	*.zst) unpack=(zstd -qdc) ;;
	*.gz) unpack=(gzip -dc) ;;
	*) unpack=(cat) ;;
	esac
	"${unpack[@]}" "$module" >"$guest/qtimer.ko" || give_up "cannot unpack $module"
fi

# --- Suites -----------------------------------------------------------------
# The suites this run must run: the manifest's for the kernel, or those the
# --suites globs name.  Without this, a suite that was not built, was
# renamed or never started would only be missing from the totals.
suites_sh=$top/scripts/vm/suites.sh
expected=() unbuilt=()
if [ -z "$run_cmd" ]; then
	if [ -z "$suites" ]; then
		list=$("$suites_sh" list "$kernel") ||
			give_up "cannot read the suites of $kernel from selftests/suites.manifest"
		[ -n "$list" ] || give_up "selftests/suites.manifest lists no suite for $kernel"
		suites=$(paste -sd, - <<<"$list")
	else
		list=$("$suites_sh" select "$suites" "$guest") ||
			give_up "--suites '$suites': an entry names no suite"
	fi
	[ -z "$list" ] || mapfile -t expected <<<"$list"
	[ "${#expected[@]}" = 0 ] ||
		mapfile -t unbuilt < <("$suites_sh" unbuilt "$guest" "${expected[@]}" || true)
	[ "${#unbuilt[@]}" = 0 ] ||
		problem_n "${#unbuilt[@]}" \
			"selftests/suites.manifest lists, but the payload has no binary of: ${unbuilt[*]}"
	# Built but not listed: such a suite runs only when a glob names it
	# (make check fails on it: check-payload in scripts/vm/suites.sh).
	listed=$("$suites_sh" all) || give_up "selftests/suites.manifest is malformed"
	for f in "$guest"/selftests/*; do
		[ -f "$f" ] && [ -x "$f" ] || continue
		grep -qxF "$(basename "$f")" <<<"$listed" ||
			say "note: $(basename "$f") is not in selftests/suites.manifest: it runs only when --suites names it"
	done
fi

# The suites' bound: the runner's, from the kselftest tree's settings
# (selftests/settings), unless --timeout says otherwise.
ksft_collection=qtimer
settings=$guest/kselftest/$ksft_collection/settings
if [ -z "$run_cmd" ]; then
	[ -r "$settings" ] || give_up "the payload has no kselftest tree (${settings#$top/})"
	settings_timeout=$(sed -n 's/^timeout=\([0-9][0-9]*\)$/\1/p' "$settings" | tail -n 1)
	[ -n "$settings_timeout" ] || give_up "${settings#$top/} has no timeout= line"
	suite_timeout=${suite_timeout:-$settings_timeout}
fi
suite_timeout=${suite_timeout:-300}

# --- Initramfs ----------------------------------------------------------
root=$out_dir/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,usr/local/lib,lib,lib64,etc,dev,proc,sys,tmp,run,kselftest}
cp "$init" "$root/init"
cp "$guest/qtimer.ko" "$root/qtimer.ko"
cp "$guest/qtimer_rig.ko" "$root/qtimer_rig.ko"
[ ! -d "$guest/kselftest" ] || cp -a "$guest/kselftest/." "$root/kselftest/"
[ -n "$run_cmd" ] || [ "$suite_timeout" = "$settings_timeout" ] ||
	sed -i "s/^timeout=.*/timeout=$suite_timeout/" "$root/kselftest/$ksft_collection/settings"
# The suites run from the kselftest tree alone, which bundles the programs
# and libraries they need (selftests/kselftest-install.sh): nothing else of
# the payload is installed, so that every run proves the tree stands alone
# on a host that has only the module and glibc.  A --run program (the
# demo) gets the payload's programs in /bin and libraries in
# /usr/local/lib instead.
if [ -n "$run_cmd" ]; then
	cp -a "$guest/bin/." "$root/bin/"
	cp -a "$guest/lib/." "$root/usr/local/lib/"
fi
cp "$(command -v busybox)" "$root/bin/busybox"
# The kernel's runner.sh bounds each suite with "/usr/bin/timeout
# --foreground", and runs it unbounded when there is none; busybox's
# timeout has no --foreground, so the guest gets coreutils' (its shared
# libraries come with the rest, below).
[ -x /usr/bin/timeout ] && /usr/bin/timeout --foreground 1 true ||
	give_up "/usr/bin/timeout is not coreutils' (the kselftest runner needs --foreground)"
cp /usr/bin/timeout "$root/usr/bin/timeout"
# The module installed as `make install` and the packages put it, with
# the real kmod's depmod run over it, and kmod's modprobe where the kernel
# calls it (CONFIG_MODPROBE_PATH): what qtimer_autoload_test needs to load
# the module by its aliases (first open of the device node, the netlink
# family) after taking it out.
[ -x /usr/bin/kmod ] || give_up "no /usr/bin/kmod (Debian package kmod)"
cp /usr/bin/kmod "$root/usr/bin/kmod"
ln -s /usr/bin/kmod "$root/sbin/modprobe"
ln -s /usr/bin/kmod "$root/sbin/depmod"
mkdir -p "$root/lib/modules/$release/extra"
cp "$guest/qtimer.ko" "$root/lib/modules/$release/extra/qtimer.ko"
depmod -b "$root" "$release" 2>"$out_dir/depmod.log" ||
	give_up "depmod failed: $(cat "$out_dir/depmod.log")"
printf 'root:x:0:0:root:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
# The kernel opens /dev/console for init before devtmpfs is mounted.
mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true

# Shared libraries and the dynamic loader of every ELF in the payload, at
# the paths the loader looks for them.
is_elf() { [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }
while IFS= read -r -d '' f; do
	is_elf "$f" || continue
	LD_LIBRARY_PATH=$guest/lib ldd "$f" 2>/dev/null |
		awk '/=> \// { print $3 } /^[[:space:]]*\// { print $1 }' || true
done < <(find "$root/kselftest" "$root/bin" "$root/usr/bin" "$root/usr/local/lib" -type f -print0) |
	sort -u | while IFS= read -r lib; do
	case "$lib" in "$guest"/* | "$root"/*) continue ;; esac
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done

# The suites' globs go into the initramfs, not onto the command line:
# x86's is at most 2047 bytes (COMMAND_LINE_SIZE), which a kernel's whole
# list (80 suites) passes, and the kernel cuts what is over silently.
[ -n "$run_cmd" ] || printf '%s\n' "${suites// /,}" >"$root/suites"

cpio=$out_dir/initramfs.cpio
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc -R 0:0 --quiet) >"$cpio"

# --- Kernel command line ------------------------------------------------
# The init decodes %XX; quotes and % cannot go on the command line as is.
# encode STRING [KEEP]: escape all but a safe set of bytes plus those in KEEP.
encode() {
	local s=$1 keep=${2:-} out='' c i
	local LC_ALL=C
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case "$c" in
		[A-Za-z0-9=,./_:+*?@\[\]-]) out+=$c ;;
		*) if [[ -n "$keep" && "$keep" == *"$c"* ]]; then out+=$c; else out+=$(printf '%%%02X' "'$c"); fi ;;
		esac
	done
	printf '%s' "$out"
}
cmdline="console=ttyS0 panic=-1 printk.time=1 printk.devkmsg=on loglevel=7"
# slab_nomerge: SLUB otherwise merges the qtimer_timer cache into another
# of its size, /proc/slabinfo lists only that one, and the suites that
# count the module's timer objects there (qtimer_lifecycle_memory_test)
# have nothing to count.
cmdline+=" slab_nomerge"
# tsc=reliable: the clocksource watchdog otherwise compares the TSC with
# the HPET, which under TCG drift apart whenever the host is slow to run
# a vCPU, marks the TSC unstable in the middle of a run, and flips the
# sched_clock static branch: QEMU's multi-threaded TCG can then run the
# stale translation of the patched text (see "Boot" below), and 6.12
# died so, "Oops: int3" in sched_clock_cpu() 118 s into a make check.
# TCG's TSC is the host's, which QEMU keeps from going back.
cmdline+=" tsc=reliable"
# (--run runs its program instead of the suites.)
cmdline+=" qtimer.timeout=$suite_timeout"
[ -z "$modparams" ] || cmdline+=" qtimer.modparams=\"$(encode "$modparams" ' ')\""
if [ -n "$run_cmd" ]; then
	# Split like a shell would (quotes group words), without evaluating.
	mapfile -d '' words < <(xargs printf '%s\0' <<<"$run_cmd") ||
		give_up "cannot split --run '$run_cmd'"
	enc_words=()
	for w in "${words[@]}"; do enc_words+=("$(encode "$w")"); done
	cmdline+=" qtimer.run=\"${enc_words[*]}\""
fi
[ "$rig_warn" = 0 ] || cmdline+=" qtimer.rig_warn=1"
[ -z "$extra_cmdline" ] || cmdline+=" $extra_cmdline"
# A longer one would lose its end without a word (see /suites above).
[ "${#cmdline}" -lt 2048 ] ||
	give_up "the kernel command line is ${#cmdline} bytes, over x86's 2047: $cmdline"
echo "$cmdline" >"$out_dir/cmdline"

# --- Boot -----------------------------------------------------------------
if [ -n "$run_cmd" ]; then
	nr_programs=1
else
	nr_programs=0
	IFS=, read -ra globs <<<"$suites"
	for f in "$guest"/selftests/*; do
		for g in "${globs[@]}"; do
			# shellcheck disable=SC2053
			if [[ $(basename "$f") == $g ]]; then nr_programs=$((nr_programs + 1)); break; fi
		done
	done
fi
# Boot, rmmod and two kmemleak scans take well under three minutes even on
# a KASAN kernel under TCG; a suite is bounded by its own timeout (the
# init bounds the whole runner a little below this).
[ -n "$vm_timeout" ] || vm_timeout=$((180 + nr_programs * (suite_timeout + 10)))

# KVM only when asked for and proven: on these build machines nested KVM
# boots nothing and hangs (and "-cpu host" aborts on an MSR), so TCG is the
# default.  QTIMER_ACCEL=auto (or --accel auto) boots this kernel once under
# KVM with 30 s to reach a verdict, and remembers the answer until the host
# reboots.
if [ "$accel" = auto ]; then
	probe_cache=$vm_dir/kvm-probe
	boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
	if [ "$(sed -n 1p "$probe_cache" 2>/dev/null)" != "$boot_id" ]; then
		verdict_kvm=no
		if [ -w /dev/kvm ]; then
			say "probing KVM (up to 30s)"
			rm -f "$out_dir/kvm-probe.result"
			# (In a subshell, whose stderr also takes bash's "Killed".)
			(timeout -s KILL 30 qemu-system-x86_64 -accel kvm -smp 1 -m 1G -display none \
				-nodefaults -monitor none -no-reboot -kernel "$vmlinuz" -initrd "$cpio" \
				-append "console=ttyS0 panic=-1 qtimer.run=/bin/true" -serial null \
				-serial "file:$out_dir/kvm-probe.result" \
				-device isa-debug-exit,iobase=0xf4,iosize=0x04 </dev/null) >/dev/null 2>&1 || true
			grep -q '^qtimer-vm: verdict pass' "$out_dir/kvm-probe.result" 2>/dev/null && verdict_kvm=yes
		fi
		printf '%s\n%s\n' "$boot_id" "$verdict_kvm" >"$probe_cache"
	fi
	if [ "$(sed -n 2p "$probe_cache")" = yes ]; then accel=kvm; else accel=tcg; fi
fi

# No CMPXCHG16B: under QEMU 7.2's TCG the flags after a CMPXCHG16B (SLUB's
# per-CPU fast path) can come out as garbage, and 6.12 then dies at boot
# about every other time, with a #DB WARNING, a double fault in
# kmem_cache_alloc or a corrupted pointer.  Without the feature (8 of 8
# boots clean, against 3 of 5 crashed with it) the kernel takes SLUB's
# locked path instead.
# RDRAND: qemu64 lacks it, and with no other source of entropy in the
# guest (no virtio-rng) its crng was never ready in a whole run, so that
# every get_random_u32() (SLUB takes one per new slab) ran a BLAKE2s
# extraction: a tenth of arming 1M timers.  Any x86 machine of the last
# decade has it, and TCG emulates it from the host's getrandom().
cpu=${QTIMER_CPU:-qemu64,-cx16,+rdrand}
# 2 GiB for the sanitizer kernels: kmemleak's two scans after the run walk
# every page's struct page, and under TCG they took 127 s of debug-6.1's
# run with 4 GiB against 55 s with 2 GiB (its boot, with KASAN's shadow to
# set up, 56 s against 23 s).  Their suites scale their timer counts down
# and pass in either.  QTIMER_VM_MEM overrides.
case $kernel in
debug-*|kcsan-*) mem=${QTIMER_VM_MEM:-2G} ;;
*) mem=${QTIMER_VM_MEM:-4G} ;;
esac
console=$out_dir/console.log
result=$out_dir/result.log
rm -f "$console" "$result" "$out_dir"/console.boot*.log
qemu=(
	qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -smp 4 -m "$mem"
	-nographic -nodefaults -monitor none -no-reboot
	-kernel "$vmlinuz" -initrd "$cpio" -append "$cmdline"
	-serial "file:$console" -serial "file:$result"
	-device isa-debug-exit,iobase=0xf4,iosize=0x04
)
# A gdbstub for bench/profile.py, which samples the vCPUs through it.
[ -z "${QTIMER_GDB:-}" ] || qemu+=(-gdb "unix:$QTIMER_GDB,server=on,wait=off")
# A kernel that dies before PID 1 runs has run nothing of ours: the module
# is not loaded, no test has started.  Under TCG that happens: QEMU 7.2's
# multi-threaded TCG can run a stale translation of kernel text another
# vCPU has just patched, and 6.12 then dies at boot, here once in about
# 30 boots, with "Oops: int3" in a static branch the late initcalls flip
# ("sched_clock: Marking stable").  Such a boot is shown, kept as
# console.bootN.log and booted again, up to QTIMER_BOOTS (3) times in all.
# Only a kernel that said it died (an oops, a panic), or that went silent
# before the init's "boot" record (the same stale translation, met on
# 6.1 once in about 40 boots: the console stops at "sched_clock: Marking
# stable" with no oops, and the guest would wait out the whole limit), is
# booted again, and only before that record: from there on everything
# counts.  Silent means QTIMER_BOOT_SILENCE (180) seconds without a byte
# on the console; a debug kernel's slowest boot step, KASAN's shadow, is
# well under that.  QTIMER_BOOT_FREEZE=N starts boot N with its vCPUs
# stopped, as such a hang (to test this).
boots=${QTIMER_BOOTS:-3}
boot_silence=${QTIMER_BOOT_SILENCE:-180}
# A wedged guest (a stall, a lockup, a panic that did not power off) never
# reaches its verdict: give the kernel a little time to say more, then stop
# it instead of waiting for the host timeout.  Likewise a guest that gave
# its verdict but did not exit.
doomed_re='rcu: INFO: .*detected stall|self-detected stall|soft lockup|hard LOCKUP|blocked for more than|Kernel panic'
for ((boot = 1; ; boot++)); do
	say "booting $release ($accel, $cpu x 4, $mem; ${nr_programs} program(s); limit ${vm_timeout}s)"
	boot_start=$SECONDS
	[ "$verbose" = 0 ] || { : >"$console"; tail -n +1 -F "$console" 2>/dev/null & tail_pid=$!; }
	freeze=()
	[ "${QTIMER_BOOT_FREEZE:-0}" != "$boot" ] || freeze=(-S)
	timeout -k 10 "$vm_timeout" "${qemu[@]}" "${freeze[@]}" </dev/null >"$out_dir/qemu.log" 2>&1 &
	qemu_pid=$!
	doomed_at='' verdict_at='' stopped_early='' hung='' booted=''
	console_size=-1 quiet_since=$SECONDS
	while kill -0 "$qemu_pid" 2>/dev/null; do
		sleep 1
		if [ -z "$booted" ]; then
			if grep -aq '^qtimer-vm: boot ' "$result" 2>/dev/null; then
				booted=1
			elif [ "$(stat -c %s "$console" 2>/dev/null || echo 0)" != "$console_size" ]; then
				console_size=$(stat -c %s "$console" 2>/dev/null || echo 0)
				quiet_since=$SECONDS
			elif [ $((SECONDS - quiet_since)) -ge "$boot_silence" ]; then
				hung="the console silent for ${boot_silence}s"
				stopped_early="silent ${boot_silence}s before the init started"
				kill "$qemu_pid" 2>/dev/null || true
				break
			fi
		fi
		if [ -z "$doomed_at" ] && grep -aqE "$doomed_re" "$console" 2>/dev/null; then
			doomed_at=$SECONDS
			say "the guest looks wedged (see console.log); stopping it in 30s"
		fi
		if [ -z "$verdict_at" ] && grep -aq '^qtimer-vm: verdict ' "$result" 2>/dev/null; then
			verdict_at=$SECONDS
		fi
		if { [ -n "$doomed_at" ] && [ $((SECONDS - doomed_at)) -ge 30 ]; } ||
		   { [ -n "$verdict_at" ] && [ $((SECONDS - verdict_at)) -ge 60 ]; }; then
			stopped_early=${doomed_at:+wedged}
			stopped_early=${stopped_early:-no exit 60s after its verdict}
			kill "$qemu_pid" 2>/dev/null || true
			break
		fi
	done
	set +e
	wait "$qemu_pid"
	qemu_rc=$?
	set -e
	[ "$verbose" = 0 ] || { sleep 0.5; kill "$tail_pid" 2>/dev/null; wait "$tail_pid" 2>/dev/null || true; }
	vm_secs=$((SECONDS - boot_start))
	touch "$console" "$result"
	grep -aq '^qtimer-vm: boot ' "$result" && break
	why=$(grep -aoE '(Oops|BUG|general protection fault|double fault|Kernel panic)[^[:cntrl:]]*' "$console" | head -n 1 || true)
	why=${why:-$hung}
	{ [ -n "$why" ] && [ "$boot" -lt "$boots" ]; } || break
	cp "$console" "$out_dir/console.boot$boot.log"
	say "booting again: the boot failed before the init started, boot $boot of $boots: $why (console.boot$boot.log)"
	rm -f "$console" "$result"
done

# --- Verdict ---------------------------------------------------------------
# scripts/vm/judge.sh judges the logs and prints the vm-result line; the
# failures found here before the boot (a suite with no binary) go with them.
judge=(
	"$top/scripts/vm/judge.sh" --kernel "$kernel" --name "$name" --accel "$accel"
	--suites "$suites" --expect "${expected[*]}" --unbuilt "${unbuilt[*]}"
	--failed "$failed" --qemu-status "$qemu_rc" --stopped-early "$stopped_early"
	--vm-timeout "$vm_timeout" --vm-secs "$vm_secs" --elapsed $((SECONDS - start))
)
[ -z "$run_cmd" ] || judge+=(--run)
[ "$rig_warn" = 0 ] || judge+=(--rig-warn)
for p in "${problems[@]}"; do judge+=(--problem "$p"); done
# A judge that cannot start must still fail the run with a vm-result line:
# execfail keeps this shell alive after a failed exec, and without set -e,
# under which bash exits at once there and skips the EXIT trap.
shopt -s execfail
set +e
# shellcheck disable=SC2093 # (execfail: this shell goes on only if exec fails)
exec "${judge[@]}" "$out_dir"
give_up "cannot run scripts/vm/judge.sh"
}
