#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install, from Debian's archive only, everything qtimer's build, tests,
# demo and benchmarks need, and unpack the test kernels into build/kernels.
# Idempotent and quick when everything is already there.  Run as root.
#
#   setup.sh              everything
#   setup.sh toolchain    only what building the debug kernels needs
#                         (scripts/debug-kernel/build.sh)
#
# bookworm-backports (for the 6.12 kernels) is enabled by copying the mirror
# URI of the machine's existing Debian source entry: no host name is written
# here, so the script follows whatever mirror the machine is configured for.
# scripts/setup-sources.sh has APT read the entries (apt-get indextargets);
# scripts/setup-sources-test.sh tests it.
#
# Room it needs, measured after a setup and a full make check (amd64):
#
#   build/src        linux-source-6.1, unpacked               1.5 GB,
#                    and tools/net/ynl of linux-source-6.12    1 MB
#   build/kernels    the three Debian test kernels            0.3 GB
#   /var/cache/qtimer  debug-6.1 and kcsan-6.1 (make check),    2.1 GB,
#                    the machine's, shared by every clone, with the
#                    source they build from; 0.6 GB more each time
#                    their config or scripts/debug-kernel/build.sh
#                    changes (old builds stay; QTIMER_CACHE moves it)
#   build/vm         module copies, initramfs images, logs    1.0 GB
#   packages         in /usr and /lib/modules                 1.5 GB,
#                    plus their .deb files in /var/cache/apt  0.7 GB
#                    ("apt-get clean" gives that back)
#
# so about 6 GB of disk on a fresh machine (it stops before downloading
# anything when there is clearly not enough), and 6 GB of memory: each
# test VM gets 4 GB (scripts/vm/run.sh) and the host builds kernels
# besides (it warns when there is less).

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kernels_dir="$top/build/kernels"
stamp_dir="$top/build/stamps"
# shellcheck source-path=SCRIPTDIR source=setup-sources.sh
. "$top/scripts/setup-sources.sh"

log() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (it installs packages)"

# What scripts/debug-kernel/build.sh needs ("setup.sh toolchain" installs
# only these; make check then builds the debug kernels while the rest
# installs).  The whole compiler is here, gcc-multilib included, so that
# nothing installed later can upgrade gcc under a running build.
toolchain_packages=(
	build-essential make gcc bc flex bison libelf-dev libssl-dev cpio dwarves
	kmod xz-utils rsync python3
	# i386 libc and gcc -m32, for the 32-bit ABI suites (selftests/compat32)
	gcc-multilib
	linux-source-6.1
)

host_packages=(
	"${toolchain_packages[@]}"
	qemu-system-x86 busybox-static
	liburing-dev libuv1-dev libmnl-dev pkg-config
	# libtimerdev's 32-bit time tests, where the host's kernel has no IA32
	# emulation to run them natively
	qemu-user
	# the kselftest tree's ELF files find the libraries bundled with them
	# (selftests/kselftest-install.sh sets their RUNPATH)
	patchelf
	gnuplot-nox valgrind sparse python3-docutils python3-yaml
	groff-base
	# the real dkms, for scripts/dkms-check.sh (it never touches /var/lib/dkms)
	dkms
	# the Debian packages (debian/, scripts/deb-check.sh): dpkg-buildpackage,
	# debhelper 13 with dh-dkms, fakeroot for the binary targets, lintian
	dpkg-dev debhelper dh-dkms fakeroot lintian
	# tools/net/ynl, the kernel's netlink CLI, which qtimer_ynl_*_test run
	# in the VM against Documentation/netlink/specs/qtimer.yaml; jsonschema
	# is what it checks a spec against its schema with
	linux-source-6.12 python3-jsonschema
)

backports_list=/etc/apt/sources.list.d/qtimer-bookworm-backports.sources

