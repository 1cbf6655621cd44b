// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The library's own version, as the header it was built with says: a
 * program compares it with TD_VERSION_HEX, the version it was built
 * against, to learn which library the dynamic linker gave it.
 */
#include "internal.h"

TD_EXPORT unsigned int td_lib_version(void)
{
	return TD_VERSION_HEX;
}
