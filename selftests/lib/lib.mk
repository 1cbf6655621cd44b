# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# libqttest.a, the helpers every test suite shares (selftests/lib/*.c),
# for a Makefile that links them.  Set QT_TESTLIB_DIR (where the objects
# and the archive go: below $(OUT) for a guest build), include this, then
# link $(QT_TESTLIB) and compile with $(QT_TESTLIB_CPPFLAGS).  The library
# is built with flags of its own, the same for every suite, and its header
# is clean under the strictest of them (qtimerctl's -Wextra -Werror).  Its
# rules leave the includer's default goal as it was.

qt_testlib_src := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
qt_testlib_goal := $(.DEFAULT_GOAL)
qt_testlib_objs := $(patsubst $(qt_testlib_src)/%.c,$(QT_TESTLIB_DIR)/%.o,$(wildcard $(qt_testlib_src)/*.c))
QT_TESTLIB := $(QT_TESTLIB_DIR)/libqttest.a
QT_TESTLIB_HEADERS := $(qt_testlib_src)/helpers.h $(abspath $(qt_testlib_src)/../../uapi)/linux/qtimer.h
QT_TESTLIB_CPPFLAGS := -I$(qt_testlib_src) -I$(abspath $(qt_testlib_src)/../../uapi)
QT_TESTLIB_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -pthread

$(qt_testlib_objs): $(QT_TESTLIB_DIR)/%.o: $(qt_testlib_src)/%.c $(QT_TESTLIB_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(QT_TESTLIB_CPPFLAGS) $(QT_TESTLIB_CFLAGS) -c -o $@ $<

$(QT_TESTLIB): $(qt_testlib_objs)
	rm -f $@
	$(AR) rcs $@ $^

.DEFAULT_GOAL := $(qt_testlib_goal)
