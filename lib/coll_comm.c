// SPDX-License-Identifier: LGPL-2.1-or-later
/* libcoll: device, communicators, memory registration. */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll_internal.h"

/* Where the administrator overrides the shipped rule (same file name). */
#define COLL_UDEV_RULE "/etc/udev/rules.d/60-kcoll.rules"

#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(COLL_FLOAT, KCOLL_FP32) && SAME(COLL_DOUBLE, KCOLL_FP64) &&
	       SAME(COLL_BFLOAT16, KCOLL_BF16) && SAME(COLL_DTYPE_COUNT, KCOLL_DTYPE_COUNT),
	       "coll_dtype_t must equal enum kcoll_dtype");
_Static_assert(SAME(COLL_AVG, KCOLL_AVG) && SAME(COLL_MAX, KCOLL_MAX) &&
	       SAME(COLL_REDOP_COUNT, KCOLL_REDOP_COUNT), "coll_redop_t must equal enum kcoll_redop");
_Static_assert(SAME(COLL_OP_BARRIER, KCOLL_OP_BARRIER) && SAME(COLL_OP_COUNT, KCOLL_OP_COUNT),
	       "coll_op_t must equal enum kcoll_op");

static int coll_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do
		ret = ioctl(fd, cmd, arg);
	while (ret < 0 && errno == EINTR && cmd != KCOLL_IOC_COMM_CREATE);
	return ret < 0 ? -errno : 0;
}

/* Whether this process has group @gid, as primary or supplementary group. */
static bool coll_in_group(gid_t gid)
{
	int i, n = getgroups(0, NULL);
	bool in = getegid() == gid;
	gid_t *groups;

	groups = !in && n > 0 ? calloc((size_t)n, sizeof(*groups)) : NULL;
	if (groups) {
		n = getgroups(n, groups);
		for (i = 0; i < n && !in; i++)
			in = groups[i] == gid;
		free(groups);
	}
	return in;
}

/*
 * -EACCES opening @device, explained from its mode and group: who may use
 * the node is set by a udev rule (udev/60-kcoll.rules: 0660, group kcoll),
 * so the fix is a group membership or the administrator's own rule.
 */
static int coll_dev_denied(const char *device)
{
	char gbuf[1024], ubuf[1024], gname[64], user[64];
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;
	unsigned int mode;
	struct stat st;

	if (stat(device, &st))
		return coll_seterr(-EACCES, "cannot open %s: %s", device, strerror(EACCES));
	mode = st.st_mode & 07777;
	getgrgid_r(st.st_gid, &gr, gbuf, sizeof(gbuf), &grp);
	if (grp)
		snprintf(gname, sizeof(gname), "%s", grp->gr_name);
	else
		snprintf(gname, sizeof(gname), "%u", (unsigned int)st.st_gid);
	getpwuid_r(geteuid(), &pw, ubuf, sizeof(ubuf), &pwp);
	snprintf(user, sizeof(user), "%s", pwp ? pwp->pw_name : "USER");
	if ((mode & 060) != 060)
		return coll_seterr(-EACCES, "cannot open %s: %s (mode %04o, group %s; only its owner "
				   "may open it, as when no udev rule applied): ask the "
				   "administrator to install kcoll's 60-kcoll.rules and create "
				   "group kcoll, or to set the mode with a rule in %s", device,
				   strerror(EACCES), mode, gname, COLL_UDEV_RULE);
	if (!coll_in_group(st.st_gid))
		return coll_seterr(-EACCES, "cannot open %s: %s (mode %04o, group %s; this user is "
				   "not in group %s): ask the administrator to add you to group "
				   "%s (usermod -aG %s %s, then log in again), or to change the "
				   "mode with a rule in %s", device, strerror(EACCES), mode,
				   gname, gname, gname, gname, user, COLL_UDEV_RULE);
	return coll_seterr(-EACCES, "cannot open %s: %s (mode %04o, group %s; this user is in "
			   "group %s, so an ACL or a security module refused it): ask the "
			   "administrator", device, strerror(EACCES), mode, gname, gname);
}

