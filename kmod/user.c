// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Per-user timer accounting (see struct qt_user), and the caps that ARM
 * checks: module parameters, also set through netlink.
 */

#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/user_namespace.h>

#include "user.h"

unsigned long qt_max_timers_per_fd = 1UL << 20;
unsigned long qt_max_timers_per_user = 1UL << 22;

static DEFINE_HASHTABLE(qt_users, 6);
static DEFINE_SPINLOCK(qt_users_lock);

static u32 qt_user_hash(const struct user_namespace *ns, kuid_t uid)
{
	return hash_ptr(ns, 32) ^ __kuid_val(uid);
}

static struct qt_user *qt_user_find(struct user_namespace *ns, kuid_t uid)
{
	struct qt_user *user;

	lockdep_assert_held(&qt_users_lock);
	hash_for_each_possible(qt_users, user, node, qt_user_hash(ns, uid))
		if (user->ns == ns && uid_eq(user->uid, uid)) {
			/* Only ever 0 under the lock, and then unhashed. */
			refcount_inc(&user->ref);
			return user;
		}
	return NULL;
}

/*
 * The record of @uid in @ns, and of the owners up the chain, created on
 * first use.  Only that first use allocates (unlocked, then looked up
 * again: a racing open may have added it meanwhile).  User namespaces nest
 * at most 32 deep, which bounds the recursion.
 */
static struct qt_user *qt_user_get_in(struct user_namespace *ns, kuid_t uid)
{
	struct qt_user *user, *fresh, *parent = NULL;

	spin_lock(&qt_users_lock);
	user = qt_user_find(ns, uid);
	spin_unlock(&qt_users_lock);
	if (user)
		return user;

	if (ns->parent) {
		parent = qt_user_get_in(ns->parent, ns->owner);
		if (!parent)
			return NULL;
	}
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh) {
		if (parent)
			qt_user_put(parent);
		return NULL;
	}
	fresh->ns = get_user_ns(ns);
	fresh->uid = uid;
	fresh->parent = parent;
	refcount_set(&fresh->ref, 1);
	spin_lock(&qt_users_lock);
	user = qt_user_find(ns, uid);
	if (!user) {
		hash_add(qt_users, &fresh->node, qt_user_hash(ns, uid));
		user = fresh;
		fresh = NULL;
	}
	spin_unlock(&qt_users_lock);
	if (fresh) {
		if (parent)
			qt_user_put(parent);
		put_user_ns(ns);
		kfree(fresh);
	}
	return user;
}

/* The accounting record of the caller's effective uid, in its namespace. */
struct qt_user *qt_user_get(void)
{
	return qt_user_get_in(current_user_ns(), current_euid());
}

void qt_user_put(struct qt_user *user)
{
	struct qt_user *parent;

	while (user) {
		/* refcount_dec_and_lock(), spelled out for sparse. */
		if (refcount_dec_not_one(&user->ref))
			return;
		spin_lock(&qt_users_lock);
		if (!refcount_dec_and_test(&user->ref)) {
			spin_unlock(&qt_users_lock);
			return;
		}
		hash_del(&user->node);
		spin_unlock(&qt_users_lock);
		parent = user->parent;
		put_user_ns(user->ns);
		kfree(user);
		user = parent;
	}
}

/*
 * Count @n timers against the cap at every level of @user's chain, or at
 * none.  One level, one atomic op, outside user namespaces.
 */
bool qt_user_charge_n(struct qt_user *user, long n)
{
	long max = READ_ONCE(qt_max_timers_per_user);
	struct qt_user *u, *over;

	for (u = user; u; u = u->parent) {
		if (atomic_long_add_return(n, &u->nr_timers) > max)
			goto undo;
	}
	return true;
undo:
	over = u;
	for (u = user; u != over->parent; u = u->parent)
		atomic_long_sub(n, &u->nr_timers);
	return false;
}

void qt_user_uncharge_n(struct qt_user *user, long n)
{
	for (; user; user = user->parent)
		atomic_long_sub(n, &user->nr_timers);
}
