// SPDX-License-Identifier: GPL-2.0
/*
 * Tunables: module parameters give the defaults at load time, attributes
 * of the misc device (/sys/class/misc/kcoll/) change them at run time.
 * New communicators copy them at creation; running ones are unaffected.
 * A write that does not validate returns -EINVAL and changes nothing.
 */
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "kcoll.h"

static DEFINE_MUTEX(kcoll_tun_lock);
static struct kcoll_tunables kcoll_tun = {
	.chunk_bytes = 65536,
	.slots = 8,
	.timeout_ms = 30000,
	.connect_timeout_ms = 30000,
	.algo = "",
};

int kcoll_check_chunk(u32 v)
{
	if (v < KCOLL_CHUNK_MIN || v > KCOLL_CHUNK_MAX || v % 8)
		return -EINVAL;
	return 0;
}

int kcoll_check_slots(u32 v)
{
	return v >= KCOLL_SLOTS_MIN && v <= KCOLL_SLOTS_MAX ? 0 : -EINVAL;
}

int kcoll_check_timeout(u32 v)
{
	return v >= KCOLL_TIMEOUT_MIN && v <= KCOLL_TIMEOUT_MAX ? 0 : -EINVAL;
}

void kcoll_tunables_get(struct kcoll_tunables *t)
{
	mutex_lock(&kcoll_tun_lock);
	*t = kcoll_tun;
	mutex_unlock(&kcoll_tun_lock);
}

/* Parse and check a u32 value, then store it under the lock. */
static int kcoll_set_u32(const char *buf, u32 *field, int (*check)(u32))
{
	u32 v;
	int ret;

	/* Out of u32's range (ERANGE from kstrtou32) is just as invalid. */
	if (kstrtou32(buf, 0, &v))
		return -EINVAL;
	ret = check(v);
	if (ret)
		return ret;
	mutex_lock(&kcoll_tun_lock);
	*field = v;
	mutex_unlock(&kcoll_tun_lock);
	return 0;
}

static int kcoll_set_algo(const char *buf)
{
	struct kcoll_algo_sel *sel;
	char *str;
	int ret;

	/* sysfs hands over at most a page; the parser takes less. */
	if (strnlen(buf, KCOLL_ALGO_STR_MAX) >= KCOLL_ALGO_STR_MAX)
		return -EINVAL;
	str = kstrdup(buf, GFP_KERNEL);
	sel = kzalloc(sizeof(*sel), GFP_KERNEL);
	if (!str || !sel) {
		ret = -ENOMEM;
		goto out;
	}
	ret = kcoll_algo_parse(strim(str), sel);
	if (!ret) {
		mutex_lock(&kcoll_tun_lock);
		strscpy(kcoll_tun.algo, strim(str), sizeof(kcoll_tun.algo));
		kcoll_tun.sel = *sel;
		mutex_unlock(&kcoll_tun_lock);
	}
out:
	kfree(sel);
	kfree(str);
	return ret;
}

/* ------------------------------------------------------ module parameters */

/* A numeric tunable: where it lives and what values it takes. */
struct kcoll_u32_tunable {
	u32 *field;
	int (*check)(u32 v);
};

static struct kcoll_u32_tunable kcoll_tun_chunk = { &kcoll_tun.chunk_bytes, kcoll_check_chunk };
static struct kcoll_u32_tunable kcoll_tun_slots = { &kcoll_tun.slots, kcoll_check_slots };
static struct kcoll_u32_tunable kcoll_tun_timeout = { &kcoll_tun.timeout_ms, kcoll_check_timeout };
static struct kcoll_u32_tunable kcoll_tun_ctimeout = {
	&kcoll_tun.connect_timeout_ms, kcoll_check_timeout
};

static int kcoll_param_set_u32(const char *val, const struct kernel_param *kp)
{
	const struct kcoll_u32_tunable *t = kp->arg;

	return kcoll_set_u32(val, t->field, t->check);
}

static int kcoll_param_get_u32(char *buf, const struct kernel_param *kp)
{
	const struct kcoll_u32_tunable *t = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(*t->field));
}

static const struct kernel_param_ops kcoll_param_ops_u32 = {
	.set = kcoll_param_set_u32,
	.get = kcoll_param_get_u32,
};

