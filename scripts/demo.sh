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
# shellcheck source=lib/preamble.sh
. "$top/scripts/lib/preamble.sh" demo
kernel=${KERNEL:-stock-6.1}

# Not setup_machine: a failed demo prints no totals, and exits with
# setup.sh's status.
need_root "run as root: scripts/setup.sh installs QEMU and the test kernels" || exit 1
"$top/scripts/setup.sh"

note "booting $kernel in QEMU (software emulation, about half a minute) to run qtimer-demo"
note "---------------------------------------------------------------------"
rc=0
"$top/scripts/vm/run.sh" "$kernel" --tag demo --run /bin/qtimer-demo || rc=$?
note "---------------------------------------------------------------------"
if [ "$rc" = 0 ]; then
	note "done; the guest console is in build/vm/$kernel/demo/console.log"
else
	note "FAILED; see build/vm/$kernel/demo/console.log"
fi
exit "$rc"