int coll_dev_open(const char *device, struct kcoll_info *info)
{
	struct stat st;
	int fd, ret;

	if (!device)
		device = COLL_DEVICE;
	fd = open(device, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ret = errno;
		if (ret == ENOENT) {
			if (stat("/sys/module/kcoll", &st) == 0)
				return coll_seterr(-ENODEV, "%s does not exist although the kcoll "
						   "module is loaded: check udev/devtmpfs (the "
						   "node is misc device 'kcoll')", device);
			return coll_seterr(-ENODEV, "%s does not exist: the kcoll module is not "
					   "loaded; run 'modprobe kcoll' (or 'insmod kcoll.ko')",
					   device);
		}
		if (ret == EACCES)
			return coll_dev_denied(device);
		return coll_seterr(-ret, "cannot open %s: %s", device, strerror(ret));
	}
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	ret = coll_ioctl(fd, KCOLL_IOC_INFO, info);
	if (ret) {
		close(fd);
		if (ret == -ENOTTY)
			return coll_seterr(-ENODEV, "%s is not a kcoll device (the info request "
					   "failed with ENOTTY): is the right module loaded?",
					   device);
		return coll_seterr(ret, "%s: info request failed: %s", device, strerror(-ret));
	}
	if (info->abi_version != KCOLL_ABI_VERSION) {
		close(fd);
		return coll_seterr(-EPROTONOSUPPORT, "%s: the kcoll module speaks ABI version "
				   "%u, this libcoll was built for version %u: install a "
				   "libcoll that matches the loaded module, or load the module "
				   "that matches libcoll", device, info->abi_version,
				   KCOLL_ABI_VERSION);
	}
	return fd;
}

int coll_module_info(const char *device, struct coll_module_info *out)
{
	struct kcoll_info info;
	int fd;

	if (!out)
		return coll_seterr(-EINVAL, "coll_module_info: info is NULL");
	fd = coll_dev_open(device, &info);
	if (fd < 0)
		return fd;
	close(fd);
	*out = (struct coll_module_info){
		.abi_version = info.abi_version, .version = info.version,
		.features = info.features, .ops = info.ops, .dtypes = info.dtypes,
		.redops = info.redops, .algos = info.algos, .max_ranks = info.max_ranks,
		.max_inflight = info.max_inflight, .max_reg_bytes = info.max_reg_bytes,
		.chunk_bytes = info.chunk_bytes, .slots = info.slots,
		.timeout_ms = info.timeout_ms, .connect_timeout_ms = info.connect_timeout_ms,
		.listen_port = info.listen_port,
	};
	return 0;
}

coll_comm_t *coll_comm_wrap(int fd, uint32_t rank, uint32_t nranks)
{
	coll_comm_t *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fd = fd;
	c->efd = -1;
	c->rank = rank;
	c->nranks = nranks;
	c->pending.next = c->pending.prev = &c->pending;
	return c;
}

/* The algorithm override: the option, else $KCOLL_ALGO, else $HCCL_ALGO. */
static const char *coll_algo_override(const struct coll_comm_opts *opts, const char **from)
{
	const char *s;

	if (opts && opts->algo) {
		*from = "coll_comm_opts.algo";
		return opts->algo;
	}
	s = getenv("KCOLL_ALGO");
	if (s) {
		*from = "KCOLL_ALGO";
		return s;
	}
	s = getenv("HCCL_ALGO");
	*from = "HCCL_ALGO";
	return s;
}

static int coll_rank_to_kcoll(const struct coll_rank_desc *d, uint32_t i, struct kcoll_rank *k)
{
	memset(k, 0, sizeof(*k));
	if (inet_pton(AF_INET, d->addr, k->addr) == 1)
		k->family = KCOLL_AF_INET;
	else if (inet_pton(AF_INET6, d->addr, k->addr) == 1)
		k->family = KCOLL_AF_INET6;
	else
		return coll_seterr(-EINVAL, "rank %u: address '%.64s' is neither IPv4 nor IPv6",
				   i, d->addr);
	if (d->port > 65535)
		return coll_seterr(-EINVAL, "rank %u: port %u out of range 0..65535", i, d->port);
	k->port = d->port;
	k->server_id = d->server_id;
	k->pod_id = d->pod_id;
	return 0;
}

