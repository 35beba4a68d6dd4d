// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll: collective communication over RDMA.  Module entry points.
 *
 * At load time it checks that an integer and a floating-point reduction
 * give the expected result, allocates the module's workqueue, then
 * registers the ib_client (RDMA devices), the generic netlink family
 * "kcoll" and the misc device /dev/kcoll; the
 * family goes before the device and after it on exit, so no communicator
 * ever exists without it.  Opening the device holds a module
 * reference, so rmmod is refused while any communicator exists.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/workqueue.h>

#include "kc_reduce.h"
#include "kcoll.h"
#include "kcoll_version.h"

/* IEEE 754 binary32 bit patterns, so no float crosses into this object. */
#define KCOLL_FP32_ONE		0x3f800000u
#define KCOLL_FP32_TWO		0x40000000u
#define KCOLL_FP32_THREE	0x40400000u

/* The deferred work of every communicator: timeouts, failures, lost peers. */
static struct workqueue_struct *kcoll_wq;

struct workqueue_struct *kcoll_wq_get(void)
{
	return kcoll_wq;
}

/*
 * The executor's chunks (feed_work, kcoll_xport.c): at the priority of
 * the completion work they left, so that a busy process of the node takes
 * no more of the CPU from them than it did (at normal priority an 8 MiB
 * AllReduce took 24 % longer under TCG); unbound, so that they never wait
 * behind the completion work in a CPU's concurrency-managed pool.
 */
static struct workqueue_struct *kcoll_feed_wq;

struct workqueue_struct *kcoll_feed_wq_get(void)
{
	return kcoll_feed_wq;
}

static int __init kcoll_selftest(void)
{
	static const s32 isrc[4] = { 1, -2, 3, 0x7fffffff };
	static const u32 fsrc[2] = { KCOLL_FP32_ONE, KCOLL_FP32_TWO };
	s32 idst[4] = { 10, 20, 30, 1 };
	u32 fdst[2] = { KCOLL_FP32_TWO, KCOLL_FP32_ONE };
	int ret;

	if (kc_dtype_size(KCOLL_FP32) != sizeof(u32) ||
	    kc_dtype_size(KCOLL_INT32) != sizeof(s32)) {
		pr_err("self-check: wrong element size for fp32/int32\n");
		return -EINVAL;
	}

	ret = kc_reduce(idst, isrc, ARRAY_SIZE(idst), KCOLL_INT32, KCOLL_SUM);
	if (ret) {
		pr_err("self-check: int32 sum failed: %d\n", ret);
		return ret;
	}
	if (idst[0] != 11 || idst[1] != 18 || idst[2] != 33 ||
	    idst[3] != S32_MIN) {
		pr_err("self-check: int32 sum gave %d %d %d %d, expected 11 18 33 %d\n",
		       idst[0], idst[1], idst[2], idst[3], S32_MIN);
		return -EINVAL;
	}

	ret = kc_reduce(fdst, fsrc, ARRAY_SIZE(fdst), KCOLL_FP32, KCOLL_SUM);
	if (ret) {
		pr_err("self-check: fp32 sum failed: %d\n", ret);
		return ret;
	}
	if (fdst[0] != KCOLL_FP32_THREE || fdst[1] != KCOLL_FP32_THREE) {
		pr_err("self-check: fp32 1+2 gave %#x %#x, expected %#x\n",
		       fdst[0], fdst[1], KCOLL_FP32_THREE);
		return -EINVAL;
	}
	return 0;
}

static int __init kcoll_init(void)
{
	int ret;

	ret = kcoll_selftest() ?: kcoll_tunables_init();
	if (ret)
		return ret;
	kcoll_wq = alloc_workqueue("kcoll", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!kcoll_wq)
		return -ENOMEM;
	kcoll_feed_wq = alloc_workqueue("kcoll_feed", WQ_UNBOUND | WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!kcoll_feed_wq) {
		ret = -ENOMEM;
		goto err_wq;
	}
	ret = kcoll_listen_init();
	if (ret)
		goto err_feed_wq;
	ret = kcoll_ibdev_init();
	if (ret)
		goto err_listen;
	ret = kcoll_genl_init();
	if (ret)
		goto err_ibdev;
	ret = kcoll_dev_init();
	if (ret)
		goto err_genl;
	pr_info("version %s loaded\n", KCOLL_VERSION);
	return 0;

err_genl:
	kcoll_genl_exit();
err_ibdev:
	kcoll_ibdev_exit();
err_listen:
	kcoll_listen_exit();
err_feed_wq:
	destroy_workqueue(kcoll_feed_wq);
err_wq:
	destroy_workqueue(kcoll_wq);
	return ret;
}

static void __exit kcoll_exit(void)
{
	kcoll_dev_exit();
	kcoll_genl_exit();
	kcoll_ibdev_exit();
	kcoll_listen_exit();
	destroy_workqueue(kcoll_feed_wq);
	destroy_workqueue(kcoll_wq);
	kcoll_history_exit();
	pr_info("unloaded\n");
}

module_init(kcoll_init);
module_exit(kcoll_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("kcoll developers");
MODULE_DESCRIPTION("Collective communication (AllReduce, AllGather, ...) over RDMA");
MODULE_VERSION(KCOLL_VERSION);
