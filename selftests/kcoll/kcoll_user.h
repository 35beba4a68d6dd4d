/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Becoming an unprivileged user in the module's kselftests: one helper for
 * the harness tests (kcoll_util.h includes this) and the fuzzer's epochs.
 *
 * /dev/kcoll is 0660 root:kcoll, as the shipped udev rule
 * (udev/60-kcoll.rules) makes it and tools/vm/vm-init.sh applies it in the
 * virtual cluster, so a user opens it only as a member of its group: the
 * tests' users are given the group the device has, not a name assumed.
 * No kselftest harness here.
 */
#ifndef KCOLL_USER_H
#define KCOLL_USER_H

#include <grp.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#define KC_DEV "/dev/kcoll"

/*
 * Become @uid with group @uid and no capabilities; with @dev_group the
 * group of /dev/kcoll (stat) is its one supplementary group, so it may
 * open the device as the udev rule allows, else it has none.  Nothing to
 * do when already @uid.  0, or -1 with errno (EPERM when not root).
 */
static inline int kc_become(uid_t uid, bool dev_group)
{
	struct stat st;
	gid_t gid = 0;

	if (geteuid() == uid)
		return 0;
	if (dev_group) {
		if (stat(KC_DEV, &st))
			return -1;
		gid = st.st_gid;
	}
	if (setgroups(dev_group ? 1 : 0, &gid) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -1;
	return 0;
}

#endif /* KCOLL_USER_H */