enable_backports() {
	local uri
	if apt-cache policy 2>/dev/null | grep -q 'bookworm-backports'; then
		return 0
	fi
	uri=$(debian_mirror_uri bookworm /etc/apt "$backports_list") ||
		die "no Debian source entry for bookworm in /etc/apt/sources.list or" \
			"/etc/apt/sources.list.d/*.{list,sources} to copy the backports mirror from"
	log "enabling bookworm-backports from the existing Debian mirror entry"
	cat > "$backports_list" <<-SRC
	Types: deb
	URIs: $uri
	Suites: bookworm-backports
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	SRC
	apt_updated=0
}

apt_updated=0
apt_update_once() {
	if [ "$apt_updated" = 0 ]; then
		log "apt-get update"
		apt-get update -qq >/dev/null
		apt_updated=1
	fi
}

missing_packages() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || echo "$p"
	done
}

apt_install() {
	local missing
	missing=$(missing_packages "$@")
	[ -n "$missing" ] || return 0
	apt_update_once
	log "installing: $(echo $missing)"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# free_mb PATH: the megabytes free for root on PATH's file system.
free_mb() { df -Pk "$1" | awk 'NR == 2 { print int($4 / 1024) }'; }

# Stop before downloading anything when the disk clearly cannot hold what
# is still to come (the sizes in the comment at the top), rather than
# failing halfway through an unpack or a kernel build; warn when memory
# is short of what a test VM gets.
check_room() {
	local build_mb=1700 apt_mb=0 build_free apt_free mem_mb k
	local what="the kernel source, test and debug kernels and VM payloads"
	# Always to come: debug kernels and VM payloads (make check).
	[ -e "$stamp_dir/source-6.1" ] || build_mb=$((build_mb + 1500))
	for k in stock-6.1 stock-6.12 rt-6.12; do
		[ -s "$kernels_dir/$k/vmlinuz" ] || build_mb=$((build_mb + 150))
	done
	[ -z "$(missing_packages "${host_packages[@]}")" ] || apt_mb=2000
	build_free=$(free_mb "$top/build")
	apt_free=$(free_mb /var/cache/apt)
	if [ "$apt_mb" != 0 ] && [ "$(stat -c %d "$top/build")" = "$(stat -c %d /var/cache/apt)" ]; then
		build_mb=$((build_mb + apt_mb))
		what+=", and packages"
		apt_mb=0
	fi
	[ "$build_free" -ge "$build_mb" ] ||
		die "needs about $build_mb MB free on the file system of $top/build for $what;" \
			"$build_free MB are free (sizes: the comment at the top of $0)"
	[ "$apt_free" -ge "$apt_mb" ] ||
		die "needs about $apt_mb MB free on the file system of /var/cache/apt and /usr for packages;" \
			"$apt_free MB are free"
	mem_mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
	if [ "$mem_mb" -lt 6000 ]; then
		log "warning: $mem_mb MB of memory: each test VM gets 4 GB (scripts/vm/run.sh)" \
			"and kernel builds run beside it; 6 GB or more is safe"
	fi
}

# Resolve a kernel flavour's meta-package (e.g. linux-image-cloud-amd64) to
# the versioned package it currently depends on, in a given suite.
resolve_versioned() {
	local meta=$1 suite=$2
	apt-cache -t "$suite" depends "$meta" 2>/dev/null |
		awk -v pfx="${meta%%-cloud-amd64}" '/Depends:/ && $2 ~ /^linux-(image|headers)-[0-9]/ { print $2; exit }'
}

# Unpack a kernel image package into build/kernels/NAME without installing
# it: the host's /boot and boot loader are never touched.
unpack_kernel() {
	local name=$1 suite=$2 flavour=$3 image headers dir tmp
	dir="$kernels_dir/$name"
	if [ -s "$dir/vmlinuz" ] && [ -e "$dir/release" ] &&
	   [ -d "/lib/modules/$(cat "$dir/release")/build" ]; then
		return 0
	fi
	apt_update_once
	image=$(resolve_versioned "linux-image-$flavour" "$suite")
	headers=$(resolve_versioned "linux-headers-$flavour" "$suite")
	[ -n "$image" ] && [ -n "$headers" ] || die "cannot resolve linux-image/headers-$flavour in $suite"
	# Signed images are only a meta layer; the -unsigned one holds the kernel.
	case "$image" in *-unsigned) ;; *) apt-cache show "$image-unsigned" >/dev/null 2>&1 && image="$image-unsigned" ;; esac
	log "kernel $name: $image + $headers ($suite)"
	# Backports' 6.12 headers depend on their kernel image, so APT
	# installs that on the host too, and its postinst hook builds an
	# initramfs for a kernel this machine never boots: minutes of CPU
	# under the debug-kernel builds on a fresh machine (the hook skips
	# itself for INITRD=No, as for kernels that need no initramfs).
	INITRD=No DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends -t "$suite" "$headers" >/dev/null
	tmp=$(mktemp -d)
	# APT downloads as its sandbox user, which must be able to write here.
	chown _apt "$tmp" 2>/dev/null || true
	(cd "$tmp" && apt-get download -qq -t "$suite" "$image" >/dev/null)
	rm -rf "$dir" && mkdir -p "$dir"
	dpkg-deb -x "$tmp"/*.deb "$dir/root"
	rm -rf "$tmp"
	ln -sf "$(cd "$dir/root/boot" && ls vmlinuz-* | head -n1 | sed 's|^|root/boot/|')" "$dir/vmlinuz"
	basename "$(ls -d "$dir"/root/lib/modules/* | head -n1)" > "$dir/release"
	[ -d "/lib/modules/$(cat "$dir/release")/build" ] || die "headers for $(cat "$dir/release") did not install a build directory"
}

# The 6.1 source tree: the selftests take kselftest_harness.h from it, the
# lint checkpatch.pl and its build of the module for i386.  (The debug
# kernels unpack their own, patched copy: scripts/debug-kernel/build.sh.)
unpack_source() {
	local tarball dest="$top/build/src"
	tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n1)
	[ -n "$tarball" ] || die "linux-source-6.1 is installed but has no tarball in /usr/src"
	if [ -e "$stamp_dir/source-6.1" ] && [ "$(cat "$stamp_dir/source-6.1")" = "$tarball $(stat -c %Y "$tarball")" ]; then
		return 0
	fi
	log "unpacking $tarball"
	rm -rf "$dest/linux-source-6.1" && mkdir -p "$dest"
	tar -C "$dest" -xf "$tarball"
	echo "$tarball $(stat -c %Y "$tarball")" > "$stamp_dir/source-6.1"
}

# Of the 6.12 source, only the YNL library and CLI (tools/net/ynl) and the
# schemas it validates a spec against (Documentation/netlink/*.yaml): the
# suites qtimer_ynl_*_test take them into the VM.  6.12 because 6.1 has no
# YNL at all (it came with 6.3).
unpack_ynl() {
	local tarball=/usr/src/linux-source-6.12.tar.xz dest="$top/build/src" id
	[ -f "$tarball" ] || die "linux-source-6.12 is installed but $tarball is missing"
	id="$tarball $(stat -c %Y "$tarball")"
	if [ -e "$stamp_dir/ynl-6.12" ] && [ "$(cat "$stamp_dir/ynl-6.12")" = "$id" ]; then
		return 0
	fi
	log "unpacking tools/net/ynl from $tarball"
	rm -rf "$dest/linux-source-6.12" && mkdir -p "$dest"
	tar -C "$dest" -xf "$tarball" --wildcards --no-wildcards-match-slash \
		linux-source-6.12/tools/net/ynl 'linux-source-6.12/Documentation/netlink/*.yaml'
	echo "$id" > "$stamp_dir/ynl-6.12"
}

mkdir -p "$kernels_dir" "$stamp_dir"
case "${1:-}" in
"") ;;
toolchain)
	check_room
	apt_install "${toolchain_packages[@]}"
	log "toolchain ready"
	exit 0
	;;
*) die "usage: setup.sh [toolchain]" ;;
esac

check_room
enable_backports
apt_install "${host_packages[@]}"
unpack_source
unpack_ynl
unpack_kernel stock-6.1 bookworm cloud-amd64
unpack_kernel stock-6.12 bookworm-backports cloud-amd64
unpack_kernel rt-6.12 bookworm-backports rt-amd64
log "ready"
