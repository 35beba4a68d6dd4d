// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcoll: communicators without a rank table.  coll_comm_init_oob()
 * builds the rank table from the caller's own allgather (MPI, the c10d
 * Store, PMIx: whatever the framework already has, as UCC's ucc_oob_coll),
 * coll_comm_split() and coll_comm_dup() from a parent communicator.
 *
 * Every rank contributes one fixed record (struct coll_oob_rec) to one
 * allgather: its address, a hash of its host and super-node identity, and
 * a fresh random id and secret of which only rank 0's (in a split: the new
 * rank 0's) are used.  Every rank then computes the same rank table from
 * the same records, so nothing more has to be agreed.  A rank that fails
 * locally (no RDMA address) still takes part, with its errno in the
 * record, so that every rank fails the same way instead of waiting for it.
 * After the module's create, a second allgather compares the outcomes, so
 * that every member of a new communicator returns the same error.
 *
 * Ports and names.  Every rank's port is 0 in the rank table: the
 * module's one listener per node (its listen_port) serves every
 * communicator, which the module tells apart by the drawn 128-bit id
 * (struct coll_comm_opts.unique_id); two communicators alive at once never
 * collide, however many a process or a node has.  The drawn secret proves
 * membership; the id only names.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <unistd.h>

#include "coll_internal.h"

#define COLL_SYSFS_IB	"/sys/class/infiniband"

