// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA devices: the ib_client that gives every device one protection
 * domain (struct kcoll_ibdev) for the QPs of all communicators on it, and
 * takes every communicator off a device that goes away.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "kcoll.h"

static LIST_HEAD(kcoll_ibdevs);
static DEFINE_MUTEX(kcoll_ibdevs_lock);

static int kcoll_ib_add(struct ib_device *ibdev);
static void kcoll_ib_remove(struct ib_device *ibdev, void *client_data);

static struct ib_client kcoll_ib_client = {
	.name = "kcoll",
	.add = kcoll_ib_add,
	.remove = kcoll_ib_remove,
};

static int kcoll_ib_add(struct ib_device *ibdev)
{
	struct kcoll_ibdev *kdev;
	int ret;

	kdev = kzalloc(sizeof(*kdev), GFP_KERNEL);
	if (!kdev)
		return -ENOMEM;
	kdev->ibdev = ibdev;
	kdev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(kdev->pd)) {
		ret = PTR_ERR(kdev->pd);
		kfree(kdev);
		return ret;
	}
	mutex_lock(&kcoll_ibdevs_lock);
	list_add_tail(&kdev->node, &kcoll_ibdevs);
	mutex_unlock(&kcoll_ibdevs_lock);
	ib_set_client_data(ibdev, &kcoll_ib_client, kdev);
	pr_debug("device %s added\n", dev_name(&ibdev->dev));
	return 0;
}

/*
 * Runs before rdma_cm's own removal (clients go LIFO), so every QP, CQ and
 * cm_id of ours on this device is gone before the core waits for them.
 */
static void kcoll_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct kcoll_ibdev *kdev = client_data;

	kcoll_comms_remove_device(ibdev);
	mutex_lock(&kcoll_ibdevs_lock);
	list_del(&kdev->node);
	mutex_unlock(&kcoll_ibdevs_lock);
	ib_dealloc_pd(kdev->pd);
	kfree(kdev);
	pr_debug("device %s removed\n", dev_name(&ibdev->dev));
}

struct kcoll_ibdev *kcoll_ibdev_get(struct ib_device *ibdev)
{
	return ib_get_client_data(ibdev, &kcoll_ib_client);
}

int kcoll_ibdev_init(void)
{
	return ib_register_client(&kcoll_ib_client);
}

void kcoll_ibdev_exit(void)
{
	ib_unregister_client(&kcoll_ib_client);
}
