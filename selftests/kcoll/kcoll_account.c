// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: what a communicator's kernel memory is charged to.
 *
 *  - Its creator's memory cgroup: in a cgroup v2 child group, a 2-rank
 *    communicator of two processes on this node (two ports, rxe
 *    loopback) with 64 slots of the largest chunk raises the group's
 *    memory.current by most of its receive slots, although rdma_cm
 *    handlers (kernel threads) allocate them; closing gives it back.
 *  - The per-user bound /sys/class/misc/kcoll/user_max_bytes: a user's
 *    communicator that would take it over is refused with ENOMEM before
 *    it connects; another user is not held back by the first user's
 *    (only by its own), root not at all (CAP_IPC_LOCK); closing gives the
 *    room back; bad writes are EINVAL and change nothing.
 *  - Who may open /dev/kcoll: the node is 0660 root:kcoll (the shipped
 *    udev rule, udev/60-kcoll.rules); a user outside the group is refused
 *    and libcoll's message names the mode, the group and the fix; the
 *    same user in the group opens it.
 *
 * Each node runs this on its own (its own address twice); with several
 * ranks per node only local rank 0 does, as the tests change the node's
 * sysfs limit and cgroups.  Needs root (cgroups, sysfs, setuid); mounts
 * cgroup2 at /sys/fs/cgroup when nothing has.  Skips (exit 4) without
 * /dev/kcoll.
 */
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"
#include "coll.h"

#define PORT 17310
#define UID_A 65534		/* nobody */
#define UID_B 65533
#define MIB (1ull << 20)

/* ------------------------------------------------------------ helpers */

static unsigned int port_base(void)
{
	return PORT + 8 * env_u32("KCOLL_LOCAL_RANK", 0);
}

/* This node's RDMA address from the runner's environment; -1 outside the cluster. */
static int node_addr(__u8 addr[16])
{
	const char *ips = getenv("KCOLL_NODE_IPS");
	unsigned int per = env_u32("KCOLL_RANKS_PER_NODE", 1);
	unsigned int node = env_u32("KCOLL_RANK", 0) / (per ? per : 1), i = 0;
	char buf[1024], *save = NULL, *tok;

	if (!ips || !*ips)
		return -1;
	snprintf(buf, sizeof(buf), "%s", ips);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save), i++)
		if (i == node)
			return inet_pton(AF_INET, tok, addr) == 1 ? 0 : -1;
	return -1;
}

static long long file_u64(const char *path)
{
	char buf[64];

	return kc_file_read(path, buf, sizeof(buf)) ? -1 : (long long)strtoull(buf, NULL, 10);
}

/* KCOLL_CHUNK_MAX: 30 pages (the executor's header takes an SGE). */
static unsigned int chunk_max(void)
{
	return 30 * (unsigned int)getpagesize();
}

/*
 * A communicator of @n ranks (at most 4), all on this node: rank @rank of
 * ports @port .. @port + @n - 1, @slots slots of @chunk bytes.  0 or the
 * errno.
 */
static int create_n(int fd, unsigned int rank, unsigned int n, unsigned int port,
		    unsigned int slots, unsigned int chunk, unsigned int connect_ms)
{
	struct kcoll_rank r[4] = {};
	struct kcoll_comm_create cc = {
		.size = sizeof(cc),
		.rank = rank,
		.nranks = n,
		.ranks = (uintptr_t)r,
		.rank_size = sizeof(r[0]),
		.eventfd = -1,
		.chunk_bytes = chunk,
		.slots = slots,
		.connect_timeout_ms = connect_ms,
		.timeout_ms = kc_op_timeout_ms(),
	};
	unsigned int i;

	for (i = 0; i < n && i < 4; i++) {
		r[i].family = KCOLL_AF_INET;
		r[i].port = port + i;
		if (node_addr(r[i].addr))
			return EADDRNOTAVAIL;
	}
	return ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc) ? errno : 0;
}

/*
 * One rank process: joins @cgroup (when given), becomes @uid, says 'r',
 * waits for 'g', creates its rank of a 2-rank communicator, sends the
 * errno (0: created) and holds it until told to go (a byte, or EOF).
 */
struct rank_proc {
	pid_t pid;
	int to, from;		/* pipes: parent -> child, child -> parent */
};

static void rank_child(int rd, int wr, const char *cgroup, uid_t uid, unsigned int rank,
		       unsigned int port, unsigned int slots, unsigned int chunk)
{
	char path[256], c = 'r';
	int fd, err;

	if (cgroup) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
		if (kc_file_write(path, "0"))
			_exit(1);
	}
	if (kc_become(uid, true))
		_exit(2);
	if (write(wr, &c, 1) != 1 || read(rd, &c, 1) != 1)
		_exit(3);
	fd = open(KC_DEV, O_RDWR | O_CLOEXEC);
	err = fd < 0 ? errno : create_n(fd, rank, 2, port, slots, chunk, 60000);
	c = (char)err;
	if (write(wr, &c, 1) != 1)
		_exit(4);
	if (read(rd, &c, 1) < 0)
		_exit(5);
	if (fd >= 0)
		close(fd);
	_exit(0);
}