uint64_t coll_oob_hash(const void *p, size_t len, uint64_t h)
{
	const unsigned char *b = p;
	size_t i;

	if (!h)
		h = 0xcbf29ce484222325ull;	/* FNV-1a 64 */
	for (i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

void coll_oob_table_free(struct coll_oob_table *t)
{
	free(t->ranks);
	free(t->hosts);
	free(t->pods);
	explicit_bzero(t, sizeof(*t));
}

int coll_oob_table_alloc(struct coll_oob_table *t, uint32_t n)
{
	memset(t, 0, sizeof(*t));
	t->nranks = n;
	t->ranks = calloc(n, sizeof(*t->ranks));
	t->hosts = calloc(n, sizeof(*t->hosts));
	t->pods = calloc(n, sizeof(*t->pods));
	if (t->ranks && t->hosts && t->pods)
		return 0;
	coll_oob_table_free(t);
	return coll_seterr(-ENOMEM, "coll_comm_init_oob: out of memory for %u ranks", n);
}

/*
 * Number the servers (hosts) and super-nodes (pods) in rank order.  The
 * module wants the ranks of a server contiguous, and the servers of a
 * super-node: when they are not (a round-robin placement), every rank is
 * its own server, or every server in one super-node: slower algorithms,
 * the same results.
 */
static void coll_oob_number(struct coll_oob_table *t)
{
	uint32_t n = t->nranks, i, j, next;
	bool flat = false;

	for (i = 1; i < n && !flat; i++)
		if (t->hosts[i] != t->hosts[i - 1])
			for (j = 0; j + 1 < i && !flat; j++)
				flat = t->hosts[j] == t->hosts[i];
	for (i = 0, next = 0; i < n; i++) {
		if (flat || !i || t->hosts[i] != t->hosts[i - 1])
			t->ranks[i].server_id = next++;
		else
			t->ranks[i].server_id = t->ranks[i - 1].server_id;
	}
	/* A server's super-node is that of its first rank. */
	for (i = 1; i < n; i++)
		if (t->ranks[i].server_id == t->ranks[i - 1].server_id)
			t->pods[i] = t->pods[i - 1];
	flat = false;
	for (i = 1; i < n && !flat; i++)
		if (t->pods[i] != t->pods[i - 1])
			for (j = 0; j + 1 < i && !flat; j++)
				flat = t->pods[j] == t->pods[i];
	for (i = 0, next = 0; i < n; i++) {
		if (flat)
			t->ranks[i].pod_id = 0;
		else if (!i || t->pods[i] != t->pods[i - 1])
			t->ranks[i].pod_id = next++;
		else
			t->ranks[i].pod_id = t->ranks[i - 1].pod_id;
	}
}

void coll_oob_layout(struct coll_oob_table *t)
{
	uint32_t i;

	coll_oob_number(t);
	/* The module's port: its listener tells communicators apart by id. */
	for (i = 0; i < t->nranks; i++)
		t->ranks[i].port = 0;
}

/* ----------------------------------------------------- local address */

static int coll_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int coll_numeric_filter(const struct dirent *d)
{
	return d->d_name[0] >= '0' && d->d_name[0] <= '9';
}

static int coll_numeric_sort(const struct dirent **a, const struct dirent **b)
{
	return atoi((*a)->d_name) - atoi((*b)->d_name);
}

static int coll_visible_filter(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/*
 * The best address of one port: an IPv4-mapped RoCE v2 GID, else a
 * global IPv6 one, bound to a net device.  0 when found.
 */
static int coll_port_addr(const char *portdir, char *addr, size_t len)
{
	char path[1024], line[128], best6[INET6_ADDRSTRLEN] = "";
	struct dirent **ent;
	int n, i, found = -1;

	snprintf(path, sizeof(path), "%s/gids", portdir);
	n = scandir(path, &ent, coll_numeric_filter, coll_numeric_sort);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		struct in6_addr g;
		char *p, *q, hex[40];

		if (found == 0)
			break;
		snprintf(path, sizeof(path), "%s/gid_attrs/ndevs/%s", portdir, ent[i]->d_name);
		if (coll_read_line(path, line, sizeof(line)) || !line[0])
			continue;
		snprintf(path, sizeof(path), "%s/gid_attrs/types/%s", portdir, ent[i]->d_name);
		if (coll_read_line(path, line, sizeof(line)) || !strstr(line, "v2"))
			continue;
		snprintf(path, sizeof(path), "%s/gids/%s", portdir, ent[i]->d_name);
		if (coll_read_line(path, line, sizeof(line)))
			continue;
		/* "fe80:0000:...": the colons are where inet_pton wants them. */
		for (p = line, q = hex; *p && q < hex + sizeof(hex) - 1; p++)
			*q++ = *p;
		*q = '\0';
		if (inet_pton(AF_INET6, hex, &g) != 1 || IN6_IS_ADDR_UNSPECIFIED(&g) ||
		    IN6_IS_ADDR_LINKLOCAL(&g))
			continue;
		if (IN6_IS_ADDR_V4MAPPED(&g)) {
			if (inet_ntop(AF_INET, &g.s6_addr[12], addr, (socklen_t)len))
				found = 0;
		} else if (!best6[0]) {
			inet_ntop(AF_INET6, &g, best6, sizeof(best6));
		}
	}
	for (i = 0; i < n; i++)
		free(ent[i]);
	free(ent);
	if (found && best6[0] && strlen(best6) < len) {
		strcpy(addr, best6);
		found = 0;
	}
	return found;
}

/* The first active Ethernet port of @dev with an address. */
static int coll_dev_addr(const char *root, const char *dev, char *addr, size_t len)
{
	char path[1024], line[64];
	struct dirent **ent;
	int n, i, ret = -1;

	snprintf(path, sizeof(path), "%s/%s/ports", root, dev);
	n = scandir(path, &ent, coll_numeric_filter, coll_numeric_sort);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		char portdir[600];

		if (!ret)
			break;
		snprintf(portdir, sizeof(portdir), "%.300s/%.64s/ports/%.64s", root, dev,
			 ent[i]->d_name);
		snprintf(path, sizeof(path), "%s/state", portdir);
		if (coll_read_line(path, line, sizeof(line)) || !strstr(line, "ACTIVE"))
			continue;
		snprintf(path, sizeof(path), "%s/link_layer", portdir);
		if (coll_read_line(path, line, sizeof(line)) || strcmp(line, "Ethernet"))
			continue;
		ret = coll_port_addr(portdir, addr, len);
	}
	for (i = 0; i < n; i++)
		free(ent[i]);
	free(ent);
	return ret;
}

int coll_local_addr_at(const char *root, const char *device, char *addr, size_t len)
{
	struct dirent **ent;
	int n, i, ret = -1;

	if (!addr || len < INET6_ADDRSTRLEN)
		return coll_seterr(-EINVAL, "coll_local_addr: need room for %d bytes",
				   INET6_ADDRSTRLEN);
	addr[0] = '\0';
	if (!device || !*device)
		device = getenv("KCOLL_DEVICE");
	if (device && *device) {
		if (strchr(device, '/') || !strcmp(device, "..") || !strcmp(device, "."))
			return coll_seterr(-EINVAL, "KCOLL_DEVICE '%.64s' is not an RDMA device "
					   "name", device);
		if (!coll_dev_addr(root, device, addr, len))
			return 0;
		return coll_seterr(-ENODEV, "RDMA device %.64s (KCOLL_DEVICE) has no active "
				   "Ethernet port with a RoCE v2 IP address in %s (see 'rdma link' "
				   "and 'ip addr')", device, root);
	}
	n = scandir(root, &ent, coll_visible_filter, alphasort);
	if (n < 0)
		return coll_seterr(-ENODEV, "no RDMA device: %s: %s (load rdma_rxe and add a "
				   "link: rdma link add rxe0 type rxe netdev eth0)", root,
				   strerror(errno));
	for (i = 0; i < n; i++) {
		if (ret)
			ret = coll_dev_addr(root, ent[i]->d_name, addr, len);
		free(ent[i]);
	}
	free(ent);
	if (!ret)
		return 0;
	return coll_seterr(-ENODEV, "no RDMA device in %s has an active Ethernet (RoCE) port "
			   "with an IP address: set KCOLL_DEVICE, or give the address "
			   "(coll_oob_opts.addr, KCOLL_ADDR)", root);
}

int coll_local_addr(const char *device, char *addr, size_t len)
{
	coll_clearerr();
	return coll_local_addr_at(COLL_SYSFS_IB, device, addr, len);
}

/* ------------------------------------------------------- identities */

/* The host identity: option, $KCOLL_SERVER_ID, boot id, machine id, host name. */
static uint64_t coll_host_id(const char *server)
{
	char buf[256];

	if (!server || !*server)
		server = getenv("KCOLL_SERVER_ID");
	if (server && *server)
		return coll_oob_hash(server, strlen(server), 0);
	if (!coll_read_line("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) && buf[0])
		return coll_oob_hash(buf, strlen(buf), 0);
	if (!coll_read_line("/etc/machine-id", buf, sizeof(buf)) && buf[0])
		return coll_oob_hash(buf, strlen(buf), 0);
	if (gethostname(buf, sizeof(buf)))
		buf[0] = '\0';
	buf[sizeof(buf) - 1] = '\0';
	return coll_oob_hash(buf, strlen(buf), 0);
}

static uint64_t coll_pod_id(const char *pod)
{
	if (!pod || !*pod)
		pod = getenv("KCOLL_POD_ID");
	return pod && *pod ? coll_oob_hash(pod, strlen(pod), 0) : 0;
}

static int coll_draw(void *p, size_t len)
{
	uint8_t *b = p;
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = getrandom(b + got, len - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return coll_seterr(-errno, "getrandom: %s", strerror(errno));
		got += (size_t)n;
	}
	return 0;
}

/* ----------------------------------------------------------- exchange */

static int coll_oob_call(const struct coll_oob *oob, const void *s, void *r, size_t len)
{
	int ret = oob->allgather(s, r, len, oob->ctx);

	if (ret)
		return coll_seterr(-EIO, "the out-of-band allgather failed (it returned %d)", ret);
	return 0;
}

/* The records in @r are kcoll's, of @kind, from the ranks they should be. */
static int coll_oob_check(const struct coll_oob_rec *r, uint32_t n, uint16_t kind)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (r[i].magic != COLL_OOB_MAGIC || r[i].version != COLL_OOB_VERSION ||
		    r[i].kind != kind || r[i].rank != i || r[i].size != n)
			return coll_seterr(-EPROTO, "out-of-band exchange: block %u of %u is not "
					   "rank %u's bootstrap record (rank %u of %u, kind %u): the "
					   "allgather must put rank i's bytes at offset i * len, "
					   "and every rank must call the same function", i, n, i,
					   r[i].rank, r[i].size, r[i].kind);
	return 0;
}

static void coll_oob_rec_init(struct coll_oob_rec *r, uint16_t kind, uint32_t rank,
			      uint32_t size)
{
	memset(r, 0, sizeof(*r));
	r->magic = COLL_OOB_MAGIC;
	r->version = COLL_OOB_VERSION;
	r->kind = kind;
	r->rank = rank;
	r->size = size;
}

/* The first local failure among @r (members of @color, or all if @color < 0). */
static int coll_oob_first_err(const struct coll_oob_rec *r, uint32_t n, uint32_t *who)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (r[i].err) {
			*who = i;
			return r[i].err < 0 ? r[i].err : -EIO;
		}
	return 0;
}

int coll_oob_exchange(const struct coll_oob *oob, const struct coll_oob_opts *opts,
		      struct coll_oob_table *t)
{
	struct coll_oob_rec me, *all;
	const char *addr = opts ? opts->addr : NULL;
	uint32_t n = oob->size, i, who;
	char err_here[256] = "";
	int ret;

	coll_oob_rec_init(&me, COLL_OOB_INIT, oob->rank, n);
	if (!addr || !*addr)
		addr = getenv("KCOLL_ADDR");
	if (addr && *addr) {
		if (strlen(addr) >= sizeof(me.addr))
			me.err = coll_seterr(-EINVAL, "address '%.64s...' is too long", addr);
		else
			strcpy(me.addr, addr);
	} else {
		me.err = coll_local_addr(NULL, me.addr, sizeof(me.addr));
	}
	if (!me.err && oob->rank == 0) {
		me.err = coll_draw(me.uid, sizeof(me.uid));
		if (!me.err)
			me.err = coll_draw(me.secret, sizeof(me.secret));
	}
	me.host = coll_host_id(opts ? opts->server : NULL);
	me.pod = coll_pod_id(opts ? opts->pod : NULL);
	if (me.err)
		snprintf(err_here, sizeof(err_here), "%s", coll_last_error());
	all = calloc(n, sizeof(*all));
	if (!all)
		me.err = coll_seterr(-ENOMEM, "coll_comm_init_oob: out of memory");
	/* Without the buffer we cannot take part: the peers' allgather fails too. */
	ret = all ? coll_oob_call(oob, &me, all, sizeof(me)) : me.err;
	explicit_bzero(&me, sizeof(me));
	if (ret)
		goto out;
	ret = coll_oob_check(all, n, COLL_OOB_INIT);
	if (ret)
		goto out;
	ret = coll_oob_first_err(all, n, &who);
	if (ret) {
		if (who == oob->rank && err_here[0])
			coll_seterr(ret, "%s", err_here);
		else
			coll_seterr(ret, "coll_comm_init_oob: rank %u cannot take part: %s", who,
				    coll_strerror(ret));
		goto out;
	}
	ret = coll_oob_table_alloc(t, n);
	if (ret)
		goto out;
	t->rank = oob->rank;
	memcpy(t->uid, all[0].uid, sizeof(t->uid));
	memcpy(t->secret, all[0].secret, sizeof(t->secret));
	for (i = 0; i < n; i++) {
		memcpy(t->ranks[i].addr, all[i].addr, sizeof(t->ranks[i].addr));
		t->ranks[i].addr[sizeof(t->ranks[i].addr) - 1] = '\0';
		t->hosts[i] = all[i].host;
		t->pods[i] = all[i].pod;
	}
	coll_oob_layout(t);
out:
	if (all)
		explicit_bzero(all, n * sizeof(*all));
	free(all);
	return ret;
}

/* Split members first by key, then by parent rank. */
struct coll_member {
	int32_t key;
	uint32_t rank;
};

static int coll_member_cmp(const void *a, const void *b)
{
	const struct coll_member *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int coll_split_exchange(const struct coll_oob *oob, const struct coll_rank_desc *ranks,
			const uint64_t *hosts, const uint64_t *pods, int color, int key,
			struct coll_oob_table *t)
{
	uint32_t n = oob->size, i, m = 0;
	struct coll_member *mem = NULL;
	struct coll_oob_rec me, *all;
	int ret;

	memset(t, 0, sizeof(*t));
	coll_oob_rec_init(&me, COLL_OOB_SPLIT, oob->rank, n);
	me.color = color < 0 ? -1 : color;
	me.key = key;
	if (color >= 0) {
		me.err = coll_draw(me.uid, sizeof(me.uid));
		if (!me.err)
			me.err = coll_draw(me.secret, sizeof(me.secret));
	}
	all = calloc(n, sizeof(*all));
	if (!all)
		me.err = coll_seterr(-ENOMEM, "coll_comm_split: out of memory");
	ret = all ? coll_oob_call(oob, &me, all, sizeof(me)) : me.err;
	explicit_bzero(&me, sizeof(me));
	if (ret)
		goto out;
	ret = coll_oob_check(all, n, COLL_OOB_SPLIT);
	if (ret)
		goto out;
	/* Any failure fails the split everywhere: everybody saw the same records. */
	ret = coll_oob_first_err(all, n, &i);
	if (ret) {
		coll_seterr(ret, "coll_comm_split: rank %u cannot take part: %s", i,
			    coll_strerror(ret));
		goto out;
	}
	if (color < 0)
		goto out;
	mem = calloc(n, sizeof(*mem));
	if (!mem) {
		ret = coll_seterr(-ENOMEM, "coll_comm_split: out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		if (all[i].color == color)
			mem[m++] = (struct coll_member){ .key = all[i].key, .rank = i };
	qsort(mem, m, sizeof(*mem), coll_member_cmp);
	ret = coll_oob_table_alloc(t, m);
	if (ret)
		goto out;
	memcpy(t->uid, all[mem[0].rank].uid, sizeof(t->uid));
	memcpy(t->secret, all[mem[0].rank].secret, sizeof(t->secret));
	for (i = 0; i < m; i++) {
		t->ranks[i] = ranks[mem[i].rank];
		t->hosts[i] = hosts[mem[i].rank];
		t->pods[i] = pods[mem[i].rank];
		if (mem[i].rank == oob->rank)
			t->rank = i;
	}
	coll_oob_layout(t);
out:
	free(mem);
	if (all)
		explicit_bzero(all, n * sizeof(*all));
	free(all);
	return ret;
}

/* ----------------------------------------------------------- creation */

/* The secret of a new communicator: the caller's, the environment's, else drawn. */
static void coll_oob_comm_opts(const struct coll_comm_opts *in, const struct coll_oob_table *t,
			       struct coll_comm_opts *o)
{
	const char *file = getenv("KCOLL_SECRET_FILE"), *env = getenv("KCOLL_SECRET");
	struct coll_module_info info;
	size_t n = sizeof(*o);

	memset(o, 0, sizeof(*o));
	if (in) {
		if (!in->size)
			n = offsetof(struct coll_comm_opts, secret);
		else if (in->size < n)
			n = in->size;
		memcpy(o, in, n);
	}
	o->size = sizeof(*o);
	o->unique_id = t->uid;
	if (o->secret || (file && *file) || (env && *env))
		return;
	/* A module that cannot authenticate gets none (its create says so if it matters). */
	if (coll_module_info(o->device, &info) || !(info.features & KCOLL_FEAT_AUTH))
		return;
	o->secret = t->secret;
	o->secret_len = sizeof(t->secret);
}

/*
 * Create the communicator of @t (nranks 0: not a member, nothing to
 * create) and agree with every rank of @oob on the outcome: every member
 * of one new communicator returns the same errno.
 */
static int coll_oob_create(const struct coll_oob *oob, struct coll_oob_table *t,
			   int32_t color, const struct coll_comm_opts *copts, coll_comm_t **out)
{
	uint32_t n = oob->size, i, who = 0;
	struct coll_oob_rec me, *all;
	bool member = t->nranks > 0;
	struct coll_comm_opts o;
	char err_here[512] = "";
	coll_comm_t *c = NULL;
	int ret = 0, mine = 0, local = 0;

	*out = NULL;
	all = calloc(n, sizeof(*all));
	if (!all)
		return coll_seterr(-ENOMEM, "coll_comm_init_oob: out of memory");
	if (member) {
		coll_oob_comm_opts(copts, t, &o);
		local = coll_comm_init_ranks(t->ranks, t->nranks, t->rank, &o, &c);
		if (local)
			snprintf(err_here, sizeof(err_here), "%s", coll_last_error());
	}
	coll_oob_rec_init(&me, COLL_OOB_RESULT, oob->rank, n);
	me.color = member ? color : -1;
	me.err = local;
	ret = coll_oob_call(oob, &me, all, sizeof(me));
	if (!ret)
		ret = coll_oob_check(all, n, COLL_OOB_RESULT);
	if (ret)
		goto fail;
	for (i = 0; member && i < n && !mine; i++) {
		if (all[i].color == color && all[i].err) {
			mine = all[i].err;
			who = i;
		}
	}
	if (mine) {
		coll_comm_destroy(c);
		c = NULL;
		if (local)
			ret = coll_seterr(mine, "%s", err_here);
		else
			ret = coll_seterr(mine, "creating the communicator failed at rank %u "
					  "of the exchange: %s", who, coll_strerror(mine));
		goto out;
	}
	*out = c;
	ret = 0;
	goto out;
fail:
	coll_comm_destroy(c);
out:
	free(all);
	return ret;
}

/* Give the new communicator what a later split needs. */
void coll_oob_adopt(coll_comm_t *c, const struct coll_oob_table *t,
		    const struct coll_oob *oob)
{
	memcpy(c->hosts, t->hosts, t->nranks * sizeof(*t->hosts));
	memcpy(c->pods, t->pods, t->nranks * sizeof(*t->pods));
	memcpy(c->uid, t->uid, sizeof(c->uid));
	if (oob)
		c->oob = *oob;
}

int coll_comm_init_oob(const struct coll_oob *oob, const struct coll_oob_opts *opts_in,
		       coll_comm_t **comm)
{
	struct coll_oob_table t;
	struct coll_oob_opts opts;
	size_t n = sizeof(opts);
	int ret;

	coll_clearerr();
	if (!comm)
		return coll_seterr(-EINVAL, "coll_comm_init_oob: comm pointer is NULL");
	*comm = NULL;
	if (!oob || !oob->allgather || !oob->size || oob->rank >= oob->size)
		return coll_seterr(-EINVAL, "coll_comm_init_oob: need an allgather and rank < "
				   "size (rank %u, size %u)", oob ? oob->rank : 0,
				   oob ? oob->size : 0);
	if (opts_in && opts_in->size && opts_in->size < sizeof(uint32_t))
		return coll_seterr(-EINVAL, "coll_comm_init_oob: bad coll_oob_opts.size %u",
				   opts_in->size);
	memset(&opts, 0, sizeof(opts));
	if (opts_in) {
		if (opts_in->size && opts_in->size < n)
			n = opts_in->size;
		memcpy(&opts, opts_in, n);
	}
	ret = coll_oob_exchange(oob, &opts, &t);
	if (ret)
		return ret;
	ret = coll_oob_create(oob, &t, 0, opts.comm, comm);
	if (!ret)
		coll_oob_adopt(*comm, &t, oob);
	coll_oob_table_free(&t);
	return ret;
}

/* The allgather of a parent without one: kcoll's own AllGather on it. */
static int coll_kcoll_allgather(const void *s, void *r, size_t len, void *ctx)
{
	return coll_allgather_sync(ctx, s, r, len, COLL_UINT8);
}

int coll_comm_split(coll_comm_t *comm, int color, int key, coll_comm_t **newcomm)
{
	struct coll_oob oob;
	struct coll_oob_table t;
	int ret;

	coll_clearerr();
	if (!newcomm)
		return coll_seterr(-EINVAL, "coll_comm_split: newcomm pointer is NULL");
	*newcomm = NULL;
	if (!comm || !comm->ranks)
		return coll_seterr(-EINVAL, "coll_comm_split: no communicator");
	oob = comm->oob;
	if (!oob.allgather) {
		oob.allgather = coll_kcoll_allgather;
		oob.ctx = comm;
	}
	oob.rank = comm->rank;
	oob.size = comm->nranks;
	ret = coll_split_exchange(&oob, comm->ranks, comm->hosts, comm->pods, color, key, &t);
	if (ret)
		return ret;
	ret = coll_oob_create(&oob, &t, color < 0 ? -1 : color, &comm->opts, newcomm);
	if (!ret && *newcomm)
		coll_oob_adopt(*newcomm, &t, NULL);
	coll_oob_table_free(&t);
	return ret;
}

int coll_comm_dup(coll_comm_t *comm, coll_comm_t **newcomm)
{
	return coll_comm_split(comm, 0, comm ? (int)comm->rank : 0, newcomm);
}

int coll_comm_unique_id(const coll_comm_t *comm, uint8_t id[16])
{
	if (!comm || !id)
		return coll_seterr(-EINVAL, "coll_comm_unique_id: comm or id is NULL");
	memcpy(id, comm->uid, 16);
	return 0;
}
