// SPDX-License-Identifier: GPL-2.0
/*
 * Tunables: module parameters give the defaults at load time, attributes
 * of the misc device (/sys/class/misc/kcoll/) change them at run time.
 * New communicators copy them at creation; running ones are unaffected.
 * A write that does not validate returns -EINVAL and changes nothing.
 *
 * The link model (levelN_alpha_ns, levelN_gbps, levelN_reduce_gbps,
 * level{1,2}_auto_mesh, level2_conv_pct) is what automatic selection
 * ranks algorithms on; its defaults are algo/kc_cost.c's kc_cost_default
 * in these units (auto_mesh 0: no Mesh between servers).  Rates
 * are kept in Mbit/s and read and written in Gbit/s with up to three
 * decimals ("0.16"): `collctl calibrate` measures links far slower than
 * 1 Gbit/s under emulation.
 *
 * user_max_bytes is not a default of new communicators but a bound on all
 * of a user's together (kcoll_guard.c), read at every creation.
 */
#include <linux/ctype.h>
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
	/* = kc_cost_default: 1 us / 50 GB/s, 5 us / 25 GB/s, 10 GB/s reduce */
	.link = {
		[KCOLL_LEVEL0] = { .alpha_ns = 1000, .mbps = 400000, .reduce_mbps = 80000 },
		[KCOLL_LEVEL1] = { .alpha_ns = 5000, .mbps = 200000, .reduce_mbps = 80000 },
		[KCOLL_LEVEL2] = { .alpha_ns = 5000, .mbps = 200000, .reduce_mbps = 80000 },
	},
	.conv_pct = 100,
};

/*
 * The kernel memory one user's communicators on this node may take
 * together, worst case (kcoll_comm_footprint()); 0: no limit.  1 GiB: at
 * the defaults (8 slots of 64 KiB) a communicator takes 1.03 MiB per
 * peer, so one rank per node fits in a communicator of up to 992 ranks
 * and 8 ranks per node in communicators of up to 124; the project's tests
 * and demo take at most 32.5 MiB per node.  One communicator of 4096 ranks
 * at the largest settings would take 65 GiB.
 */
#define KCOLL_USER_MAX_BYTES_DEFAULT	BIT_ULL(30)
static u64 kcoll_user_max = KCOLL_USER_MAX_BYTES_DEFAULT;

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

static int kcoll_check_alpha(u32 v)
{
	return v <= KCOLL_ALPHA_NS_MAX ? 0 : -EINVAL;
}

static int kcoll_check_mbps(u32 v)
{
	return v >= KCOLL_MBPS_MIN && v <= KCOLL_MBPS_MAX ? 0 : -EINVAL;
}

static int kcoll_check_bool(u32 v)
{
	return v <= 1 ? 0 : -EINVAL;
}

static int kcoll_check_conv(u32 v)
{
	return v >= KCOLL_CONV_PCT_MIN && v <= KCOLL_CONV_PCT_MAX ? 0 : -EINVAL;
}

/* Femtoseconds per byte at @mbps Mbit/s: 8 bits * 10^15 fs / (mbps * 10^6). */
static u64 kcoll_fs_per_byte(u32 mbps)
{
	return DIV_ROUND_CLOSEST_ULL(8000000000ull, mbps);
}

void kcoll_tunables_model(const struct kcoll_tunables *t, struct kc_cost_model *m)
{
	u32 l;

	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		m->lv[l].alpha = (u64)t->link[l].alpha_ns * 1000000ull;
		m->lv[l].beta = kcoll_fs_per_byte(t->link[l].mbps);
		m->lv[l].gamma = kcoll_fs_per_byte(t->link[l].reduce_mbps);
		m->lv[l].auto_mesh = t->link[l].auto_mesh;
	}
	m->conv_q8 = DIV_ROUND_CLOSEST(t->conv_pct * 256, 100);
	m->window = t->slots;	/* the executor's window: kcoll_comm.c */
}

void kcoll_tunables_get(struct kcoll_tunables *t)
{
	mutex_lock(&kcoll_tun_lock);
	*t = kcoll_tun;
	mutex_unlock(&kcoll_tun_lock);
}

/*
 * Gbit/s with at most three decimals ("200", "0.16", "2.5\n") to Mbit/s.
 * A sign, an exponent, a fourth decimal or a bare point is -EINVAL.
 */
static int kcoll_parse_gbit(const char *buf, u32 *mbps)
{
	u32 whole = 0, frac = 0, digits = 0;
	const char *p = buf;

	if (!isdigit(*p))
		return -EINVAL;
	for (; isdigit(*p); p++) {
		whole = whole * 10 + (*p - '0');
		if (whole > KCOLL_MBPS_MAX / 1000)
			return -EINVAL;
	}
	if (*p == '.') {
		for (p++; isdigit(*p); p++, digits++) {
			if (digits == 3)
				return -EINVAL;
			frac = frac * 10 + (*p - '0');
		}
		if (!digits)
			return -EINVAL;
	}
	for (; digits < 3; digits++)
		frac *= 10;
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*mbps = whole * 1000 + frac;
	return 0;
}

