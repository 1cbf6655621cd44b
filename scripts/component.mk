# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Copyright (C) 2026 The qtimer authors
#
# What the component Makefiles (selftests/, libtimerdev/, qtimerctl/,
# bench/, ...) share, said once here.  Include it before OUT or KSFT_DIR
# is used.  It defines no rule, so it cannot become a default goal.
#
# KSFT_DIR: kselftest_harness.h and its kin, from the 6.1 kernel source
# that scripts/setup.sh unpacks; KSFT_DIR= on the command line or in the
# environment names others.
#
# guest_check: a guest build writes only below an absolute $(OUT)
# (payloads for several kernels may be built at once, see the top
# Makefile), and the components place their intermediates there too.  So
# `make guest` without one stops here, while make reads the Makefiles,
# before anything is built; a rule that writes below $(OUT) without being
# the `guest` goal can make $(guest_check) its first recipe line.

ifeq ($(origin KSFT_DIR),undefined)
KSFT_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)/build/src/linux-source-6.1/tools/testing/selftests
endif

guest_check = $(if $(filter /%,$(OUT)),,$(error make guest: OUT=<absolute dir> is required))
ifneq ($(filter guest,$(MAKECMDGOALS)),)
$(guest_check)
endif