/* The module's per-user bound, as text for a message ("?" when unreadable). */
static void coll_user_max(char *buf, size_t len)
{
	FILE *f = fopen(COLL_SYSFS "user_max_bytes", "r");
	unsigned long long v;

	if (f && fscanf(f, "%llu", &v) == 1)
		snprintf(buf, len, "%llu", v);
	else
		snprintf(buf, len, "?");
	if (f)
		fclose(f);
}

/*
 * ENOMEM from COMM_CREATE: almost always the receive slots, counted
 * against user_max_bytes (or the memory cgroup's limit).
 */
static int coll_create_enomem(int ret, uint32_t rank, uint32_t nranks,
			      const struct kcoll_comm_create *cc, const struct kcoll_info *info)
{
	unsigned long long slots = cc->slots ? cc->slots : info->slots;
	unsigned long long chunk = cc->chunk_bytes ? cc->chunk_bytes : info->chunk_bytes;
	double mib = (double)(nranks - 1) * 2 * (double)slots * (double)chunk / (1 << 20);
	char limit[32];

	coll_user_max(limit, sizeof(limit));
	return coll_seterr(ret, "creating the communicator (rank %u of %u) failed: out of kernel "
			   "memory: its receive slots take %.1f MiB ((ranks - 1) x 2 x %llu slots "
			   "x %llu bytes), over what one user's communicators may take together "
			   "on this node (" COLL_SYSFS "user_max_bytes = %s), or over the memory "
			   "cgroup's limit; use fewer slots or smaller chunks, or ask the "
			   "administrator to raise user_max_bytes", rank, nranks, mib, slots, chunk,
			   limit);
}

/* The caller's options as this libcoll knows them, missing fields zero. */
void coll_opts_copy(const struct coll_comm_opts *opts, struct coll_comm_opts *o)
{
	size_t n = sizeof(*o);

	memset(o, 0, sizeof(*o));
	if (!opts)
		return;
	if (!opts->size)
		n = offsetof(struct coll_comm_opts, secret);
	else if (opts->size < n)
		n = opts->size;
	memcpy(o, opts, n);
}

static bool coll_ranks_port0(const struct coll_rank_desc *ranks, uint32_t nranks)
{
	uint32_t i;

	for (i = 0; i < nranks; i++)
		if (!ranks[i].port)
			return true;
	return false;
}

/* What a failed create means, for the thread's message. */
static void coll_create_error(int ret, const struct coll_rank_desc *ranks, uint32_t rank,
			      uint32_t nranks, const char *algo, const char *from,
			      const char *secret_from)
{
	/*
	 * The module answers a bad string with -EINVAL only (its log line
	 * quotes nothing the user wrote): collctl check-algo parses the same
	 * way and shows the string with a caret under the fault.
	 */
	if (ret == -EINVAL && algo)
		coll_seterr(ret, "creating the communicator (rank %u of %u) failed: %s; "
			    "%s is '%s', which the module may have refused: run "
			    "collctl check-algo '%s' to see where it is wrong (the kernel "
			    "log says why)", rank, nranks, coll_strerror(ret), from, algo, algo);
	else if (ret == -EADDRNOTAVAIL || ret == -EACCES || ret == -EADDRINUSE)
		coll_seterr(ret, "creating the communicator (rank %u of %u) failed: "
			    "cannot listen on %.64s port %u%s: %s", rank, nranks,
			    ranks[rank].addr, ranks[rank].port,
			    ranks[rank].port ? "" : " (the module's listen_port)",
			    coll_strerror(ret));
	else if (ret == -EEXIST)
		coll_seterr(ret, "creating the communicator (rank %u of %u) failed: a "
			    "communicator with the same id already has rank %u on this node "
			    "(the same rank table twice, or an id used twice): %s", rank, nranks,
			    rank, coll_strerror(ret));
	else if (ret == -ESTALE)
		coll_seterr(ret, "creating the communicator (rank %u of %u) failed: a peer "
			    "has already destroyed its communicator of this id: %s", rank,
			    nranks, coll_strerror(ret));
	else if (ret == -EKEYREJECTED)
		coll_seterr(ret, "creating the communicator (rank %u of %u) failed: a peer at "
			    "the rank table's address could not prove the communicator's secret "
			    "(%s here): give every rank the same secret", rank, nranks,
			    secret_from ? secret_from : "none");
	else if (ret == -ETIMEDOUT && secret_from)
		coll_seterr(ret, "creating the communicator (rank %u of %u) failed: %s; peers "
			    "without the same secret (%s here) are refused, see 'collctl show'",
			    rank, nranks, coll_strerror(ret), secret_from);
	else
		coll_seterr(ret, "creating the communicator (rank %u of %u) failed: %s",
			    rank, nranks, coll_strerror(ret));
}

