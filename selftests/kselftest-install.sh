#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Lays out the suites of a built payload as a kselftest install tree, the
# one the kernel's "make -C tools/testing/selftests install" makes, so that
# the kernel's own runner runs them, in the test VMs and on any kernel CI
# that runs kselftest trees.  selftests/Makefile's install targets call it.
#
#   kselftest-install.sh PAYLOAD INSTALL_PATH
#
# PAYLOAD is a "make guest-user" output (its suites are in
# PAYLOAD/selftests).  Into INSTALL_PATH go:
#
#   run_kselftest.sh, kselftest/{runner.sh,prefix.pl,module.sh}
#                       the kernel's runner, copied at install time from
#                       the kernel source's tools/testing/selftests
#                       ($KSFT_DIR, default the linux-source-6.1 that
#                       scripts/setup.sh unpacks), never from this tree
#   qtimer/             the collection: every suite of PAYLOAD/selftests,
#                       plus settings (the runner's per-suite timeout) and
#                       config (the kernel options the suites need), both
#                       from selftests/
#   kselftest-list.txt  "qtimer:<suite>", one a line, in lexical order (the
#                       order the suites always ran in); the lines of other
#                       collections already there are kept
#
# One collection for all suites: the runner reads one settings file per
# collection directory, and every suite has had the same bound, so one
# collection says it once (Documentation/testing.rst says more).

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
collection=qtimer
ksft=${KSFT_DIR:-$top/build/src/linux-source-6.1/tools/testing/selftests}

die() { printf 'kselftest-install: %s\n' "$*" >&2; exit 1; }

[ $# = 2 ] || die "usage: kselftest-install.sh PAYLOAD INSTALL_PATH"
payload=$1 dest=$2
[ -d "$payload/selftests" ] || die "$payload/selftests does not exist: build the payload first (make guest-user OUT=$payload)"
runner_files=(run_kselftest.sh kselftest/runner.sh kselftest/prefix.pl kselftest/module.sh)
for f in "${runner_files[@]}"; do
	[ -f "$ksft/$f" ] || die "no $ksft/$f: run scripts/setup.sh (it unpacks linux-source-6.1), or set KSFT_DIR"
done

mkdir -p "$dest/kselftest"
# The kernel's install uses these modes.
install -m 744 "$ksft/run_kselftest.sh" "$dest/"
for f in runner.sh prefix.pl module.sh; do
	install -m 744 "$ksft/kselftest/$f" "$dest/kselftest/"
done

# The collection is ours alone: a suite removed since the last install
# must not linger in it.
rm -rf "${dest:?}/$collection"
mkdir -p "$dest/$collection"
install -m 644 "$top/selftests/settings" "$top/selftests/config" "$dest/$collection/"
suites=()
for f in "$payload"/selftests/*; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	install -m 755 "$f" "$dest/$collection/"
	suites+=("$(basename "$f")")
done
[ "${#suites[@]}" -gt 0 ] || die "$payload/selftests holds no suite"

list=$dest/kselftest-list.txt
{
	[ ! -f "$list" ] || grep -v "^$collection:" "$list" || true
	printf "$collection:%s\n" "${suites[@]}" | LC_ALL=C sort
} >"$list.tmp"
mv "$list.tmp" "$list"
