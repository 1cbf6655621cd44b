#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make demo": set up the machine (as root), then boot a test kernel in QEMU
# with qtimer loaded and run the demo program, showing what it prints.
# Nothing is loaded into the kernel of the machine this runs on.
#
#   KERNEL=stock-6.12 make demo    another test kernel (default stock-6.1)

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kernel=${KERNEL:-stock-6.1}

if [ "$(id -u)" != 0 ]; then
	echo "demo: run as root: scripts/setup.sh installs QEMU and the test kernels" >&2
	exit 1
fi
"$top/scripts/setup.sh"

echo "demo: booting $kernel in QEMU (software emulation, about half a minute) to run qtimer-demo" >&2
echo "demo: ---------------------------------------------------------------------" >&2
rc=0
"$top/scripts/vm/run.sh" "$kernel" --tag demo --run /bin/qtimer-demo || rc=$?
echo "demo: ---------------------------------------------------------------------" >&2
if [ "$rc" = 0 ]; then
	echo "demo: done; the guest console is in build/vm/$kernel/demo/console.log" >&2
else
	echo "demo: FAILED; see build/vm/$kernel/demo/console.log" >&2
fi
exit "$rc"
