/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collctl config --persist: tunables that outlive the module, as
 * `options kcoll NAME=VALUE` in /etc/modprobe.d/kcoll.conf, which modprobe
 * applies at every load (boot included): the tunables are module
 * parameters of the same names (kmod/kcoll_tunables.c).
 */
#ifndef COLLCTL_PERSIST_H
#define COLLCTL_PERSIST_H

#include <stdbool.h>

#define CC_PERSIST_PATH "/etc/modprobe.d/kcoll.conf"
/* Another file instead (tests; a configuration management tool's staging). */
#define CC_PERSIST_ENV "KCOLL_MODPROBE_CONF"

/* cc_persist_cmd()'s answer when argv[0] is none of its options. */
#define CC_PERSIST_NOT_MINE (-1)

/* Sets NAME to VALUE now, as `collctl config NAME VALUE` does: argv = NAME VALUE. */
typedef int (*cc_config_set_fn)(const void *ctx, int argc, char **argv);

/*
 * `collctl config` with one of its options first (argv after "config"):
 *   --persist NAME VALUE    set() it, and only if that succeeds record it
 *   --unpersist NAME        remove NAME from the file (the running value stays)
 *   --show-persistent       the file's path and the recorded NAME=VALUE pairs
 * An exit status (0, 1 error, 2 usage), or CC_PERSIST_NOT_MINE.
 */
int cc_persist_cmd(const char *prog, bool json, int argc, char **argv, cc_config_set_fn set,
		   const void *ctx);

/* Record NAME=VALUE in the file (the path: $KCOLL_MODPROBE_CONF or the default). */
int cc_persist_put(const char *prog, const char *name, const char *value);

/* One persisted pair: @value is NULL for a bare NAME. */
typedef void (*cc_persist_fn)(void *ctx, const char *name, const char *value);

/*
 * The file's path into *@path and @fn for each pair of collctl's line, in
 * order (collctl doctor).  0, also when there is no file; else -errno, with
 * the reason printed.
 */
int cc_persist_each(const char *prog, const char **path, cc_persist_fn fn, void *ctx);

#endif /* COLLCTL_PERSIST_H */