/* @mbps as Gbit/s, without trailing zeros: 200000 -> "200", 160 -> "0.16". */
static int kcoll_emit_gbit(char *buf, u32 mbps)
{
	u32 frac = mbps % 1000;

	if (!frac)
		return sysfs_emit(buf, "%u\n", mbps / 1000);
	if (!(frac % 100))
		return sysfs_emit(buf, "%u.%u\n", mbps / 1000, frac / 100);
	if (!(frac % 10))
		return sysfs_emit(buf, "%u.%02u\n", mbps / 1000, frac / 10);
	return sysfs_emit(buf, "%u.%03u\n", mbps / 1000, frac);
}

/* Parse and check a u32 value, then store it under the lock. */
static int kcoll_set_u32(const char *buf, u32 *field, int (*check)(u32), bool gbit)
{
	u32 v;
	int ret;

	/* Out of u32's range (ERANGE from kstrtou32) is just as invalid. */
	if (gbit ? kcoll_parse_gbit(buf, &v) : kstrtou32(buf, 0, &v))
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

u64 kcoll_user_max_bytes(void)
{
	u64 v;

	mutex_lock(&kcoll_tun_lock);
	v = kcoll_user_max;
	mutex_unlock(&kcoll_tun_lock);
	return v;
}

/* Any u64 ("0" lifts the limit); anything else is -EINVAL and changes nothing. */
static int kcoll_set_user_max(const char *buf)
{
	u64 v;

	if (kstrtou64(buf, 0, &v))
		return -EINVAL;
	mutex_lock(&kcoll_tun_lock);
	kcoll_user_max = v;
	mutex_unlock(&kcoll_tun_lock);
	return 0;
}

/* ------------------------------------------------------ module parameters */

/*
 * A numeric tunable: where it lives, what values it takes, and whether it
 * is a rate kept in Mbit/s that users read and write in Gbit/s.
 */
struct kcoll_u32_tunable {
	u32 *field;
	int (*check)(u32 v);
	bool gbit;
};

static struct kcoll_u32_tunable kcoll_tun_chunk = { &kcoll_tun.chunk_bytes, kcoll_check_chunk };

static struct kcoll_u32_tunable kcoll_tun_slots = { &kcoll_tun.slots, kcoll_check_slots };

static struct kcoll_u32_tunable kcoll_tun_timeout = { &kcoll_tun.timeout_ms, kcoll_check_timeout };

static struct kcoll_u32_tunable kcoll_tun_ctimeout = {
	&kcoll_tun.connect_timeout_ms, kcoll_check_timeout
};

static struct kcoll_u32_tunable kcoll_tun_l0_alpha = {
	&kcoll_tun.link[KCOLL_LEVEL0].alpha_ns, kcoll_check_alpha
};

static struct kcoll_u32_tunable kcoll_tun_l0_gbps = {
	&kcoll_tun.link[KCOLL_LEVEL0].mbps, kcoll_check_mbps, true
};

static struct kcoll_u32_tunable kcoll_tun_l0_red = {
	&kcoll_tun.link[KCOLL_LEVEL0].reduce_mbps, kcoll_check_mbps, true
};

static struct kcoll_u32_tunable kcoll_tun_l1_alpha = {
	&kcoll_tun.link[KCOLL_LEVEL1].alpha_ns, kcoll_check_alpha
};

static struct kcoll_u32_tunable kcoll_tun_l1_gbps = {
	&kcoll_tun.link[KCOLL_LEVEL1].mbps, kcoll_check_mbps, true
};

static struct kcoll_u32_tunable kcoll_tun_l1_red = {
	&kcoll_tun.link[KCOLL_LEVEL1].reduce_mbps, kcoll_check_mbps, true
};

static struct kcoll_u32_tunable kcoll_tun_l2_alpha = {
	&kcoll_tun.link[KCOLL_LEVEL2].alpha_ns, kcoll_check_alpha
};

static struct kcoll_u32_tunable kcoll_tun_l2_gbps = {
	&kcoll_tun.link[KCOLL_LEVEL2].mbps, kcoll_check_mbps, true
};

static struct kcoll_u32_tunable kcoll_tun_l2_red = {
	&kcoll_tun.link[KCOLL_LEVEL2].reduce_mbps, kcoll_check_mbps, true
};

static struct kcoll_u32_tunable kcoll_tun_l1_mesh = {
	&kcoll_tun.link[KCOLL_LEVEL1].auto_mesh, kcoll_check_bool
};

static struct kcoll_u32_tunable kcoll_tun_l2_mesh = {
	&kcoll_tun.link[KCOLL_LEVEL2].auto_mesh, kcoll_check_bool
};

static struct kcoll_u32_tunable kcoll_tun_l2_conv = { &kcoll_tun.conv_pct, kcoll_check_conv };

static int kcoll_param_set_u32(const char *val, const struct kernel_param *kp)
{
	const struct kcoll_u32_tunable *t = kp->arg;

	return kcoll_set_u32(val, t->field, t->check, t->gbit);
}

static int kcoll_param_get_u32(char *buf, const struct kernel_param *kp)
{
	const struct kcoll_u32_tunable *t = kp->arg;

	if (t->gbit)
		return kcoll_emit_gbit(buf, READ_ONCE(*t->field));
	return sysfs_emit(buf, "%u\n", READ_ONCE(*t->field));
}

static const struct kernel_param_ops kcoll_param_ops_u32 = {
	.set = kcoll_param_set_u32,
	.get = kcoll_param_get_u32,
};

module_param_cb(chunk_bytes, &kcoll_param_ops_u32, &kcoll_tun_chunk, 0444);
MODULE_PARM_DESC(chunk_bytes, "message size in bytes, multiple of 8, 4096..30 pages (122880 with 4 KiB pages; default 65536)");
module_param_cb(slots, &kcoll_param_ops_u32, &kcoll_tun_slots, 0444);
MODULE_PARM_DESC(slots, "receive slots per peer = send window, 1..64 (default 8)");
module_param_cb(timeout_ms, &kcoll_param_ops_u32, &kcoll_tun_timeout, 0444);
MODULE_PARM_DESC(timeout_ms, "operation timeout in ms, 10..3600000 (default 30000)");
module_param_cb(connect_timeout_ms, &kcoll_param_ops_u32, &kcoll_tun_ctimeout, 0444);
MODULE_PARM_DESC(connect_timeout_ms, "connection set-up timeout in ms (default 30000)");

/* The link model of automatic selection; see sysfs-class-misc-kcoll. */
module_param_cb(level0_alpha_ns, &kcoll_param_ops_u32, &kcoll_tun_l0_alpha, 0444);
MODULE_PARM_DESC(level0_alpha_ns, "level-0 (in-server) latency in ns, 0..10000000 (default 1000)");
module_param_cb(level0_gbps, &kcoll_param_ops_u32, &kcoll_tun_l0_gbps, 0444);
MODULE_PARM_DESC(level0_gbps, "level-0 link bandwidth in Gbit/s, 0.001..1000000, three decimals (default 400)");
module_param_cb(level0_reduce_gbps, &kcoll_param_ops_u32, &kcoll_tun_l0_red, 0444);
MODULE_PARM_DESC(level0_reduce_gbps, "level-0 reduction throughput in Gbit/s (default 80)");
module_param_cb(level1_alpha_ns, &kcoll_param_ops_u32, &kcoll_tun_l1_alpha, 0444);
MODULE_PARM_DESC(level1_alpha_ns, "level-1 (between servers) latency in ns (default 5000)");
module_param_cb(level1_gbps, &kcoll_param_ops_u32, &kcoll_tun_l1_gbps, 0444);
MODULE_PARM_DESC(level1_gbps, "level-1 link bandwidth in Gbit/s (default 200)");
module_param_cb(level1_reduce_gbps, &kcoll_param_ops_u32, &kcoll_tun_l1_red, 0444);
MODULE_PARM_DESC(level1_reduce_gbps, "level-1 reduction throughput in Gbit/s (default 80)");
module_param_cb(level2_alpha_ns, &kcoll_param_ops_u32, &kcoll_tun_l2_alpha, 0444);
MODULE_PARM_DESC(level2_alpha_ns, "level-2 (between super pods) latency in ns (default 5000)");
module_param_cb(level2_gbps, &kcoll_param_ops_u32, &kcoll_tun_l2_gbps, 0444);
MODULE_PARM_DESC(level2_gbps, "level-2 link bandwidth in Gbit/s (default 200)");
module_param_cb(level2_reduce_gbps, &kcoll_param_ops_u32, &kcoll_tun_l2_red, 0444);
MODULE_PARM_DESC(level2_reduce_gbps, "level-2 reduction throughput in Gbit/s (default 80)");
module_param_cb(level1_auto_mesh, &kcoll_param_ops_u32, &kcoll_tun_l1_mesh, 0444);
MODULE_PARM_DESC(level1_auto_mesh, "1: automatic selection may run Mesh between servers, set where measured to pay (default 0)");
module_param_cb(level2_auto_mesh, &kcoll_param_ops_u32, &kcoll_tun_l2_mesh, 0444);
MODULE_PARM_DESC(level2_auto_mesh, "1: automatic selection may run Mesh between super pods (default 0)");
module_param_cb(level2_conv_pct, &kcoll_param_ops_u32, &kcoll_tun_l2_conv, 0444);
MODULE_PARM_DESC(level2_conv_pct, "level-2 convergence ratio C in percent, 100..100000 (default 100)");

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

static int kcoll_param_set_user_max(const char *val, const struct kernel_param *kp)
{
	return kcoll_set_user_max(val);
}

static int kcoll_param_get_user_max(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%llu\n", kcoll_user_max_bytes());
}

static const struct kernel_param_ops kcoll_param_ops_user_max = {
	.set = kcoll_param_set_user_max,
	.get = kcoll_param_get_user_max,
};
module_param_cb(user_max_bytes, &kcoll_param_ops_user_max, NULL, 0444);
MODULE_PARM_DESC(user_max_bytes, "kernel memory in bytes one user's communicators may take together, worst case; 0: no limit (default 1073741824)");

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

	if (a->tun->gbit)
		return kcoll_emit_gbit(buf, READ_ONCE(*a->tun->field));
	return sysfs_emit(buf, "%u\n", READ_ONCE(*a->tun->field));
}

