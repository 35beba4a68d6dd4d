// SPDX-License-Identifier: GPL-2.0
/*
 * collctl doctor: what a user checks on a node before running a job, one
 * line per check, "ok" or "problem" with a hint:
 *
 *   module       /dev/kcoll present and openable, the module's version and
 *                ABI against libcoll's (coll_module_info())
 *   permissions  /dev/kcoll's mode, owner and group, and whether this user
 *                may open it; if not, libcoll's own message, with the fix
 *                that fits (the udev rule, or usermod -aG kcoll USER)
 *   rdma device  the RDMA device and port libcoll would use (--rdma-device,
 *                else $KCOLL_DEVICE, else the first device by name with an
 *                active Ethernet port), the port's state and link layer
 *   mtu          the MTU of the port's net device and the RoCE path MTU it
 *                gives (see DOCTOR_ROCE_HDR_BYTES below)
 *   address      the local address coll_comm_init_oob() would exchange:
 *                $KCOLL_ADDR, else the device's RoCE v2 GID
 *                (coll_local_addr(); here coll_local_addr_at() on --root)
 *   memlock      the caller's RLIMIT_MEMLOCK (kcoll pins the buffers of an
 *                operation against it), or CAP_IPC_LOCK
 *   listen port  the module's rdma_cm listener port, only when the module
 *                has the parameter (/sys/module/kcoll/parameters/listen_port)
 *   secret       where a communicator's secret would come from
 *                ($KCOLL_SECRET_FILE checked as libcoll checks it, or
 *                $KCOLL_SECRET); the secret itself is never printed
 *   persisted    collctl config --persist's file ($KCOLL_MODPROBE_CONF, else
 *                /etc/modprobe.d/kcoll.conf, read by collctl_persist.c) and
 *                its NAME=VALUE pairs, against the loaded module's values
 *                (/sys/module/kcoll/parameters/NAME): a difference means
 *                the module was loaded without modprobe or changed since,
 *                and the next load will behave differently from this one
 *
 * With --ranktable FILE or --hosts LIST (run on every node of the job at
 * once), then whether this node reaches every other one over RDMA, one line
 * per pair (collctl_pairs.c).
 *
 * Exit status 0 when every check passes, 1 when one does not, 2 for bad
 * arguments (before any check).  --root replaces /sys (the tests give a
 * fake tree; /dev/kcoll is -D).
 *
 * The address comes from libcoll's own function so that what doctor prints
 * is what a job would use; coll_local_addr_at() (coll_internal.h) is the
 * same with a sysfs root, linked from the static libcoll.a.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <json-c/json.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll_internal.h"
#include "collctl_doctor.h"
#include "collctl_fmt.h"
#include "collctl_pairs.h"
#include "collctl_persist.h"
#include "collctl_sysfs.h"
#include "size.h"

/* Below this RLIMIT_MEMLOCK an ordinary AllReduce of 32 MiB (two buffers) fails. */
#define DOCTOR_MEMLOCK_MIN	(64ull << 20)
#define DOCTOR_MAX_CHECKS	9
/*
 * The port's active MTU is not in sysfs (only ibv_query_port() has it), but
 * for RoCE the kernel derives it from the net device's MTU: the largest IB
 * MTU (256, 512, ..., 4096) that fits the Ethernet MTU less the RoCE v2
 * headers, 96 bytes as iboe_get_mtu() counts them (GRH 40, UDP 8, BTH 12,
 * XRC 4, AtomicETH 28, ICRC 4; rxe counts 80, which differs only for MTUs
 * 1104..1119 and the like).  doctor does the same.
 *
 * The threshold is the path MTU, not the Ethernet one: below an IB MTU of
 * 1024 (an Ethernet MTU below 1120) every chunk of an operation is cut into
 * at least twice the packets, and such MTUs mean a tunnel or a mistake.  A
 * stock 1500 gives 1024 and passes: requiring 1500 plus the headers would
 * flag every default Ethernet network, on which kcoll runs fine.  The
 * classic RoCE failure, nodes with different MTUs, cannot be seen from one
 * node: the hint says to use the same MTU on every node.
 */
