#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# The benchmark's VM runner lives with the benchmark now, in bench/bench.sh;
# this stays so that `make bench` and the command lines in the
# documentation keep working.  Everything goes through unchanged.

exec "$(dirname "$0")/../bench/bench.sh" "$@"
