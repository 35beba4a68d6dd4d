// SPDX-License-Identifier: GPL-2.0
/*
 * Tunables: module parameters give the defaults at load time, attributes
 * of the misc device (/sys/class/misc/kcoll/) change them at run time.
 * New communicators copy them at creation (kcoll_tunables_get()); running
 * ones are unaffected.  A write that does not validate returns -EINVAL
 * and changes nothing.
 *
 * Each tunable is one line of the table in kcoll_tunables.h, from which
 * this file generates its descriptor (struct kcoll_tunable: default,
 * value, check, sysfs attribute), its module parameter and description,
 * and its place in struct kcoll_tunables.  The link model's defaults are
 * the module's default cost model (kcoll_tunables_model()).
 *
 * user_max_bytes is not a default of new communicators but a bound on all
 * of a user's together (kcoll_guard.c), read at every creation.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/stringify.h>
#include <linux/sysfs.h>

#include "kcoll.h"

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

static int kcoll_check_port(u32 v)
{
	return v >= 1 && v <= 65535 ? 0 : -EINVAL;
}

static int kcoll_check_qp_timeout(u32 v)
{
	return v >= KCOLL_QP_TIMEOUT_MIN && v <= KCOLL_QP_TIMEOUT_MAX ? 0 : -EINVAL;
}

static int kcoll_check_qp_retry(u32 v)
{
	return v <= KCOLL_QP_RETRY_MAX ? 0 : -EINVAL;
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

/* ----------------------------------------------------- parse and print */

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

/* ------------------------------------------------------------ tunables */

union kcoll_tun_val {
	u32 v32;			/* u32, gbit (Mbit/s) */
	u64 v64;			/* u64 */
	char str[KCOLL_ALGO_STR_MAX];	/* str */
};

/*
 * One tunable: its sysfs attribute, how it is written and shown (the same
 * for its module parameter), its value and its default.
 */
struct kcoll_tunable {
	struct device_attribute attr;
	int (*check)(u32 v);
	int (*set)(struct kcoll_tunable *t, const char *buf);
	int (*show)(struct kcoll_tunable *t, char *buf);
	union kcoll_tun_val val;	/* kcoll_tun_lock */
	union kcoll_tun_val def;
};

static DEFINE_MUTEX(kcoll_tun_lock);
/* The algo tunable, parsed (kcoll_tun_algo holds the string). */
static struct kcoll_algo_sel kcoll_tun_sel;

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

static int kcoll_tun_set_u32(struct kcoll_tunable *t, const char *buf)
{
	return kcoll_set_u32(buf, &t->val.v32, t->check, false);
}

static int kcoll_tun_show_u32(struct kcoll_tunable *t, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(t->val.v32));
}

static int kcoll_tun_set_gbit(struct kcoll_tunable *t, const char *buf)
{
	return kcoll_set_u32(buf, &t->val.v32, t->check, true);
}

static int kcoll_tun_show_gbit(struct kcoll_tunable *t, char *buf)
{
	return kcoll_emit_gbit(buf, READ_ONCE(t->val.v32));
}

/* Any u64 ("0" lifts the limit); anything else is -EINVAL and changes nothing. */
static int kcoll_tun_set_u64(struct kcoll_tunable *t, const char *buf)
{
	u64 v;

	if (kstrtou64(buf, 0, &v))
		return -EINVAL;
	mutex_lock(&kcoll_tun_lock);
	t->val.v64 = v;
	mutex_unlock(&kcoll_tun_lock);
	return 0;
}

static int kcoll_tun_show_u64(struct kcoll_tunable *t, char *buf)
{
	u64 v;

	mutex_lock(&kcoll_tun_lock);
	v = t->val.v64;
	mutex_unlock(&kcoll_tun_lock);
	return sysfs_emit(buf, "%llu\n", v);
}

static int kcoll_tun_set_str(struct kcoll_tunable *t, const char *buf)
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
		strscpy(t->val.str, strim(str), sizeof(t->val.str));
		kcoll_tun_sel = *sel;
		mutex_unlock(&kcoll_tun_lock);
	}
out:
	kfree(sel);
	kfree(str);
	return ret;
}

static int kcoll_tun_show_str(struct kcoll_tunable *t, char *buf)
{
	int n;

	mutex_lock(&kcoll_tun_lock);
	n = sysfs_emit(buf, "%s\n", t->val.str);
	mutex_unlock(&kcoll_tun_lock);
	return n;
}

static ssize_t kcoll_attr_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct kcoll_tunable *t = container_of(attr, struct kcoll_tunable, attr);

	return t->show(t, buf);
}

static ssize_t kcoll_attr_store(struct device *dev, struct device_attribute *attr,
				const char *buf, size_t count)
{
	struct kcoll_tunable *t = container_of(attr, struct kcoll_tunable, attr);
	int ret = t->set(t, buf);

	return ret ? ret : count;
}

/* A kind's member of union kcoll_tun_val, and its default as stored there. */
#define KCOLL_TUN_MEMBER_u32		v32
#define KCOLL_TUN_MEMBER_gbit		v32
#define KCOLL_TUN_MEMBER_u64		v64
#define KCOLL_TUN_MEMBER_str		str
#define KCOLL_TUN_VAL_u32(def)		(def)
#define KCOLL_TUN_VAL_gbit(def)		((def) * 1000)
#define KCOLL_TUN_VAL_u64(def)		(def)
#define KCOLL_TUN_VAL_str(def)		def