static ssize_t kcoll_u32_store(struct device *dev, struct device_attribute *attr,
			       const char *buf, size_t count)
{
	struct kcoll_u32_attr *a = container_of(attr, struct kcoll_u32_attr, attr);
	int ret = kcoll_set_u32(buf, a->tun->field, a->tun->check, a->tun->gbit);

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

/* The link model, one attribute per number. */
#define KCOLL_U32_ATTR(_name, _tun) \
	struct kcoll_u32_attr kcoll_attr_##_name = { \
		__ATTR(_name, 0644, kcoll_u32_show, kcoll_u32_store), &(_tun) \
	}

static KCOLL_U32_ATTR(level0_alpha_ns, kcoll_tun_l0_alpha);
static KCOLL_U32_ATTR(level0_gbps, kcoll_tun_l0_gbps);
static KCOLL_U32_ATTR(level0_reduce_gbps, kcoll_tun_l0_red);
static KCOLL_U32_ATTR(level1_alpha_ns, kcoll_tun_l1_alpha);
static KCOLL_U32_ATTR(level1_gbps, kcoll_tun_l1_gbps);
static KCOLL_U32_ATTR(level1_reduce_gbps, kcoll_tun_l1_red);
static KCOLL_U32_ATTR(level2_alpha_ns, kcoll_tun_l2_alpha);
static KCOLL_U32_ATTR(level2_gbps, kcoll_tun_l2_gbps);
static KCOLL_U32_ATTR(level2_reduce_gbps, kcoll_tun_l2_red);
static KCOLL_U32_ATTR(level1_auto_mesh, kcoll_tun_l1_mesh);
static KCOLL_U32_ATTR(level2_auto_mesh, kcoll_tun_l2_mesh);
static KCOLL_U32_ATTR(level2_conv_pct, kcoll_tun_l2_conv);

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

