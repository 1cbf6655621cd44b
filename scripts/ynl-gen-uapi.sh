#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# uapi/linux/qtimer_netlink.h is generated from the family's YNL spec,
# Documentation/netlink/specs/qtimer.yaml, by the kernel's own generator
# (tools/net/ynl/ynl-gen-c.py --mode uapi, from linux-source-6.12, which
# scripts/setup.sh unpacks), as mainline's WireGuard and every YNL family
# are: the spec is the one description of the family, its prose included.
#
#   ynl-gen-uapi.sh            write the header from the spec
#   ynl-gen-uapi.sh --check    fail, showing the difference, when the
#                              committed header is not the generator's output
#
# The generator runs in a scratch tree under build/ that looks like the
# kernel's: the spec in Documentation/netlink/specs/, the schemas it is
# validated against in Documentation/netlink/, and a MAINTAINERS file at
# the top, without which ynl-gen-c.py's search for the tree's root never
# ends.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/build/src/linux-source-6.12
gen=$src/tools/net/ynl/ynl-gen-c.py
header=$top/uapi/linux/qtimer_netlink.h
work=$top/build/ynl-gen

die() { echo "ynl-gen-uapi: $*" >&2; exit 1; }

check=0
case "${1:-}" in
--check) check=1 ;;
'') ;;
*) die "usage: $0 [--check]" ;;
esac

[ -f "$gen" ] || die "no $gen: run scripts/setup.sh (it unpacks tools/net/ynl from linux-source-6.12)"
rm -rf "$work"
mkdir -p "$work/Documentation/netlink/specs"
cp "$top/Documentation/netlink/specs/qtimer.yaml" "$work/Documentation/netlink/specs/"
cp "$src"/Documentation/netlink/*.yaml "$work/Documentation/netlink/"
: >"$work/MAINTAINERS"
(cd "$work" && timeout 120 python3 "$gen" --mode uapi --header \
	--spec Documentation/netlink/specs/qtimer.yaml -o "$work/qtimer_netlink.h") ||
	die "ynl-gen-c.py failed"

if [ "$check" = 0 ]; then
	cp "$work/qtimer_netlink.h" "$header"
	exit 0
fi
if ! diff -u "$header" "$work/qtimer_netlink.h"; then
	echo "ynl-gen-uapi: ${header#"$top"/} is not ynl-gen's output of the spec: run scripts/ynl-gen-uapi.sh" >&2
	exit 1
fi
