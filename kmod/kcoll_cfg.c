// SPDX-License-Identifier: GPL-2.0
/*
 * HCCL_ALGO strings into per-operation algorithm choices, through the
 * shared parser (algo/kc_cfg): the syntax and the algorithm names are
 * algo/'s business; this file only resolves the result per operation so
 * that submitting an operation is a table look-up.
 *
 * Strings come from any user (KCOLL_IOC_COMM_CREATE) as well as from
 * root (sysfs): a refused one is never echoed to the kernel log.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "kc_cfg.h"
#include "kcoll.h"

int kcoll_algo_parse(const char *str, struct kcoll_algo_sel *sel)
{
	struct kc_algo_conf *conf;
	struct kc_cfg_err e;
	char err[256];
	u32 op;
	int ret;

	conf = kzalloc(sizeof(*conf), GFP_KERNEL_ACCOUNT);
	if (!conf)
		return -ENOMEM;
	ret = kc_cfg_parse_ex(str, conf, &e);
	if (ret == -EINVAL) {
		/*
		 * @str is anyone's (KCOLL_IOC_COMM_CREATE): not printed; the
		 * short form (column and expected form) holds none of it, and
		 * is escaped as every message from algo/.
		 */
		kc_cfg_strerror(NULL, &e, err, sizeof(err));
		kcoll_info_rl("%*pE\n", (int)strlen(err), err);
	}
	if (ret)
		goto out;
	for (op = 0; op < KCOLL_OP_COUNT; op++) {
		memset(&sel->op[op], 0, sizeof(sel->op[op]));
		kc_cfg_for_op(conf, op, &sel->op[op], NULL, 0);
	}
out:
	kfree(conf);
	return ret;
}