int coll_comm_init_ranks(const struct coll_rank_desc *ranks, uint32_t nranks, uint32_t rank,
			 const struct coll_comm_opts *opts_in, coll_comm_t **out)
{
	return coll_comm_init_child(ranks, nranks, rank, opts_in, NULL, out);
}

int coll_comm_init_child(const struct coll_rank_desc *ranks, uint32_t nranks, uint32_t rank,
			 const struct coll_comm_opts *opts_in, const struct coll_parent *parent,
			 coll_comm_t **out)
{
	uint8_t secret[KCOLL_SECRET_MAX + 1];
	const char *algo, *from, *secret_from;
	const struct coll_comm_opts *opts;
	struct kcoll_comm_create cc;
	struct coll_comm_opts o;
	struct kcoll_info info;
	struct kcoll_rank *kr;
	size_t secret_len;
	coll_comm_t *c;
	uint32_t i;
	int fd, efd, ret;

	coll_clearerr();
	if (!out)
		return coll_seterr(-EINVAL, "coll_comm_init: comm pointer is NULL");
	*out = NULL;
	if (!ranks || !nranks)
		return coll_seterr(-EINVAL, "coll_comm_init: no ranks given");
	if (rank >= nranks)
		return coll_seterr(-EINVAL, "coll_comm_init: rank %u out of range for %u ranks",
				   rank, nranks);
	if (opts_in && opts_in->size && opts_in->size < sizeof(uint32_t))
		return coll_seterr(-EINVAL, "coll_comm_init: bad coll_comm_opts.size %u",
				   opts_in->size);
	coll_opts_copy(opts_in, &o);
	opts = opts_in ? &o : NULL;
	algo = coll_algo_override(opts, &from);
	if (algo && strlen(algo) >= KCOLL_ALGO_STR_MAX)
		return coll_seterr(-EINVAL, "%s is longer than %d characters", from,
				   KCOLL_ALGO_STR_MAX - 1);
	ret = coll_secret_get(o.secret, o.secret_len, secret, &secret_len, &secret_from);
	if (ret)
		goto out_secret;
	kr = calloc(nranks, sizeof(*kr));
	if (!kr) {
		ret = coll_seterr(-ENOMEM, "coll_comm_init: out of memory for %u ranks", nranks);
		goto out_secret;
	}
	for (i = 0; i < nranks; i++) {
		ret = coll_rank_to_kcoll(&ranks[i], i, &kr[i]);
		if (ret)
			goto out_free;
	}
	fd = coll_dev_open(opts ? opts->device : NULL, &info);
	if (fd < 0) {
		ret = fd;
		goto out_free;
	}
	if (nranks > info.max_ranks) {
		ret = coll_seterr(-EINVAL, "%u ranks: the module allows at most %u", nranks,
				  info.max_ranks);
		goto out_close;
	}
	if ((o.unique_id || coll_ranks_port0(ranks, nranks)) &&
	    !(info.features & KCOLL_FEAT_UID)) {
		ret = coll_seterr(-EOPNOTSUPP, "the loaded kcoll module needs a port per "
				  "communicator in the rank table and takes no unique id: load "
				  "a module with KCOLL_FEAT_UID");
		goto out_close;
	}
	if (secret_len && !(info.features & KCOLL_FEAT_AUTH)) {
		ret = coll_seterr(-EOPNOTSUPP, "%s is set but the loaded kcoll module cannot "
				  "authenticate peers: load a module with KCOLL_FEAT_AUTH",
				  secret_from);
		goto out_close;
	}
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0) {
		ret = coll_seterr(-errno, "eventfd: %s", strerror(errno));
		goto out_close;
	}
	c = coll_comm_wrap(fd, rank, nranks);
	if (!c) {
		ret = coll_seterr(-ENOMEM, "coll_comm_init: out of memory");
		goto out_efd;
	}
	c->efd = efd;
	memset(&cc, 0, sizeof(cc));
	cc.size = sizeof(cc);
	cc.rank = rank;
	cc.nranks = nranks;
	cc.ranks = (uintptr_t)kr;
	cc.rank_size = sizeof(*kr);
	cc.eventfd = (info.features & KCOLL_FEAT_EVENTFD) ? efd : -1;
	cc.algo = algo && *algo ? (uintptr_t)algo : 0;
	if (opts) {
		cc.timeout_ms = opts->timeout_ms;
		cc.connect_timeout_ms = opts->connect_timeout_ms;
		cc.chunk_bytes = opts->chunk_bytes;
		cc.slots = opts->slots;
	}
	if (o.unique_id)
		memcpy(cc.uid, o.unique_id, sizeof(cc.uid));
	if (secret_len) {
		cc.secret = (uintptr_t)secret;
		cc.secret_len = (uint32_t)secret_len;
	}
	/* An older module connects anew: nothing to take over. */
	if (parent && (info.features & KCOLL_FEAT_REUSE)) {
		cc.flags |= KCOLL_CREATE_F_PARENT;
		cc.parent_fd = parent->fd;
		cc.parent_ranks = (uintptr_t)parent->ranks;
	}
	ret = coll_ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc);
	if (ret) {
		if (ret == -ENOMEM)
			coll_create_enomem(ret, rank, nranks, &cc, &info);
		else
			coll_create_error(ret, ranks, rank, nranks, cc.algo ? algo : NULL, from,
					  secret_len ? secret_from : NULL);
		free(c);
		goto out_efd;
	}
	c->comm_id = cc.comm_id;
	memcpy(c->secret, secret, secret_len);
	c->secret_len = (uint32_t)secret_len;
	ret = coll_comm_keep(c, ranks, opts);
	if (ret) {
		coll_comm_destroy(c);
		goto out_free;
	}
	free(kr);
	explicit_bzero(secret, sizeof(secret));
	*out = c;
	return 0;