/* The descriptors, kcoll_tun_<name>, with their defaults. */
#define KCOLL_TUNABLE(_name, kind, _field, _check, _def, _desc)		\
	static struct kcoll_tunable kcoll_tun_##_name = {			\
		.attr = __ATTR(_name, 0644, kcoll_attr_show, kcoll_attr_store),	\
		.check = _check,						\
		.set = kcoll_tun_set_##kind,					\
		.show = kcoll_tun_show_##kind,					\
		.val.KCOLL_TUN_MEMBER_##kind = KCOLL_TUN_VAL_##kind(_def),	\
		.def.KCOLL_TUN_MEMBER_##kind = KCOLL_TUN_VAL_##kind(_def),	\
	}
#include "kcoll_tunables.h"
#undef KCOLL_TUNABLE

/* ---------------------------------------------------- module parameters */

static int kcoll_param_set(const char *val, const struct kernel_param *kp)
{
	struct kcoll_tunable *t = kp->arg;

	return t->set(t, val);
}

static int kcoll_param_get(char *buf, const struct kernel_param *kp)
{
	struct kcoll_tunable *t = kp->arg;

	return t->show(t, buf);
}

static const struct kernel_param_ops kcoll_param_ops = {
	.set = kcoll_param_set,
	.get = kcoll_param_get,
};

#define KCOLL_TUNABLE(_name, ...)	\
	module_param_cb(_name, &kcoll_param_ops, &kcoll_tun_##_name, 0444)
#include "kcoll_tunables.h"
#undef KCOLL_TUNABLE

/* A number's description ends with its default; a string's is whole. */
#define KCOLL_TUN_DESC_u32(desc, def)	desc "default " __stringify(def) ")"
#define KCOLL_TUN_DESC_gbit(desc, def)	KCOLL_TUN_DESC_u32(desc, def)
#define KCOLL_TUN_DESC_u64(desc, def)	KCOLL_TUN_DESC_u32(desc, def)
#define KCOLL_TUN_DESC_str(desc, def)	desc

#define KCOLL_TUNABLE(_name, kind, _field, _check, _def, _desc)	\
	MODULE_PARM_DESC(_name, KCOLL_TUN_DESC_##kind(_desc, _def))
#include "kcoll_tunables.h"
#undef KCOLL_TUNABLE

/* -------------------------------------------------------- what they give */

/* A value (@v: val or def of a descriptor) into its field of struct kcoll_tunables. */
#define KCOLL_TUN_COPY_u32(dst, v)	((dst) = (v).v32)
#define KCOLL_TUN_COPY_gbit(dst, v)	((dst) = (v).v32)
#define KCOLL_TUN_COPY_u64(dst, v)	((dst) = (v).v64)
#define KCOLL_TUN_COPY_str(dst, v)	strscpy(dst, (v).str, sizeof(dst))

/* The current values (kcoll_tun_lock held), or the defaults. */
static void kcoll_tunables_fill(struct kcoll_tunables *t, bool defaults)
{
#define KCOLL_TUNABLE(_name, kind, _field, ...)					\
	KCOLL_TUN_COPY_##kind(t->_field, defaults ? kcoll_tun_##_name.def : kcoll_tun_##_name.val)
#include "kcoll_tunables.h"
#undef KCOLL_TUNABLE
	if (!defaults)
		t->sel = kcoll_tun_sel;
}

void kcoll_tunables_get(struct kcoll_tunables *t)
{
	mutex_lock(&kcoll_tun_lock);
	kcoll_tunables_fill(t, false);
	mutex_unlock(&kcoll_tun_lock);
}

u64 kcoll_user_max_bytes(void)
{
	u64 v;

	mutex_lock(&kcoll_tun_lock);
	v = kcoll_tun_user_max_bytes.val.v64;
	mutex_unlock(&kcoll_tun_lock);
	return v;
}

/*
 * The defaults come from algo/ (KC_COST_DEF_*); check that converted to
 * the cost model they are exactly kc_cost_default.
 */
static int kcoll_tunables_check_model(const struct kcoll_tunables *def)
{
	struct kc_cost_model m = {};
	u32 l;

	kcoll_tunables_model(def, &m);
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		if (m.lv[l].alpha != kc_cost_default.lv[l].alpha ||
		    m.lv[l].beta != kc_cost_default.lv[l].beta ||
		    m.lv[l].gamma != kc_cost_default.lv[l].gamma ||
		    m.lv[l].auto_mesh != kc_cost_default.lv[l].auto_mesh)
			goto differ;
	}
	if (m.conv_q8 == kc_cost_default.conv_q8 && m.window == kc_cost_default.window)
		return 0;
differ:
	pr_err("self-check: the default link tunables are not algo/'s default cost model\n");
	return -EINVAL;
}

/* ------------------------------------------------------ sysfs attributes */

/* One member per tunable: sizeof() counts them. */
struct kcoll_tun_count {
#define KCOLL_TUNABLE(_name, ...)	char _name
#include "kcoll_tunables.h"
#undef KCOLL_TUNABLE
};

static struct attribute *kcoll_attrs[sizeof(struct kcoll_tun_count) + 1];

static const struct attribute_group kcoll_attr_group = {
	.attrs = kcoll_attrs,
};

const struct attribute_group *kcoll_sysfs_groups[] = {
	&kcoll_attr_group,
	NULL,
};

/* At load, before the misc device: check the defaults, list the attributes. */
int kcoll_tunables_init(void)
{
	struct kcoll_tunables *def;
	u32 n = 0;
	int ret;

	def = kzalloc(sizeof(*def), GFP_KERNEL);
	if (!def)
		return -ENOMEM;
	kcoll_tunables_fill(def, true);
	ret = kcoll_tunables_check_model(def);
	kfree(def);
	if (ret)
		return ret;
#define KCOLL_TUNABLE(_name, ...)	(kcoll_attrs[n++] = &kcoll_tun_##_name.attr.attr)
#include "kcoll_tunables.h"
#undef KCOLL_TUNABLE
	return 0;
}