module_param_cb(chunk_bytes, &kcoll_param_ops_u32, &kcoll_tun_chunk, 0444);
MODULE_PARM_DESC(chunk_bytes, "message size in bytes, multiple of 8, 4096..1048576 (default 65536)");
module_param_cb(slots, &kcoll_param_ops_u32, &kcoll_tun_slots, 0444);
MODULE_PARM_DESC(slots, "receive slots per peer = send window, 1..64 (default 8)");
module_param_cb(timeout_ms, &kcoll_param_ops_u32, &kcoll_tun_timeout, 0444);
MODULE_PARM_DESC(timeout_ms, "operation timeout in ms, 10..3600000 (default 30000)");
module_param_cb(connect_timeout_ms, &kcoll_param_ops_u32, &kcoll_tun_ctimeout, 0444);
MODULE_PARM_DESC(connect_timeout_ms, "connection set-up timeout in ms (default 30000)");

static int kcoll_param_set_algo(const char *val, const struct kernel_param *kp)
{
	return kcoll_set_algo(val);
}

static int kcoll_param_get_algo(char *buf, const struct kernel_param *kp)
{
	int n;

	mutex_lock(&kcoll_tun_lock);
	n = sysfs_emit(buf, "%s\n", kcoll_tun.algo);
	mutex_unlock(&kcoll_tun_lock);
	return n;
}

static const struct kernel_param_ops kcoll_param_ops_algo = {
	.set = kcoll_param_set_algo,
	.get = kcoll_param_get_algo,
};
module_param_cb(algo, &kcoll_param_ops_algo, NULL, 0444);
MODULE_PARM_DESC(algo, "default HCCL_ALGO string (default: automatic on every level)");

/* -------------------------------------------------- device attributes */

struct kcoll_u32_attr {
	struct device_attribute attr;
	struct kcoll_u32_tunable *tun;
};

static ssize_t kcoll_u32_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct kcoll_u32_attr *a = container_of(attr, struct kcoll_u32_attr, attr);

	return sysfs_emit(buf, "%u\n", READ_ONCE(*a->tun->field));
}

static ssize_t kcoll_u32_store(struct device *dev, struct device_attribute *attr,
			       const char *buf, size_t count)
{
	struct kcoll_u32_attr *a = container_of(attr, struct kcoll_u32_attr, attr);
	int ret = kcoll_set_u32(buf, a->tun->field, a->tun->check);

	return ret ? ret : count;
}

static struct kcoll_u32_attr kcoll_attr_chunk = {
	__ATTR(chunk_bytes, 0644, kcoll_u32_show, kcoll_u32_store), &kcoll_tun_chunk
};

static struct kcoll_u32_attr kcoll_attr_slots = {
	__ATTR(slots, 0644, kcoll_u32_show, kcoll_u32_store), &kcoll_tun_slots
};

static struct kcoll_u32_attr kcoll_attr_timeout = {
	__ATTR(timeout_ms, 0644, kcoll_u32_show, kcoll_u32_store), &kcoll_tun_timeout
};

static struct kcoll_u32_attr kcoll_attr_ctimeout = {
	__ATTR(connect_timeout_ms, 0644, kcoll_u32_show, kcoll_u32_store), &kcoll_tun_ctimeout
};

static ssize_t algo_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return kcoll_param_get_algo(buf, NULL);
}

static ssize_t algo_store(struct device *dev, struct device_attribute *attr,
			  const char *buf, size_t count)
{
	int ret = kcoll_set_algo(buf);

	return ret ? ret : count;
}
static DEVICE_ATTR_RW(algo);

static struct attribute *kcoll_attrs[] = {
	&dev_attr_algo.attr,
	&kcoll_attr_chunk.attr.attr,
	&kcoll_attr_slots.attr.attr,
	&kcoll_attr_timeout.attr.attr,
	&kcoll_attr_ctimeout.attr.attr,
	NULL,
};

static const struct attribute_group kcoll_attr_group = {
	.attrs = kcoll_attrs,
};

const struct attribute_group *kcoll_sysfs_groups[] = {
	&kcoll_attr_group,
	NULL,
};
