# SPDX-License-Identifier: GPL-2.0
#
# Shared by the Makefiles that recurse into components for `make guest`.
#
# $(call has_target,TARGET,MAKEFILE): non-empty when MAKEFILE has a rule
# line naming TARGET before its colon ("guest:", "all guest:").
has_target = $(shell grep -Eqs '^([^:=[:space:]]+[[:space:]]+)*$(1)[[:space:]]*::?([^=]|$$)' $(2) && echo y)