static int rank_start(struct rank_proc *p, const char *cgroup, uid_t uid, unsigned int rank,
		      unsigned int port, unsigned int slots, unsigned int chunk)
{
	int to[2], from[2];
	char c;

	if (pipe(to) || pipe(from))
		return -1;
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (!p->pid) {
		close(to[1]);
		close(from[0]);
		rank_child(to[0], from[1], cgroup, uid, rank, port, slots, chunk);
	}
	close(to[0]);
	close(from[1]);
	p->to = to[1];
	p->from = from[0];
	/* Ready: in its cgroup, as its user. */
	return read(p->from, &c, 1) == 1 && c == 'r' ? 0 : -1;
}

static void rank_go(struct rank_proc *p)
{
	char c = 'g';

	if (write(p->to, &c, 1) != 1)
		p->to = -1;
}

/* The child's create result: 0 or its errno, -1 when it died. */
static int rank_result(struct rank_proc *p)
{
	char c;

	return read(p->from, &c, 1) == 1 ? (unsigned char)c : -1;
}

/* Let it close and exit; its exit status, or -1. */
static int rank_end(struct rank_proc *p)
{
	char c = 'x';
	int status;

	if (p->pid <= 0)
		return -1;
	/* A byte, not EOF: a sibling forked later holds this pipe too. */
	if (write(p->to, &c, 1) != 1)
		c = 0;
	close(p->to);
	close(p->from);
	if (waitpid(p->pid, &status, 0) != p->pid)
		return -1;
	p->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * One creation as @uid, in a child: rank 0 of an @n-rank communicator
 * whose other ranks never come.  Its errno: ENOMEM refused by the limit at
 * once, ETIMEDOUT when it was let through and waited for its peers.
 */
static int create_as(uid_t uid, unsigned int n, unsigned int port, unsigned int slots,
		     unsigned int chunk, long *ms)
{
	struct timespec t0, t1;
	int status, fd, err;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (kc_become(uid, true))
			_exit(255);
		fd = open(KC_DEV, O_RDWR | O_CLOEXEC);
		err = fd < 0 ? errno : create_n(fd, 0, n, port, slots, chunk, 1000);
		_exit(err);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	return WEXITSTATUS(status);
}

/* Skip unless this can set the node up: root, in the cluster, local rank 0. */
#define NEED_NODE()								\
	do {									\
		__u8 a_[16];							\
		if (geteuid() != 0)						\
			SKIP(return, "needs root");				\
		if (node_addr(a_))						\
			SKIP(return, "needs the virtual cluster (KCOLL_NODE_IPS)"); \
		if (env_u32("KCOLL_LOCAL_RANK", 0))				\
			SKIP(return, "local rank 0 of this node does it");	\
	} while (0)

/* -------------------------------------------------- memory cgroup */

/*
 * A cgroup v2 hierarchy with the memory controller for its children:
 * the one mounted, else cgroup2 mounted at /sys/fs/cgroup.
 */
static int cgroup2_root(char *root, size_t len)
{
	char dev[256], dir[256], type[64], path[320];
	FILE *f = fopen("/proc/self/mounts", "r");
	bool found = false;

	if (!f)
		return -1;
	while (!found && fscanf(f, "%255s %255s %63s %*[^\n]", dev, dir, type) == 3)
		if (!strcmp(type, "cgroup2")) {
			snprintf(root, len, "%s", dir);
			found = true;
		}
	fclose(f);
	if (!found) {
		snprintf(root, len, "/sys/fs/cgroup");
		mkdir(root, 0755);
		if (mount("cgroup2", root, "cgroup2", 0, NULL))
			return -1;
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	return kc_file_write(path, "+memory") ? -1 : 0;
}

TEST(memcg_charged_with_receive_slots_of_both_ranks)
{
	unsigned int slots = 64, chunk = chunk_max(), port = port_base();
	/* Two ranks, one connection each, 2 * slots slots per connection. */
	long long slot_mem = 2 * 2 * (long long)slots * chunk;
	long long base, peak, after;
	struct rank_proc p[2] = {};
	char root[256], grp[300], cur[320];
	int i, res[2];

	NEED_NODE();
	if (cgroup2_root(root, sizeof(root)))
		SKIP(return, "no cgroup v2 with the memory controller: %s", strerror(errno));
	snprintf(grp, sizeof(grp), "%s/kcoll_account_%d", root, (int)getpid());
	snprintf(cur, sizeof(cur), "%s/memory.current", grp);
	ASSERT_EQ(0, mkdir(grp, 0755)) TH_LOG("%s: %s", grp, strerror(errno));
	ASSERT_EQ(0, access(cur, R_OK)) {
		rmdir(grp);
	}

	for (i = 0; i < 2; i++)
		if (rank_start(&p[i], grp, geteuid(), i, port, slots, chunk))
			break;
	base = file_u64(cur);
	for (i = 0; i < 2 && p[i].pid > 0; i++)
		rank_go(&p[i]);
	for (i = 0; i < 2; i++)
		res[i] = p[i].pid > 0 ? rank_result(&p[i]) : -1;
	peak = file_u64(cur);
	for (i = 0; i < 2; i++)
		EXPECT_EQ(0, rank_end(&p[i]));
	/* The slots go with the communicators: the charge comes back. */
	after = file_u64(cur);
	rmdir(grp);

	ASSERT_EQ(0, res[0]) TH_LOG("rank 0 create: %s", strerror(res[0]));
	ASSERT_EQ(0, res[1]) TH_LOG("rank 1 create: %s", strerror(res[1]));
	TH_LOG("memory.current: %lld before, %lld with the communicator, %lld after; slots %lld",
	       base, peak, after, slot_mem);
	ASSERT_LE(0, base);
	/* Most of it: rounding and descriptors only add. */
	EXPECT_GE(peak - base, slot_mem * 3 / 4);
	EXPECT_LE(after, peak - slot_mem * 3 / 4);
}

/* ------------------------------------------------ user_max_bytes */

#define LIMIT KC_SYSFS "user_max_bytes"

FIXTURE(limit) {
	char saved[64];
	bool have;
};

FIXTURE_SETUP(limit)
{
	/* Missing is a failure: the module must have the limit. */
	ASSERT_EQ(0, kc_file_read(LIMIT, self->saved, sizeof(self->saved)))
		TH_LOG(LIMIT ": %s", strerror(errno));
	self->have = true;
}

FIXTURE_TEARDOWN(limit)
{
	if (self->have && geteuid() == 0)
		EXPECT_EQ(0, kc_file_write(LIMIT, self->saved));
}

TEST_F(limit, bad_writes_are_einval_and_change_nothing)
{
	static const char *const bad[] = {
		"\n", "abc", "-1", "12x", "1.5", "1e9", "0x", "64M",
		"18446744073709551616", "99999999999999999999999", "1 2",
	};
	char now[64];
	size_t i;

	if (geteuid() != 0)
		SKIP(return, "writing sysfs needs root");
	if (env_u32("KCOLL_LOCAL_RANK", 0))
		SKIP(return, "local rank 0 of this node does it");
	ASSERT_EQ(0, kc_file_write(LIMIT, "123456789"));
	ASSERT_EQ(0, kc_file_read(LIMIT, now, sizeof(now)));
	EXPECT_STREQ("123456789\n", now);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(EINVAL, kc_file_write(LIMIT, bad[i])) TH_LOG("<- \"%s\"", bad[i]);
		ASSERT_EQ(0, kc_file_read(LIMIT, now, sizeof(now)));
		EXPECT_STREQ("123456789\n", now) TH_LOG("<- \"%s\"", bad[i]);
	}
	/* The largest value and 0 (no limit) are fine. */
	EXPECT_EQ(0, kc_file_write(LIMIT, "18446744073709551615"));
	EXPECT_EQ(0, kc_file_write(LIMIT, "0"));
	ASSERT_EQ(0, kc_file_read(LIMIT, now, sizeof(now)));
	EXPECT_STREQ("0\n", now);
	/* A user may read it, not change it. */
	if (!fork())
		_exit(kc_become(UID_A, true) ? 2 : kc_file_write(LIMIT, "1") == EACCES ? 0 : 1);
	{
		int status;

		ASSERT_LT(0, wait(&status));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
}

TEST_F(limit, over_the_limit_is_enomem_other_users_unaffected)
{
	/*
	 * Each rank of 2 ranks with 64 slots of the largest chunk takes
	 * about 15.8 MiB (128 slots of 124 KiB and their descriptors,
	 * Documentation/design.md): user A's pair takes about 32 MiB of 40,
	 * one more rank of A would take it to about 47.
	 */
	unsigned int slots = 64, chunk = chunk_max(), port = port_base() + 2;
	struct rank_proc p[2] = {};
	int i, res[2], err;
	long ms;

	NEED_NODE();
	ASSERT_EQ(0, kc_file_write(LIMIT, "41943040"));	/* 40 MiB */
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, rank_start(&p[i], NULL, UID_A, i, port, slots, chunk));
	for (i = 0; i < 2; i++)
		rank_go(&p[i]);
	for (i = 0; i < 2; i++)
		res[i] = rank_result(&p[i]);
	if (res[0] || res[1]) {
		rank_end(&p[0]);
		rank_end(&p[1]);
		ASSERT_EQ(0, res[0]) TH_LOG("user A's rank 0: %s", strerror(res[0]));
		ASSERT_EQ(0, res[1]) TH_LOG("user A's rank 1: %s", strerror(res[1]));
	}

	/* A third rank of A's: refused at once, before any connection. */
	err = create_as(UID_A, 2, port + 2, slots, chunk, &ms);
	EXPECT_EQ(ENOMEM, err) TH_LOG("user A over the limit: %s", strerror(err));
	EXPECT_GT(1000, ms);
	/* A small one still fits: the limit counts what each takes. */
	err = create_as(UID_A, 2, port + 2, 1, 4096, &ms);
	EXPECT_EQ(ETIMEDOUT, err) TH_LOG("user A, small: %s", strerror(err));
	/* User B has the whole limit, but not one communicator over it alone. */
	err = create_as(UID_B, 2, port + 2, slots, chunk, &ms);
	EXPECT_EQ(ETIMEDOUT, err) TH_LOG("user B: %s", strerror(err));
	err = create_as(UID_B, 4, port + 2, slots, chunk, &ms);	/* 3 peers: 47 MiB */
	EXPECT_EQ(ENOMEM, err) TH_LOG("user B, 4 ranks: %s", strerror(err));
	/* Root is not held to it (CAP_IPC_LOCK), as with RLIMIT_MEMLOCK. */
	err = create_as(0, 4, port + 2, slots, chunk, &ms);
	EXPECT_EQ(ETIMEDOUT, err) TH_LOG("root, 4 ranks: %s", strerror(err));

	/* Closed, A's pair gives its room back. */
	EXPECT_EQ(0, rank_end(&p[0]));
	EXPECT_EQ(0, rank_end(&p[1]));
	err = create_as(UID_A, 2, port + 2, slots, chunk, &ms);
	EXPECT_EQ(ETIMEDOUT, err) TH_LOG("user A after closing: %s", strerror(err));
}

/* ------------------------------------------------ who may open the device */

/* What udev/60-kcoll.rules sets (vm-init.sh applies it as udev would). */
#define DEV_MODE 0660
#define DEV_GROUP "kcoll"

TEST(device_is_0660_root_and_group_kcoll)
{
	struct group *g;
	struct stat st;

	ASSERT_EQ(0, stat(KC_DEV, &st));
	EXPECT_EQ(DEV_MODE, st.st_mode & 07777)
		TH_LOG("mode %04o: udev/60-kcoll.rules not applied?", st.st_mode & 07777);
	EXPECT_EQ(0, st.st_uid);
	g = getgrgid(st.st_gid);
	ASSERT_NE(NULL, g) TH_LOG("gid %u has no name: no group " DEV_GROUP "?", st.st_gid);
	EXPECT_STREQ(DEV_GROUP, g->gr_name);
}

/* A user without the group: the device refuses it, libcoll says how to get in. */
TEST(user_outside_the_group_is_refused_and_told_what_to_do)
{
	struct passwd *pw = getpwuid(UID_A);
	struct coll_module_info info;
	char want[512];

	snprintf(want, sizeof(want), "cannot open " KC_DEV ": Permission denied (mode 0660, "
		 "group kcoll; this user is not in group kcoll): ask the administrator to add "
		 "you to group kcoll (usermod -aG kcoll %s, then log in again), or to change "
		 "the mode with a rule in /etc/udev/rules.d/60-kcoll.rules",
		 pw ? pw->pw_name : "USER");
	if (kc_become(UID_A, false))
		SKIP(return, "cannot become user %d: %s", UID_A, strerror(errno));
	EXPECT_EQ(-1, open(KC_DEV, O_RDWR | O_CLOEXEC));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(-EACCES, coll_module_info(NULL, &info));
	EXPECT_STREQ(want, coll_last_error());
}

/* The same user in the device's group opens it, through libcoll too. */
TEST(user_in_the_group_opens_it)
{
	struct coll_module_info info;
	int fd;

	if (kc_become(UID_A, true))
		SKIP(return, "cannot become user %d: %s", UID_A, strerror(errno));
	fd = open(KC_DEV, O_RDWR | O_CLOEXEC);
	EXPECT_LE(0, fd) TH_LOG(KC_DEV ": %s", strerror(errno));
	close(fd);
	ASSERT_EQ(0, coll_module_info(NULL, &info)) TH_LOG("%s", coll_last_error());
	EXPECT_EQ(KCOLL_ABI_VERSION, info.abi_version);
}

KC_HARNESS_MAIN
