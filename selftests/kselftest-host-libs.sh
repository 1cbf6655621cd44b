# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Sourced by selftests/kselftest-install.sh, which bundles every other
# shared library into the kselftest tree, and by
# scripts/kselftest-install-check.sh, which checks that it did.
#
# ksft_from_host LIB: true when LIB (a path or a file name) is one every
# host that runs kselftests has: glibc's and the compiler's unwinder
# (libgcc_s, which glibc's pthread_cancel() loads).
ksft_from_host() {
	case "${1##*/}" in
	linux-vdso.so.* | ld-linux*.so.* | libc.so.* | libm.so.* | libpthread.so.* | \
	libdl.so.* | librt.so.* | libresolv.so.* | libutil.so.* | libgcc_s.so.*)
		return 0 ;;
	esac
	return 1
}