out_efd:
	close(efd);
out_close:
	close(fd);
out_free:
	free(kr);
out_secret:
	explicit_bzero(secret, sizeof(secret));
	return ret;
}

int coll_comm_init_ranktable_opts(const char *path, uint32_t rank,
				  const struct coll_comm_opts *opts, coll_comm_t **comm)
{
	struct coll_ranktable *rt;
	int ret;

	coll_clearerr();
	if (!comm)
		return coll_seterr(-EINVAL, "coll_comm_init_ranktable: comm pointer is NULL");
	*comm = NULL;
	if (!path)
		path = getenv("KCOLL_RANKTABLE");
	if (!path)
		return coll_seterr(-EINVAL, "no rank table: give a path or set KCOLL_RANKTABLE");
	ret = coll_ranktable_load(path, &rt);
	if (ret)
		return ret;
	if (rank >= rt->nranks) {
		ret = coll_seterr(-EINVAL, "%s: rank %u out of range: the rank table has %u "
				  "ranks", path, rank, rt->nranks);
		coll_ranktable_free(rt);
		return ret;
	}
	ret = coll_comm_init_ranks(rt->ranks, rt->nranks, rank, opts, comm);
	coll_ranktable_free(rt);
	return ret;
}

int coll_comm_init_ranktable(const char *path, uint32_t rank, coll_comm_t **comm)
{
	return coll_comm_init_ranktable_opts(path, rank, NULL, comm);
}

void coll_comm_destroy(coll_comm_t *c)
{
	struct coll_request *r, *n;
	struct coll_mr *m, *mn;

	if (!c)
		return;
	/* close() ends the module's communicator and every registration. */
	if (c->fd >= 0)
		close(c->fd);
	if (c->efd >= 0)
		close(c->efd);
	for (r = c->pending.next; r != &c->pending; r = n) {
		n = r->next;
		free(r);
	}
	for (m = c->mrs; m; m = mn) {
		mn = m->next;
		free(m);
	}
	free(c->ranks);
	free(c->hosts);
	free(c->pods);
	free(c->groups);
	free((char *)c->opts.algo);
	free((char *)c->opts.device);
	explicit_bzero(c->secret, sizeof(c->secret));
	free(c);
}