static ssize_t user_max_bytes_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return kcoll_param_get_user_max(buf, NULL);
}

static ssize_t user_max_bytes_store(struct device *dev, struct device_attribute *attr,
				    const char *buf, size_t count)
{
	int ret = kcoll_set_user_max(buf);

	return ret ? ret : count;
}
static DEVICE_ATTR_RW(user_max_bytes);

static struct attribute *kcoll_attrs[] = {
	&dev_attr_algo.attr,
	&kcoll_attr_chunk.attr.attr,
	&kcoll_attr_slots.attr.attr,
	&kcoll_attr_timeout.attr.attr,
	&kcoll_attr_ctimeout.attr.attr,
	&kcoll_attr_level0_alpha_ns.attr.attr,
	&kcoll_attr_level0_gbps.attr.attr,
	&kcoll_attr_level0_reduce_gbps.attr.attr,
	&kcoll_attr_level1_alpha_ns.attr.attr,
	&kcoll_attr_level1_gbps.attr.attr,
	&kcoll_attr_level1_reduce_gbps.attr.attr,
	&kcoll_attr_level2_alpha_ns.attr.attr,
	&kcoll_attr_level2_gbps.attr.attr,
	&kcoll_attr_level2_reduce_gbps.attr.attr,
	&kcoll_attr_level1_auto_mesh.attr.attr,
	&kcoll_attr_level2_auto_mesh.attr.attr,
	&kcoll_attr_level2_conv_pct.attr.attr,
	&dev_attr_user_max_bytes.attr,
	NULL,
};

static const struct attribute_group kcoll_attr_group = {
	.attrs = kcoll_attrs,
};

const struct attribute_group *kcoll_sysfs_groups[] = {
	&kcoll_attr_group,
	NULL,
};