#define DOCTOR_ROCE_HDR_BYTES	96
#define DOCTOR_IB_MTU_MIN	1024
#define CAP_IPC_LOCK_BIT	14

struct check {
	const char *name;
	bool ok;
	char detail[512];
	char hint[512];
};

struct doctor {
	const struct cc_doctor_env *env;
	const char *root;		/* "/sys" or --root */
	const char *rdma_dev;		/* --rdma-device, else $KCOLL_DEVICE, else NULL */
	char ibroot[512];
	struct check c[DOCTOR_MAX_CHECKS];
	int n;
	/* what the RDMA checks found, for the JSON output */
	char dev[128], addr[INET6_ADDRSTRLEN + 16];
	int port;
	char listen_port[32];
	/* the module check's answer, for the permissions check */
	int module_ret;
	char module_err[512];
};

static struct check *add_check(struct doctor *d, const char *name, bool ok)
{
	struct check *c = &d->c[d->n++];

	c->name = name;
	c->ok = ok;
	c->detail[0] = c->hint[0] = '\0';
	return c;
}

static void __attribute__((format(printf, 3, 4)))
put(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

#define DETAIL(c, ...)	put((c)->detail, sizeof((c)->detail), __VA_ARGS__)
#define HINT(c, ...)	put((c)->hint, sizeof((c)->hint), __VA_ARGS__)

/* ------------------------------------------------------------- module */

static void check_module(struct doctor *d)
{
	const char *dev = d->env->device ? d->env->device : COLL_DEVICE;
	struct coll_module_info mi;
	struct check *c;

	d->module_ret = coll_module_info(d->env->device, &mi);
	if (d->module_ret) {
		snprintf(d->module_err, sizeof(d->module_err), "%s", coll_last_error());
		c = add_check(d, "module", false);
		DETAIL(c, "%s", d->module_err);
		HINT(c, "load the module ('modprobe kcoll', or 'insmod kcoll.ko' from a build) "
		     "on every node of the job");
		return;
	}
	c = add_check(d, "module", true);
	DETAIL(c, "kcoll %u.%u.%u, ABI %u (libcoll %u), through %s", mi.version >> 16,
	       (mi.version >> 8) & 0xff, mi.version & 0xff, mi.abi_version,
	       (unsigned int)KCOLL_ABI_VERSION, dev);
}

/* ------------------------------------------------------ permissions */

static void check_access(struct doctor *d)
{
	const char *dev = d->env->device ? d->env->device : COLL_DEVICE;
	char pbuf[1024], gbuf[1024], owner[64], group[64];
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;
	struct check *c;
	struct stat st;
	bool may;

	if (stat(dev, &st)) {
		c = add_check(d, "permissions", false);
		DETAIL(c, "%.256s: %s", dev, strerror(errno));
		HINT(c, "the node appears when the module is loaded (see the module check)");
		return;
	}
	getpwuid_r(st.st_uid, &pw, pbuf, sizeof(pbuf), &pwp);
	getgrgid_r(st.st_gid, &gr, gbuf, sizeof(gbuf), &grp);
	if (pwp)
		snprintf(owner, sizeof(owner), "%s", pwp->pw_name);
	else
		snprintf(owner, sizeof(owner), "%u", (unsigned int)st.st_uid);
	if (grp)
		snprintf(group, sizeof(group), "%s", grp->gr_name);
	else
		snprintf(group, sizeof(group), "%u", (unsigned int)st.st_gid);
	/* the open itself decides (an ACL or a security module may refuse) */
	may = !access(dev, R_OK | W_OK) && d->module_ret != -EACCES;
	c = add_check(d, "permissions", may);
	DETAIL(c, "%04o %s:%s, this user may %sopen it", (unsigned int)(st.st_mode & 07777),
	       owner, group, may ? "" : "not ");
	/* libcoll's message names the fix that fits this node and user */
	if (!may)
		HINT(c, "%s", d->module_ret == -EACCES ? d->module_err :
		     "the group of the node must be one of this user's (usermod -aG kcoll USER)");
}

/* ------------------------------------------------------ RDMA device */

static int visible(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

static int numeric(const struct dirent *e)
{
	return e->d_name[0] >= '0' && e->d_name[0] <= '9';
}

static int by_number(const struct dirent **a, const struct dirent **b)
{
	return atoi((*a)->d_name) - atoi((*b)->d_name);
}

static void read_or(const char *dir, const char *name, char *buf, size_t len)
{
	if (cc_sysfs_read(dir, name, buf, len))
		put(buf, len, "?");
}

/*
 * Every port of @dev into @list ("rxe0 port 1: ACTIVE, Ethernet; ...");
 * the first ACTIVE Ethernet one (the one libcoll takes) into *@port and
 * @what.  True when there is one.
 */
static bool dev_ports(struct doctor *d, const char *dev, char *list, size_t llen, int *port,
		      char *what, size_t wlen)
{
	struct dirent **ent;
	char dir[1024], state[64], ll[64];
	bool found = false;
	size_t used = strlen(list);
	int n, i;

	snprintf(dir, sizeof(dir), "%s/%s/ports", d->ibroot, dev);
	n = scandir(dir, &ent, numeric, by_number);
	if (n < 0) {
		if (used < llen)
			snprintf(list + used, llen - used, "%s%s: %s", used ? "; " : "", dev,
				 errno == ENOENT ? "no such RDMA device (or no ports)" :
				 strerror(errno));
		return false;
	}
	for (i = 0; i < n; i++) {
		snprintf(dir, sizeof(dir), "%s/%s/ports/%s", d->ibroot, dev, ent[i]->d_name);
		read_or(dir, "state", state, sizeof(state));
		read_or(dir, "link_layer", ll, sizeof(ll));
		used = strlen(list);
		if (used < llen)
			snprintf(list + used, llen - used, "%s%s port %s: %s, %s", used ? "; " : "",
				 dev, ent[i]->d_name, state, ll);
		if (!found && strstr(state, "ACTIVE") && !strcmp(ll, "Ethernet")) {
			found = true;
			*port = atoi(ent[i]->d_name);
			snprintf(what, wlen, "%.64s port %.8s: %.40s, %.40s", dev, ent[i]->d_name,
				 state, ll);
		}
		free(ent[i]);
	}
	free(ent);
	return found;
}

/*
 * The device and port: the named one, else the first device (by name, as
 * libcoll scans) whose active Ethernet port has an address.
 */
static void check_rdma(struct doctor *d)
{
	char list[1024] = "", what[256] = "", buf[INET6_ADDRSTRLEN];
	struct dirent **ent;
	struct check *c;
	bool any = false;
	int n, i, port = 0;

	if (d->rdma_dev) {
		if (strchr(d->rdma_dev, '/') || d->rdma_dev[0] == '.') {
			c = add_check(d, "rdma device", false);
			DETAIL(c, "'%.64s' is not an RDMA device name", d->rdma_dev);
			HINT(c, "name a device of 'rdma link' (e.g. rxe0)");
			return;
		}
		any = dev_ports(d, d->rdma_dev, list, sizeof(list), &port, what, sizeof(what));
		if (any)
			snprintf(d->dev, sizeof(d->dev), "%.64s", d->rdma_dev);
	} else {
		n = scandir(d->ibroot, &ent, visible, alphasort);
		if (n < 0) {
			c = add_check(d, "rdma device", false);
			DETAIL(c, "no RDMA device: %s: %s", d->ibroot, strerror(errno));
			HINT(c, "load a driver, or soft-RoCE: 'modprobe rdma_rxe; rdma link add "
			     "rxe0 type rxe netdev eth0'");
			return;
		}
		for (i = 0; i < n; i++) {
			char w[256] = "";
			int p = 0;

			/* the first device with an active port whose address libcoll takes */
			if (dev_ports(d, ent[i]->d_name, list, sizeof(list), &p, w, sizeof(w)) &&
			    !d->dev[0] && !coll_local_addr_at(d->ibroot, ent[i]->d_name, buf,
							      sizeof(buf))) {
				snprintf(d->dev, sizeof(d->dev), "%.64s", ent[i]->d_name);
				snprintf(what, sizeof(what), "%s", w);
				port = p;
			}
			any = any || p;
			free(ent[i]);
		}
		free(ent);
		any = any && d->dev[0];
	}
	if (!list[0])
		snprintf(list, sizeof(list), "none in %s", d->ibroot);
	if (!any) {
		c = add_check(d, "rdma device", false);
		DETAIL(c, "no active Ethernet (RoCE) port with an address%s%s: %s",
		       d->rdma_dev ? " on " : "", d->rdma_dev ? d->rdma_dev : "", list);
		HINT(c, "bring the link up ('ip link set eth0 up'; 'rdma link' shows the "
		     "ports), give the net device an IP address, or set KCOLL_DEVICE to a "
		     "device that has one%s", d->rdma_dev ? "" : " (InfiniBand ports are not "
		     "used: kcoll connects through rdma_cm over IP)");
		return;
	}
	d->port = port;
	c = add_check(d, "rdma device", true);
	DETAIL(c, "%s%s", what, d->rdma_dev ? (getenv("KCOLL_DEVICE") &&
		!strcmp(getenv("KCOLL_DEVICE"), d->rdma_dev) ? " (KCOLL_DEVICE)" :
		" (--rdma-device)") : " (the first with an active RoCE port)");
}

static void check_address(struct doctor *d)
{
	const char *env = getenv("KCOLL_ADDR");
	char addr[INET6_ADDRSTRLEN];
	struct check *c;
	int ret;

	coll_clearerr();
	ret = coll_local_addr_at(d->ibroot, d->rdma_dev, addr, sizeof(addr));
	if (env && *env) {
		c = add_check(d, "address", true);
		snprintf(d->addr, sizeof(d->addr), "%s", env);
		DETAIL(c, "%.64s (KCOLL_ADDR; the device's own would be %s)", env,
		       ret ? "none" : addr);
		return;
	}
	if (ret) {
		c = add_check(d, "address", false);
		DETAIL(c, "%s", coll_last_error());
		HINT(c, "coll_comm_init_oob() needs it: give the port's net device an IP "
		     "address (RoCE v2), set KCOLL_DEVICE, or KCOLL_ADDR");
		return;
	}
	snprintf(d->addr, sizeof(d->addr), "%s", addr);
	c = add_check(d, "address", true);
	DETAIL(c, "%s (RoCE v2 GID of %s, what coll_comm_init_oob() exchanges)", addr,
	       d->dev[0] ? d->dev : "the device");
}

/* ------------------------------------------------------------ mtu */

/* The net device of @d's port: that of its first GID bound to one. */
static bool port_netdev(const struct doctor *d, char *ndev, size_t len)
{
	struct dirent **ent;
	char dir[1024];
	bool found = false;
	int n, i;

	snprintf(dir, sizeof(dir), "%s/%s/ports/%d/gid_attrs/ndevs", d->ibroot, d->dev, d->port);
	n = scandir(dir, &ent, numeric, by_number);
	for (i = 0; i < n; i++) {
		if (!found && !cc_sysfs_read(dir, ent[i]->d_name, ndev, len) && ndev[0])
			found = true;
		free(ent[i]);
	}
	if (n >= 0)
		free(ent);
	return found;
}

/* The RoCE path MTU of an Ethernet MTU (iboe_get_mtu()); 0 below 256. */
static int roce_mtu(long eth_mtu)
{
	int ib;

	for (ib = 4096; ib >= 256; ib /= 2)
		if (eth_mtu - DOCTOR_ROCE_HDR_BYTES >= ib)
			return ib;
	return 0;
}

static void check_mtu(struct doctor *d)
{
	char ndev[64], dir[700], buf[32] = "", *end = buf;
	struct check *c;
	long mtu;
	int ib;

	if (!d->dev[0]) {
		c = add_check(d, "mtu", false);
		DETAIL(c, "no RoCE port to check (see the rdma device check)");
		return;
	}
	if (!port_netdev(d, ndev, sizeof(ndev))) {
		c = add_check(d, "mtu", false);
		DETAIL(c, "%s port %d: no GID is bound to a net device (%s/%s/ports/%d/"
		       "gid_attrs/ndevs)", d->dev, d->port, d->ibroot, d->dev, d->port);
		HINT(c, "a RoCE port's GIDs come from its net device's addresses: give it one");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/class/net/%s", d->root, ndev);
	mtu = cc_sysfs_read(dir, "mtu", buf, sizeof(buf)) ? 0 : strtol(buf, &end, 10);
	if (mtu <= 0 || *end) {
		c = add_check(d, "mtu", false);
		DETAIL(c, "%s (of %s port %d): no MTU in %s/mtu", ndev, d->dev, d->port, dir);
		return;
	}
	ib = roce_mtu(mtu);
	c = add_check(d, "mtu", ib >= DOCTOR_IB_MTU_MIN);
	DETAIL(c, "%s MTU %ld: RoCE path MTU %d of %s port %d%s", ndev, mtu, ib, d->dev, d->port,
	       ib >= DOCTOR_IB_MTU_MIN ? " (use the same MTU on every node)" : "");
	if (!c->ok)
		HINT(c, "RoCE's path MTU is the largest IB MTU (256..4096) that fits the "
		     "Ethernet MTU less %d bytes of headers; below %d every chunk travels in "
		     "small packets: 'ip link set %s mtu 1500' (or more), and use the same MTU "
		     "on every node (mismatched MTUs between nodes are a classic RoCE failure)",
		     DOCTOR_ROCE_HDR_BYTES, DOCTOR_IB_MTU_MIN, ndev);
}

/* -------------------------------------------------------- memlock */

static bool has_ipc_lock(void)
{
	char line[256];
	bool ret = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7)) {
			ret = (strtoull(line + 7, NULL, 16) >> CAP_IPC_LOCK_BIT) & 1;
			break;
		}
	fclose(f);
	return ret;
}

static void check_memlock(struct doctor *d)
{
	struct rlimit rl;
	struct check *c;

	if (getrlimit(RLIMIT_MEMLOCK, &rl)) {
		c = add_check(d, "memlock", false);
		DETAIL(c, "getrlimit: %s", strerror(errno));
		return;
	}
	if (rl.rlim_cur == RLIM_INFINITY) {
		c = add_check(d, "memlock", true);
		DETAIL(c, "RLIMIT_MEMLOCK unlimited");
		return;
	}
	if (has_ipc_lock()) {
		c = add_check(d, "memlock", true);
		DETAIL(c, "RLIMIT_MEMLOCK %llu KiB, not applied: CAP_IPC_LOCK",
		       (unsigned long long)rl.rlim_cur >> 10);
		return;
	}
	c = add_check(d, "memlock", rl.rlim_cur >= DOCTOR_MEMLOCK_MIN);
	DETAIL(c, "RLIMIT_MEMLOCK %llu KiB (hard %s%llu KiB): kcoll pins each operation's "
	       "buffers against it", (unsigned long long)rl.rlim_cur >> 10,
	       rl.rlim_max == RLIM_INFINITY ? "unlimited, " : "",
	       rl.rlim_max == RLIM_INFINITY ? 0ull : (unsigned long long)rl.rlim_max >> 10);
	if (!c->ok)
		HINT(c, "below %llu MiB an operation on large buffers fails with ENOMEM: "
		     "'ulimit -l unlimited' in the job's shell, memlock in "
		     "/etc/security/limits.conf, or LimitMEMLOCK= of the service that "
		     "starts the ranks", DOCTOR_MEMLOCK_MIN >> 20);
}

/* ---------------------------------------------------- listen port */

static void check_listen_port(struct doctor *d)
{
	char dir[600];
	struct check *c;

	snprintf(dir, sizeof(dir), "%s/module/kcoll/parameters", d->root);
	if (cc_sysfs_read(dir, "listen_port", d->listen_port, sizeof(d->listen_port)))
		return;		/* a module without the parameter: nothing to say */
	c = add_check(d, "listen port", true);
	DETAIL(c, "%s (rdma_cm, the module's listener; open it between the nodes)",
	       d->listen_port);
}

/* --------------------------------------------------------- secret */

static void check_secret(struct doctor *d)
{
	const char *file = getenv("KCOLL_SECRET_FILE"), *env = getenv("KCOLL_SECRET");
	uint8_t buf[KCOLL_SECRET_MAX + 1];
	const char *from;
	struct check *c;
	size_t len;
	int ret;

	coll_clearerr();
	ret = coll_secret_get(NULL, 0, buf, &len, &from);
	explicit_bzero(buf, sizeof(buf));
	if (ret) {
		c = add_check(d, "secret", false);
		DETAIL(c, "%s", coll_last_error());
		HINT(c, "the secret file must be a regular file only its owner may read "
		     "(chmod 600) of %d..%d bytes", KCOLL_SECRET_MIN, KCOLL_SECRET_MAX);
		return;
	}
	c = add_check(d, "secret", true);
	if (file && *file)
		DETAIL(c, "KCOLL_SECRET_FILE %s%s", file,
		       env && *env ? " (KCOLL_SECRET is set too and not used)" : "");
	else if (env && *env)
		DETAIL(c, "KCOLL_SECRET (from the environment; KCOLL_SECRET_FILE keeps it out "
		       "of the job's environment)");
	else
		DETAIL(c, "none set: coll_comm_init_oob() draws one per communicator; a rank "
		       "table job admits peers by address alone (KCOLL_SECRET_FILE)");
}

/* ------------------------------------------------------ persisted */

struct persisted {
	char dir[600];			/* the module's parameters */
	bool loaded;
	char pairs[256], diff[256];	/* "a=1 b=2", the first difference */
	char unknown[64];		/* a persisted NAME the module does not have */
};

/* Whether @a and @b are the same value: the same text, or the same number. */
static bool same_value(const char *a, const char *b)
{
	char *ea, *eb;
	double x, y;

	if (!strcmp(a, b))
		return true;
	x = strtod(a, &ea);
	y = strtod(b, &eb);
	return ea != a && eb != b && !*ea && !*eb && x == y;
}

static void persisted_pair(void *ctx, const char *name, const char *value)
{
	struct persisted *p = ctx;
	size_t used = strlen(p->pairs);
	char now[256];

	if (used < sizeof(p->pairs))
		snprintf(p->pairs + used, sizeof(p->pairs) - used, "%s%s%s%s", used ? " " : "",
			 name, value ? "=" : "", value ? value : "");
	/* a bare NAME is modprobe's "true": nothing to compare */
	if (!p->loaded || !value || p->diff[0] || p->unknown[0])
		return;
	if (cc_sysfs_read(p->dir, name, now, sizeof(now)))
		snprintf(p->unknown, sizeof(p->unknown), "%s", name);
	else if (!same_value(now, value))
		snprintf(p->diff, sizeof(p->diff), "%.64s is %.64s now, %.64s is persisted", name,
			 now, value);
}

static void check_persisted(struct doctor *d)
{
	struct persisted p = { .loaded = false };
	const char *path = NULL;
	struct check *c;
	struct stat st;

	snprintf(p.dir, sizeof(p.dir), "%s/module/kcoll/parameters", d->root);
	p.loaded = !stat(p.dir, &st);
	if (cc_persist_each(d->env->prog, &path, persisted_pair, &p)) {
		c = add_check(d, "persisted", false);
		DETAIL(c, "cannot read %s (see the message above)", path);
		HINT(c, "collctl config --show-persistent reads the same file");
		return;
	}
	if (!p.pairs[0]) {
		c = add_check(d, "persisted", true);
		DETAIL(c, "none (%s %s)", path, stat(path, &st) ? "does not exist" :
		       "holds no options kcoll line");
		return;
	}
	c = add_check(d, "persisted", !p.diff[0] && !p.unknown[0]);
	if (p.unknown[0]) {
		DETAIL(c, "%s: %s; the module has no parameter %s", path, p.pairs, p.unknown);
		HINT(c, "the kernel ignores an unknown parameter at load: remove it with "
		     "'collctl config --unpersist %s'", p.unknown);
	} else if (p.diff[0]) {
		DETAIL(c, "%s: %s; %s", path, p.pairs, p.diff);
		HINT(c, "the module was loaded without modprobe, or changed since: reload it "
		     "with modprobe (modprobe -r kcoll; modprobe kcoll) or run collctl config "
		     "NAME VALUE");
	} else {
		DETAIL(c, "%s: %s%s", path, p.pairs, p.loaded ? ", as the module has them" :
		       " (the module is not loaded; modprobe applies them)");
	}
}

/* ---------------------------------------------------------- output */

/* The checks, then the pairs when @pairs is not NULL. */
static int report(struct doctor *d, const struct cc_pairs *pairs)
{
	int i, bad = 0;

	for (i = 0; i < d->n; i++)
		bad += !d->c[i].ok;
	if (d->env->json) {
		json_object *o = json_object_new_object(), *a = json_object_new_array();

		for (i = 0; i < d->n; i++) {
			json_object *e = json_object_new_object();

			json_object_object_add(e, "check", json_object_new_string(d->c[i].name));
			json_object_object_add(e, "status",
					       json_object_new_string(d->c[i].ok ? "ok" : "problem"));
			json_object_object_add(e, "detail", json_object_new_string(d->c[i].detail));
			if (d->c[i].hint[0])
				json_object_object_add(e, "hint",
						       json_object_new_string(d->c[i].hint));
			json_object_array_add(a, e);
		}
		json_object_object_add(o, "checks", a);
		if (d->dev[0]) {
			json_object_object_add(o, "rdma_device", json_object_new_string(d->dev));
			json_object_object_add(o, "port", json_object_new_int(d->port));
		}
		if (d->addr[0])
			json_object_object_add(o, "address", json_object_new_string(d->addr));
		if (d->listen_port[0])
			json_object_object_add(o, "listen_port",
					       json_object_new_int(atoi(d->listen_port)));
		json_object_object_add(o, "problems", json_object_new_int(bad));
		if (pairs)
			bad += cc_pairs_report(pairs, o);
		printf("%s\n", json_object_to_json_string_ext(o, cc_json_flags));
		json_object_put(o);
	} else {
		for (i = 0; i < d->n; i++) {
			printf("%-12s %-8s %s\n", d->c[i].name, d->c[i].ok ? "ok" : "problem",
			       d->c[i].detail);
			if (d->c[i].hint[0])
				printf("%-12s %-8s hint: %s\n", "", "", d->c[i].hint);
		}
		printf("%d check%s, %d problem%s\n", d->n, d->n == 1 ? "" : "s", bad,
		       bad == 1 ? "" : "s");
		if (pairs)
			bad += cc_pairs_report(pairs, NULL);
	}
	return bad ? 1 : 0;
}

/* An option's whole number in lo..hi: 0, or -EINVAL and the message. */
static int doctor_num(const struct cc_doctor_env *env, const char *name, const char *s,
		      uint64_t lo, uint64_t hi, unsigned int *out)
{
	uint64_t v;
	int ret = cmd_arg_ranged(env->prog, "doctor", name, s, lo, hi, &v);

	if (!ret)
		*out = (unsigned int)v;
	return ret;
}

int cc_doctor(const struct cc_doctor_env *env, int argc, char **argv)
{
	/* long only: coll-perf's -d and -r are the data type and the root */
	enum { O_RDMA_DEV = 256, O_ROOT, O_TABLE, O_HOSTS, O_RANK, O_PORT, O_WAIT };
	static const struct option lo[] = {
		{ "rdma-device", required_argument, NULL, O_RDMA_DEV },
		{ "root", required_argument, NULL, O_ROOT },
		{ "ranktable", required_argument, NULL, O_TABLE },
		{ "hosts", required_argument, NULL, O_HOSTS },
		{ "rank", required_argument, NULL, O_RANK },
		{ "port", required_argument, NULL, O_PORT },
		{ "timeout", required_argument, NULL, 'T' },
		{ "wait", required_argument, NULL, O_WAIT },
		{ NULL, 0, NULL, 0 },
	};
	struct cc_pairs_opts po = { .rank = getenv("KCOLL_RANK"), .port = CC_PAIRS_PORT,
				    .timeout_s = CC_PAIRS_TIMEOUT_S, .wait_s = CC_PAIRS_WAIT_S };
	struct doctor d = { .env = env, .root = "/sys" };
	struct cc_pairs pairs;
	char err[512];
	int opt, ret;

	optind = 0;	/* rescan: argv[0] is the command */
	/* -T as coll-perf's and calibrate's timeout; the rest long only */
	while ((opt = getopt_long(argc, argv, "T:", lo, NULL)) != -1) {
		switch (opt) {
		case O_RDMA_DEV: d.rdma_dev = optarg; break;
		case O_ROOT: d.root = optarg; break;
		case O_TABLE: po.ranktable = optarg; break;
		case O_HOSTS: po.hosts = optarg; break;
		case O_RANK: po.rank = optarg; break;
		case O_PORT:
			if (doctor_num(env, "port", optarg, 1, 65535, &po.port))
				return 2;
			break;
		case 'T':
			if (doctor_num(env, "timeout", optarg, 1, 3600, &po.timeout_s))
				return 2;
			break;
		case O_WAIT:
			if (doctor_num(env, "wait", optarg, 0, 86400, &po.wait_s))
				return 2;
			break;
		default:
			fprintf(stderr, "%s: usage: doctor [--rdma-device NAME] [--root DIR] "
				"[--ranktable FILE | --hosts LIST] [--rank R] [--port P] "
				"[-T SECONDS] [--wait SECONDS]\n", env->prog);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: doctor: unexpected '%s'\n", env->prog, argv[optind]);
		return 2;
	}
	/* bad input is refused before any check, and before the peers are waited for */
	if (po.ranktable || po.hosts) {
		ret = cc_pairs_setup(&pairs, &po, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "%s: doctor: %s\n", env->prog, err);
			return ret == -ENOMEM ? 1 : 2;
		}
	}
	if (!d.rdma_dev || !*d.rdma_dev)
		d.rdma_dev = getenv("KCOLL_DEVICE");
	if (d.rdma_dev && !*d.rdma_dev)
		d.rdma_dev = NULL;
	snprintf(d.ibroot, sizeof(d.ibroot), "%s/class/infiniband", d.root);
	check_module(&d);
	check_access(&d);
	check_rdma(&d);
	check_mtu(&d);
	check_address(&d);
	check_memlock(&d);
	check_listen_port(&d);
	check_secret(&d);
	check_persisted(&d);
	if (!po.ranktable && !po.hosts)
		return report(&d, NULL);
	cc_pairs_run(&pairs);
	ret = report(&d, &pairs);
	cc_pairs_free(&pairs);
	return ret;
}
