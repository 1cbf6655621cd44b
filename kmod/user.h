/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The caps on timers, per file and per user, and the per-user count that
 * the latter is checked against.
 */
#ifndef _QT_USER_H
#define _QT_USER_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/uidgid.h>

struct user_namespace;

extern unsigned long qt_max_timers_per_fd;
extern unsigned long qt_max_timers_per_user;

/*
 * Per-user timer accounting, for max_timers_per_user, as the kernel's
 * ucounts do it (whose types a module cannot add to): one record per user
 * namespace and uid, charged together with the record of the namespace's
 * owner in the parent namespace, up to the initial one.  So the uids of a
 * user namespace share the allowance of whoever created it, however many
 * uids it maps, and each level is held to the cap.
 */
struct qt_user {
	struct hlist_node node;		/* qt_users, qt_users_lock */
	struct user_namespace *ns;	/* a reference */
	kuid_t uid;
	refcount_t ref;
	atomic_long_t nr_timers;
	struct qt_user *parent;		/* (ns->parent, ns->owner), a reference */
};

struct qt_user *qt_user_get(void);
void qt_user_put(struct qt_user *user);
bool qt_user_charge_n(struct qt_user *user, long n);
void qt_user_uncharge_n(struct qt_user *user, long n);

#endif /* _QT_USER_H */