int coll_comm_keep(coll_comm_t *c, const struct coll_rank_desc *ranks,
		   const struct coll_comm_opts *opts)
{
	uint32_t i;

	c->ranks = calloc(c->nranks, sizeof(*c->ranks));
	c->hosts = calloc(c->nranks, sizeof(*c->hosts));
	c->pods = calloc(c->nranks, sizeof(*c->pods));
	if (opts) {
		c->opts = *opts;
		c->opts.secret = NULL;
		c->opts.secret_len = 0;
		/* The caller's memory; a split draws its own id. */
		c->opts.unique_id = NULL;
		c->opts.algo = opts->algo ? strdup(opts->algo) : NULL;
		c->opts.device = opts->device ? strdup(opts->device) : NULL;
	}
	c->opts.size = sizeof(c->opts);
	if (!c->ranks || !c->hosts || !c->pods || (opts && opts->algo && !c->opts.algo) ||
	    (opts && opts->device && !c->opts.device))
		return coll_seterr(-ENOMEM, "coll_comm_init: out of memory");
	memcpy(c->ranks, ranks, c->nranks * sizeof(*ranks));
	for (i = 0; i < c->nranks; i++) {
		c->hosts[i] = ((uint64_t)ranks[i].pod_id << 32) | ranks[i].server_id;
		c->pods[i] = ranks[i].pod_id;
	}
	return 0;
}

int coll_comm_abort(coll_comm_t *c)
{
	struct kcoll_abort a = { .size = sizeof(a) };

	if (!c)
		return coll_seterr(-EINVAL, "coll_comm_abort: comm is NULL");
	return coll_ioctl(c->fd, KCOLL_IOC_ABORT, &a);
}

int coll_comm_rank(const coll_comm_t *c)
{
	return c ? (int)c->rank : -EINVAL;
}

int coll_comm_size(const coll_comm_t *c)
{
	return c ? (int)c->nranks : -EINVAL;
}

uint64_t coll_comm_id(const coll_comm_t *c)
{
	return c ? c->comm_id : 0;
}

int coll_comm_event_fd(const coll_comm_t *c)
{
	return c ? c->efd : -EINVAL;
}

int coll_mem_register(coll_comm_t *c, void *addr, size_t len, coll_mr_t **out)
{
	struct kcoll_mem_reg reg;
	struct coll_mr *m;
	int ret;

	if (!out)
		return coll_seterr(-EINVAL, "coll_mem_register: mr pointer is NULL");
	*out = NULL;
	if (!c)
		return coll_seterr(-EINVAL, "coll_mem_register: comm is NULL");
	if (!addr || !len)
		return coll_seterr(-EINVAL, "coll_mem_register: empty buffer (addr %p, len %zu)",
				   addr, len);
	m = calloc(1, sizeof(*m));
	if (!m)
		return coll_seterr(-ENOMEM, "coll_mem_register: out of memory");
	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.addr = (uintptr_t)addr;
	reg.len = len;
	ret = coll_ioctl(c->fd, KCOLL_IOC_MEM_REG, &reg);
	if (ret) {
		free(m);
		return coll_seterr(ret, "registering %zu bytes at %p failed: %s", len, addr,
				   coll_strerror(ret));
	}
	m->addr = (uintptr_t)addr;
	m->len = len;
	m->handle = reg.handle;
	m->next = c->mrs;
	c->mrs = m;
	*out = m;
	return 0;
}

int coll_mem_deregister(coll_comm_t *c, coll_mr_t *mr)
{
	struct kcoll_mem_dereg d;
	struct coll_mr **pp;
	int ret;

	if (!c || !mr)
		return coll_seterr(-EINVAL, "coll_mem_deregister: comm or mr is NULL");
	for (pp = &c->mrs; *pp && *pp != mr; pp = &(*pp)->next)
		;
	if (!*pp)
		return coll_seterr(-ENOENT, "coll_mem_deregister: not a registration of this "
				   "communicator");
	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.handle = mr->handle;
	ret = coll_ioctl(c->fd, KCOLL_IOC_MEM_DEREG, &d);
	if (ret)
		return coll_seterr(ret, "deregistration failed: %s", coll_strerror(ret));
	*pp = mr->next;
	free(mr);
	return 0;
}
