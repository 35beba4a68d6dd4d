// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: bad input.  Every ioctl with every kind of wrong
 * argument gets its documented errno (uapi/linux/kcoll.h), and a failed
 * ioctl changes nothing: the communicator still runs an operation
 * afterwards and no page stays pinned.  The sysfs tunables refuse absurd
 * values with EINVAL and keep the old one.
 *
 * Each test runs alone on its node (a one-rank communicator on the
 * loopback address, or a creation that fails before it connects), so
 * every rank of the cluster may run this binary at the same time.  Skips
 * (exit 4) when /dev/kcoll is missing.
 */
#include <limits.h>
#include <pthread.h>
#include <sys/eventfd.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"

#define PORT 17100

static struct kcoll_rank lo_rank(unsigned int port)
{
	struct kcoll_rank r = { .family = KCOLL_AF_INET, .port = port };

	inet_pton(AF_INET, "127.0.0.1", r.addr);
	return r;
}

static void create_init(struct kcoll_comm_create *cc, struct kcoll_rank *r, unsigned int n)
{
	memset(cc, 0, sizeof(*cc));
	cc->size = sizeof(*cc);
	cc->nranks = n;
	cc->ranks = (uintptr_t)r;
	cc->rank_size = sizeof(*r);
	cc->eventfd = -1;
}

/*
 * The file @fd refuses @cc with @err.  Two statements, not one, so that a
 * TH_LOG() can follow (it attaches to the errno check): use in braces.
 */
#define CREATE_FAILS(fd, cc, err)						\
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_COMM_CREATE, cc));			\
	EXPECT_EQ(err, errno)

/* ------------------------------------------------------------ ABI */

/* Each ioctl with its smallest valid size. */
static const struct { unsigned int cmd; __u32 min; const char *name; } ioctls[] = {
	{ KCOLL_IOC_INFO, 4, "info" },
	{ KCOLL_IOC_COMM_CREATE, 24, "create" },
	{ KCOLL_IOC_MEM_REG, 32, "reg" },
	{ KCOLL_IOC_MEM_DEREG, 16, "dereg" },
	{ KCOLL_IOC_SUBMIT, sizeof(struct kcoll_submit), "submit" },
	{ KCOLL_IOC_REAP, 28, "reap" },
	{ KCOLL_IOC_ABORT, 8, "abort" },
};

static void set_size(void *buf, __u32 size)
{
	memcpy(buf, &size, sizeof(size));
}

TEST(abi_every_ioctl_too_small_is_einval)
{
	__u64 buf[512];
	int fd = kc_open(_metadata);
	size_t i;

	for (i = 1; i < sizeof(ioctls) / sizeof(ioctls[0]); i++) {
		memset(buf, 0, sizeof(buf));
		set_size(buf, ioctls[i].min - 4);
		EXPECT_EQ(-1, ioctl(fd, ioctls[i].cmd, buf)) TH_LOG("%s", ioctls[i].name);
		EXPECT_EQ(EINVAL, errno) TH_LOG("%s", ioctls[i].name);
	}
	close(fd);
}

TEST(abi_every_ioctl_nonzero_tail_is_e2big)
{
	static __u64 buf[1024];		/* larger than any struct, and a page */
	int fd = kc_open(_metadata);
	size_t i;

	for (i = 0; i < sizeof(ioctls) / sizeof(ioctls[0]); i++) {
		/* 256 bytes is beyond every struct: its last byte is unknown. */
		memset(buf, 0, sizeof(buf));
		set_size(buf, 256);
		((__u8 *)buf)[255] = 1;
		EXPECT_EQ(-1, ioctl(fd, ioctls[i].cmd, buf)) TH_LOG("%s", ioctls[i].name);
		EXPECT_EQ(E2BIG, errno) TH_LOG("%s", ioctls[i].name);
		/* More than a page is refused whatever it holds. */
		memset(buf, 0, sizeof(buf));
		set_size(buf, 4096 + 8);
		EXPECT_EQ(-1, ioctl(fd, ioctls[i].cmd, buf)) TH_LOG("%s", ioctls[i].name);
		EXPECT_EQ(E2BIG, errno) TH_LOG("%s", ioctls[i].name);
	}
	close(fd);
}

/* Anything but E2BIG: the size was accepted (the zero fields may be wrong). */
TEST(abi_every_ioctl_4096_bytes_zero_tail_accepted_4097_is_e2big)
{
	static __u64 buf[1024];		/* 8 KiB: room for 4097 bytes */
	struct kcoll_info info = { .size = sizeof(info) };
	struct kcoll_rank r = lo_rank(PORT);
	struct kcoll_comm_create cc;
	int fd = kc_open(_metadata);
	size_t i;

	for (i = 0; i < sizeof(ioctls) / sizeof(ioctls[0]); i++) {
		memset(buf, 0, sizeof(buf));
		set_size(buf, KCOLL_STRUCT_MAX);
		errno = 0;
		ioctl(fd, ioctls[i].cmd, buf);
		EXPECT_NE(E2BIG, errno) TH_LOG("%s: 4096 bytes refused", ioctls[i].name);
		memset(buf, 0, sizeof(buf));
		set_size(buf, KCOLL_STRUCT_MAX + 1);
		EXPECT_EQ(-1, ioctl(fd, ioctls[i].cmd, buf)) TH_LOG("%s", ioctls[i].name);
		EXPECT_EQ(E2BIG, errno) TH_LOG("%s: 4097 bytes", ioctls[i].name);
	}
	/* A good struct with a zero tail up to 4096 bytes works. */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &info, sizeof(info));
	set_size(buf, KCOLL_STRUCT_MAX);
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_INFO, buf)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(KCOLL_ABI_VERSION, ((struct kcoll_info *)buf)->abi_version);
	create_init(&cc, &r, 1);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &cc, sizeof(cc));
	set_size(buf, KCOLL_STRUCT_MAX);
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_COMM_CREATE, buf)) TH_LOG("%s", strerror(errno));
	EXPECT_NE(0, ((struct kcoll_comm_create *)buf)->comm_id);
	close(fd);
}

TEST(info_nonzero_pad_is_einval)
{
	struct kcoll_info info = { .size = sizeof(info) };
	int fd = kc_open(_metadata);

	info.pad = 1;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, info.abi_version);		/* nothing written */
	/* Output fields hold anything the caller left there. */
	memset(&info, 0x5a, sizeof(info));
	info.size = sizeof(info);
	info.pad = 0;
	EXPECT_EQ(0, ioctl(fd, KCOLL_IOC_INFO, &info));
	EXPECT_EQ(KCOLL_ABI_VERSION, info.abi_version);
	close(fd);
}

TEST(abi_wrong_direction_or_type_is_enotty)
{
	struct kcoll_info info = { .size = sizeof(info) };
	int fd = kc_open(_metadata);

	EXPECT_EQ(-1, ioctl(fd, _IOR(KCOLL_IOC_MAGIC, 0x00, struct kcoll_info), &info));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, _IOW(KCOLL_IOC_MAGIC, 0x04, struct kcoll_submit), &info));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, _IOWR(KCOLL_IOC_MAGIC, 0x3f, struct kcoll_abort), &info));
	EXPECT_EQ(ENOTTY, errno);
	close(fd);
}

/* ------------------------------------------------------------ create */

TEST(create_bad_counts_flags_and_sizes_are_einval)
{
	struct kcoll_rank r = lo_rank(PORT);
	struct kcoll_info info = { .size = sizeof(info) };
	struct kcoll_comm_create cc;
	int fd = kc_open(_metadata);

	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_INFO, &info));
	create_init(&cc, &r, 0);
	CREATE_FAILS(fd, &cc, EINVAL);			/* no rank */
	create_init(&cc, &r, info.max_ranks + 1);
	CREATE_FAILS(fd, &cc, EINVAL);			/* too many */
	create_init(&cc, &r, 1);
	cc.rank = 1;
	CREATE_FAILS(fd, &cc, EINVAL);			/* rank >= nranks */
	create_init(&cc, &r, 1);
	cc.flags = ~KCOLL_CREATE_F_PARENT;
	CREATE_FAILS(fd, &cc, EINVAL);
	create_init(&cc, &r, 1);
	cc.rank_size = 8;
	CREATE_FAILS(fd, &cc, EINVAL);
	create_init(&cc, &r, 1);
	cc.rank_size = 8192;
	CREATE_FAILS(fd, &cc, EINVAL);
	create_init(&cc, &r, 1);
	cc.ranks = 0;
	CREATE_FAILS(fd, &cc, EINVAL);
	create_init(&cc, &r, 1);
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc));
	close(fd);
}

/*
 * KCOLL_CREATE_F_PARENT names a file of this process with a communicator
 * (else EBADF) and each rank's rank in it (unreadable: EFAULT; out of its
 * range or not this rank's: EINVAL).  A healthy parent gives nothing to
 * take over: the child connects as any communicator.
 */
TEST(create_with_a_bad_parent_fails)
{
	struct kcoll_rank r = lo_rank(PORT);
	struct kcoll_comm_create cc;
	int pfd = kc_open(_metadata), fd = kc_open(_metadata), other = kc_open(_metadata);
	int null = open("/dev/null", O_RDONLY);
	__u32 bad = 1, good = 0;

	ASSERT_LE(0, null);
	create_init(&cc, &r, 1);
	ASSERT_EQ(0, ioctl(pfd, KCOLL_IOC_COMM_CREATE, &cc));
	create_init(&cc, &r, 1);
	cc.uid[0] = 1;			/* not the parent's id */
	cc.flags = KCOLL_CREATE_F_PARENT;
	cc.parent_ranks = (uintptr_t)&good;
	cc.parent_fd = -1;
	CREATE_FAILS(fd, &cc, EBADF);
	cc.parent_fd = null;
	CREATE_FAILS(fd, &cc, EBADF);
	cc.parent_fd = other;		/* /dev/kcoll, but no communicator */
	CREATE_FAILS(fd, &cc, EBADF);
	cc.parent_fd = pfd;
	cc.parent_ranks = 0;
	CREATE_FAILS(fd, &cc, EFAULT);
	cc.parent_ranks = (uintptr_t)&bad;
	CREATE_FAILS(fd, &cc, EINVAL);
	cc.parent_ranks = (uintptr_t)&good;
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc));
	EXPECT_EQ(0, cc.reused);
	close(null);
	close(other);
	close(fd);
	close(pfd);
}

TEST(create_rank_entry_with_unknown_tail_is_e2big)
{
	struct { struct kcoll_rank r; __u32 future[2]; } big[1];
	struct kcoll_comm_create cc;
	int fd = kc_open(_metadata);

	memset(big, 0, sizeof(big));
	big[0].r = lo_rank(PORT);
	big[0].future[1] = 7;
	create_init(&cc, &big[0].r, 1);
	cc.rank_size = sizeof(big[0]);
	CREATE_FAILS(fd, &cc, E2BIG);
	big[0].future[1] = 0;			/* a zero tail is fine */
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc));
	close(fd);
}

TEST(create_unmapped_rank_table_is_efault)
{
	struct kcoll_comm_create cc;
	void *p = map_buf(4096);
	int fd = kc_open(_metadata);

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, munmap(p, 4096));
	create_init(&cc, p, 1);
	CREATE_FAILS(fd, &cc, EFAULT);
	close(fd);
}

TEST(create_bad_family_or_port_is_einval)
{
	struct kcoll_rank r = lo_rank(PORT);
	struct kcoll_comm_create cc;
	int fd = kc_open(_metadata);

	create_init(&cc, &r, 1);
	r.family = 99;
	CREATE_FAILS(fd, &cc, EINVAL);
	r.family = 0;
	CREATE_FAILS(fd, &cc, EINVAL);
	r = lo_rank(65536);
	CREATE_FAILS(fd, &cc, EINVAL);
	r = lo_rank(PORT);
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc));
	close(fd);
}

/*
 * Ranks may share an address and port (the node's listener tells them
 * apart by the rank a request names): not EINVAL, the creation goes on to
 * wait for its peers, which never come.
 */
TEST(create_ranks_sharing_address_and_port_are_taken)
{
	struct kcoll_rank r[3] = { lo_rank(PORT), lo_rank(PORT + 1), lo_rank(PORT) };
	struct kcoll_comm_create cc;
	int fd = kc_open(_metadata);

	create_init(&cc, r, 3);
	cc.rank = 2;
	cc.connect_timeout_ms = 500;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc));
	EXPECT_NE(EINVAL, errno) TH_LOG("refused as bad input: %s", strerror(errno));
	close(fd);
}

TEST(create_non_unicast_addresses_are_einval)
{
	static const char *const v4[] = {
		"0.0.0.0", "255.255.255.255", "224.0.0.1", "239.1.2.3",
	};
	static const char *const v6[] = { "::", "ff02::1" };
	struct kcoll_rank r;
	struct kcoll_comm_create cc;
	int fd = kc_open(_metadata);
	size_t i;

	create_init(&cc, &r, 1);
	for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		r = lo_rank(PORT);
		inet_pton(AF_INET, v4[i], r.addr);
		CREATE_FAILS(fd, &cc, EINVAL) TH_LOG("%s", v4[i]);
	}
	for (i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		r = lo_rank(PORT);
		r.family = KCOLL_AF_INET6;
		inet_pton(AF_INET6, v6[i], r.addr);
		CREATE_FAILS(fd, &cc, EINVAL) TH_LOG("%s", v6[i]);
	}
	/* IPv4 keeps the rest of addr[] zero. */
	r = lo_rank(PORT);
	r.addr[15] = 1;
	CREATE_FAILS(fd, &cc, EINVAL);
	r = lo_rank(PORT);
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc));
	close(fd);
}

TEST(create_malformed_algo_string_is_einval)
{
	static const char *const bad[] = {
		"level1:no-such-algorithm", "level9:ring", "level1", "level1:ring;level1",
		"AllReduce=level1:ring/Nonsense=level1:ring", "AllReduce=", "=level1:ring",
		"level0:ring;;", "\x01\x02", "level1:ring level2:NB",
	};
	struct kcoll_rank r = lo_rank(PORT);
	struct kcoll_comm_create cc;
	int fd = kc_open(_metadata);
	size_t i;

	create_init(&cc, &r, 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cc.algo = (uintptr_t)bad[i];
		CREATE_FAILS(fd, &cc, EINVAL) TH_LOG("\"%s\"", bad[i]);
	}
	cc.algo = (uintptr_t)"level1:ring";
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc));
	close(fd);
}

TEST(create_algo_too_long_is_einval_unmapped_is_efault)
{
	static char longs[2 * KCOLL_ALGO_STR_MAX];
	struct kcoll_rank r = lo_rank(PORT);
	struct kcoll_comm_create cc;
	void *p = map_buf(4096);
	int fd = kc_open(_metadata);

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, munmap(p, 4096));
	memset(longs, ';', sizeof(longs) - 1);
	create_init(&cc, &r, 1);
	cc.algo = (uintptr_t)longs;
	CREATE_FAILS(fd, &cc, EINVAL);
	cc.algo = (uintptr_t)p;
	CREATE_FAILS(fd, &cc, EFAULT);
	cc.algo = 0;
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc));
	close(fd);
}

TEST(create_eventfd_not_eventfd_or_closed_is_ebadf)
{
	struct kcoll_rank r = lo_rank(PORT);
	struct kcoll_comm_create cc;
	int fd = kc_open(_metadata);
	int efd = eventfd(0, EFD_CLOEXEC), gone, pfd[2];

	ASSERT_LE(0, efd);
	ASSERT_EQ(0, pipe(pfd));
	gone = dup(efd);
	ASSERT_LE(0, gone);
	close(gone);
	create_init(&cc, &r, 1);
	cc.eventfd = fd;			/* a file, but no eventfd */
	CREATE_FAILS(fd, &cc, EBADF);
	cc.eventfd = pfd[0];			/* a pipe */
	CREATE_FAILS(fd, &cc, EBADF);
	cc.eventfd = gone;			/* not an open file */
	CREATE_FAILS(fd, &cc, EBADF);
	cc.eventfd = efd;
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc));
	close(fd);
	close(efd);
	close(pfd[0]);
	close(pfd[1]);
}

TEST(create_negative_eventfd_but_minus_one_is_ebadf)
{
	static const int bad[] = { -2, -100, INT_MIN };
	struct kcoll_rank r = lo_rank(PORT);
	struct kcoll_comm_create cc;
	int fd = kc_open(_metadata);
	size_t i;

	create_init(&cc, &r, 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cc.eventfd = bad[i];
		CREATE_FAILS(fd, &cc, EBADF) TH_LOG("eventfd %d", bad[i]);
	}
	cc.eventfd = -1;			/* the one "none" */
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc));
	close(fd);
}

/*
 * A two-rank table whose rank 0 (this one) is @addr:@port: the creation
 * binds it before it waits for anyone, so a bind error comes at once.
 * The connect timeout bounds the test if the bind succeeds after all.
 */
static int create_two(int fd, const char *addr, unsigned int port)
{
	struct kcoll_rank r[2] = { lo_rank(port), lo_rank(PORT + 7) };
	struct kcoll_comm_create cc;

	inet_pton(AF_INET, addr, r[0].addr);
	inet_pton(AF_INET, addr, r[1].addr);
	create_init(&cc, r, 2);
	cc.connect_timeout_ms = 2000;
	return ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc);
}

TEST(create_address_not_on_this_node_is_eaddrnotavail)
{
	int fd = kc_open(_metadata);
	struct cluster c;

	/* TEST-NET-2: no node of any cluster has it. */
	EXPECT_EQ(-1, create_two(fd, "198.51.100.7", PORT));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
	/* Nothing was left: the file creates. */
	cluster_single(&c, PORT);
	EXPECT_EQ(0, comm_create(fd, &c, -1, NULL));
	close(fd);
}

TEST(create_port_below_1024_unprivileged_is_eacces)
{
	const char *ip = getenv("KCOLL_IP");
	int fd = kc_open(_metadata);

	/* This node's RoCE address: the bind gets as far as the port. */
	if (!ip || !*ip)
		SKIP(return, "no KCOLL_IP (run under kcoll-vm)");
	if (kc_become(65534, true))
		SKIP(return, "cannot drop root");
	EXPECT_EQ(-1, create_two(fd, ip, 80));
	EXPECT_EQ(EACCES, errno);
	close(fd);
}

TEST(create_absurd_tunables_are_einval)
{
	struct kcoll_rank r = lo_rank(PORT);
	struct kcoll_comm_create cc;
	int fd = kc_open(_metadata);

	create_init(&cc, &r, 1);
	cc.chunk_bytes = 3;
	CREATE_FAILS(fd, &cc, EINVAL);
	cc.chunk_bytes = 4097;			/* not a multiple of 8 */
	CREATE_FAILS(fd, &cc, EINVAL);
	cc.chunk_bytes = 1u << 30;
	CREATE_FAILS(fd, &cc, EINVAL);
	/*
	 * More pages than one send's SGEs can carry with the header's (30
	 * pages is the most; 31, the most before the header, is refused).
	 */
	cc.chunk_bytes = 30 * getpagesize() + 8;
	CREATE_FAILS(fd, &cc, EINVAL);
	cc.chunk_bytes = 31 * getpagesize();
	CREATE_FAILS(fd, &cc, EINVAL);
	cc.chunk_bytes = 1u << 20;
	CREATE_FAILS(fd, &cc, EINVAL);
	cc.chunk_bytes = 0;
	cc.slots = 65;
	CREATE_FAILS(fd, &cc, EINVAL);
	cc.slots = ~0u;
	CREATE_FAILS(fd, &cc, EINVAL);
	cc.slots = 0;
	cc.timeout_ms = 5;
	CREATE_FAILS(fd, &cc, EINVAL);
	cc.timeout_ms = ~0u;
	CREATE_FAILS(fd, &cc, EINVAL);
	cc.timeout_ms = 0;
	cc.connect_timeout_ms = 4000000000u;
	CREATE_FAILS(fd, &cc, EINVAL);
	cc.connect_timeout_ms = 0;
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc));
	close(fd);
}

TEST(create_twice_is_ebusy)
{
	struct kcoll_rank r = lo_rank(PORT);
	struct kcoll_comm_create cc;
	int fd = kc_open(_metadata);
	__u64 id;

	create_init(&cc, &r, 1);
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc));
	id = cc.comm_id;
	EXPECT_NE(0, id);
	CREATE_FAILS(fd, &cc, EBUSY);
	EXPECT_EQ(id, cc.comm_id);		/* a failed ioctl writes nothing */
	close(fd);
}

TEST(no_communicator_is_enotconn)
{
	struct kcoll_completion cpl;
	struct kcoll_submit s = { .op = KCOLL_OP_BARRIER };
	struct kcoll_reap r = { .size = sizeof(r), .entries = (uintptr_t)&cpl, .max = 1,
				.entry_size = sizeof(cpl) };
	struct kcoll_abort a = { .size = sizeof(a) };
	int fd = kc_open(_metadata);

	EXPECT_EQ(-1, submit(fd, &s));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_REAP, &r));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_ABORT, &a));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_PEERS, &(struct kcoll_peers){ .size = 16, .nranks = 1 }));
	EXPECT_EQ(ENOTCONN, errno);
	close(fd);
}

/* KCOLL_IOC_PEERS: a short struct, a short or bad buffer; nothing written on error. */
TEST(peers_bad_arguments)
{
	struct kcoll_peers p = { .size = sizeof(p) };
	struct cluster c;
	__u8 fates[2] = { 0x5a, 0x5a };
	int fd = kc_open(_metadata);

	cluster_single(&c, PORT);
	ASSERT_EQ(0, comm_create(fd, &c, -1, NULL));
	p.size = 8;
	p.nranks = 1;
	p.fates = (uintptr_t)fates;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_PEERS, &p));
	EXPECT_EQ(EINVAL, errno);
	p.size = sizeof(p);
	p.nranks = 0;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_PEERS, &p));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(1, p.nranks);			/* what it needs */
	EXPECT_EQ(0x5a, fates[0]);
	p.fates = 8;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_PEERS, &p));
	EXPECT_EQ(EFAULT, errno);
	p.fates = (uintptr_t)fates;
	EXPECT_EQ(0, ioctl(fd, KCOLL_IOC_PEERS, &p));
	EXPECT_EQ(1, p.nranks);
	EXPECT_EQ(KCOLL_FATE_ALIVE, fates[0]);
	EXPECT_EQ(0x5a, fates[1]);		/* one byte per rank, no more */
	close(fd);
}

/* ------------------------------------------------------------ submit */

/* A file with a one-rank communicator and a good AllReduce to vary. */
FIXTURE(one) {
	int fd;
	float *buf;		/* 4096 floats */
	struct kcoll_submit s;
	long long pinned;
};

FIXTURE_SETUP(one)
{
	struct cluster c;

	self->fd = kc_open(_metadata);
	cluster_single(&c, PORT);
	ASSERT_EQ(0, comm_create(self->fd, &c, -1, NULL));
	self->buf = map_buf(4096 * sizeof(float));
	ASSERT_NE(NULL, self->buf);
	memset(&self->s, 0, sizeof(self->s));
	self->s.op = KCOLL_OP_ALLREDUCE;
	self->s.dtype = KCOLL_FP32;
	self->s.redop = KCOLL_SUM;
	self->s.count = 16;
	self->s.send.addr = (uintptr_t)self->buf;
	self->s.recv.addr = (uintptr_t)(self->buf + 1024);
	self->pinned = foll_pinned();
}

FIXTURE_TEARDOWN(one)
{
	close(self->fd);
	munmap(self->buf, 4096 * sizeof(float));
}

/*
 * After the refusals: nothing pinned is left behind, no completion was
 * queued, and a good operation still runs (its op_id is the first).
 */
static void still_usable(struct __test_metadata *_metadata, FIXTURE_DATA(one) *self)
{
	struct kcoll_submit s;
	struct kcoll_completion cpl;
	int i;

	EXPECT_GE(self->pinned, foll_pinned_settle(self->pinned, 2000));
	for (i = 0; i < 16; i++)
		self->buf[i] = (float)i + 0.5f;
	memset(&s, 0, sizeof(s));
	s.op = KCOLL_OP_ALLREDUCE;
	s.dtype = KCOLL_FP32;
	s.redop = KCOLL_SUM;
	s.count = 16;
	s.cookie = 4242;
	s.send.addr = (uintptr_t)self->buf;
	s.recv.addr = (uintptr_t)(self->buf + 2048);
	ASSERT_EQ(0, submit(self->fd, &s)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(1, s.op_id);
	ASSERT_EQ(0, wait_one(self->fd, &cpl));
	EXPECT_EQ(4242, cpl.cookie);
	for (i = 0; i < 16; i++)
		EXPECT_EQ((float)i + 0.5f, self->buf[2048 + i]);
}

#define SUBMIT_FAILS(err) do {							\
	EXPECT_EQ(-1, submit(self->fd, &self->s));				\
	EXPECT_EQ(err, errno);							\
} while (0)

TEST_F(one, submit_unknown_op_is_einval)
{
	self->s.op = KCOLL_OP_COUNT;
	SUBMIT_FAILS(EINVAL);
	self->s.op = ~0u;
	SUBMIT_FAILS(EINVAL);
	still_usable(_metadata, self);
}

TEST_F(one, submit_unknown_dtype_is_einval)
{
	self->s.dtype = KCOLL_DTYPE_COUNT;
	SUBMIT_FAILS(EINVAL);
	self->s.dtype = 77;
	SUBMIT_FAILS(EINVAL);
	still_usable(_metadata, self);
}

TEST_F(one, submit_unknown_redop_is_einval)
{
	self->s.redop = KCOLL_REDOP_COUNT;
	SUBMIT_FAILS(EINVAL);
	self->s.op = KCOLL_OP_REDUCE;
	self->s.redop = 42;
	SUBMIT_FAILS(EINVAL);
	still_usable(_metadata, self);
}

TEST_F(one, submit_root_out_of_range_is_einval)
{
	static const __u32 rooted[] = {
		KCOLL_OP_BROADCAST, KCOLL_OP_REDUCE, KCOLL_OP_SCATTER, KCOLL_OP_GATHER,
	};
	size_t i;

	for (i = 0; i < sizeof(rooted) / sizeof(rooted[0]); i++) {
		self->s.op = rooted[i];
		self->s.root = 1;
		SUBMIT_FAILS(EINVAL);
		self->s.root = ~0u;
		SUBMIT_FAILS(EINVAL);
	}
	still_usable(_metadata, self);
}

TEST_F(one, submit_nonzero_flags_is_einval)
{
	self->s.flags = 8;
	SUBMIT_FAILS(EINVAL);
	still_usable(_metadata, self);
}

TEST_F(one, submit_count_overflowing_bytes_is_eoverflow)
{
	self->s.count = 1ULL << 62;		/* * 4 bytes overflows */
	SUBMIT_FAILS(EOVERFLOW);
	self->s.count = ~0ULL;
	SUBMIT_FAILS(EOVERFLOW);
	self->s.dtype = KCOLL_FP64;
	self->s.count = 1ULL << 61;
	SUBMIT_FAILS(EOVERFLOW);
	still_usable(_metadata, self);
}

TEST_F(one, submit_null_buffer_is_efault)
{
	self->s.send.addr = 0;
	SUBMIT_FAILS(EFAULT);
	self->s.send.addr = (uintptr_t)self->buf;
	self->s.recv.addr = 0;
	SUBMIT_FAILS(EFAULT);
	still_usable(_metadata, self);
}

TEST_F(one, submit_unmapped_buffer_is_efault)
{
	void *p = map_buf(1 << 16);

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, munmap(p, 1 << 16));
	self->s.recv.addr = (uintptr_t)p;	/* the send buffer is pinned first */
	SUBMIT_FAILS(EFAULT);
	self->s.send.addr = (uintptr_t)p;
	self->s.recv.addr = (uintptr_t)self->buf;
	SUBMIT_FAILS(EFAULT);
	/* Kernel addresses are no user memory either. */
	self->s.send.addr = 0xffff888000000000ULL;
	SUBMIT_FAILS(EFAULT);
	still_usable(_metadata, self);
}

TEST_F(one, submit_buffer_shorter_than_count_is_efault)
{
	/* 4 KiB mapped, 16 KiB asked for: the rest is unmapped. */
	char *p = map_buf(8192);

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, munmap(p + 4096, 4096));
	self->s.count = 4096;
	/* In place: a second buffer could lie next to it and overlap. */
	self->s.send.addr = (uintptr_t)p;
	self->s.recv.addr = (uintptr_t)p;
	SUBMIT_FAILS(EFAULT);
	munmap(p, 4096);
	still_usable(_metadata, self);
}

TEST_F(one, submit_readonly_receive_buffer_is_efault)
{
	float *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, ro);
	self->s.recv.addr = (uintptr_t)ro;
	SUBMIT_FAILS(EFAULT);
	munmap(ro, 4096);
	still_usable(_metadata, self);
}

TEST_F(one, submit_overlapping_not_in_place_is_einval)
{
	/* One element apart: neither the same buffer nor disjoint. */
	self->s.recv.addr = (uintptr_t)(self->buf + 1);
	SUBMIT_FAILS(EINVAL);
	self->s.recv.addr = (uintptr_t)(self->buf + 15);
	SUBMIT_FAILS(EINVAL);
	/* AllGather in place is send = recv + rank * count; one more is not. */
	self->s.op = KCOLL_OP_ALLGATHER;
	self->s.recv.addr = (uintptr_t)self->buf;
	self->s.send.addr = (uintptr_t)(self->buf + 1);
	SUBMIT_FAILS(EINVAL);
	/* Through a registration: the same memory, handle and offsets. */
	self->s.op = KCOLL_OP_ALLREDUCE;
	self->s.send.handle = reg_buf(self->fd, self->buf, 4096);
	ASSERT_NE(0, self->s.send.handle);
	self->s.recv.handle = self->s.send.handle;
	self->s.send.addr = 0;
	self->s.recv.addr = 8;
	SUBMIT_FAILS(EINVAL);
	self->pinned = foll_pinned();		/* the registration stays pinned */
	still_usable(_metadata, self);
}

TEST_F(one, submit_unknown_handle_is_enoent)
{
	self->s.send.handle = 12345;
	SUBMIT_FAILS(ENOENT);
	self->s.send.handle = 1ULL << 40;
	SUBMIT_FAILS(ENOENT);
	self->s.send.handle = 0;
	self->s.recv.handle = 1;		/* none registered yet */
	self->s.recv.addr = 0;
	SUBMIT_FAILS(ENOENT);
	still_usable(_metadata, self);
}

TEST_F(one, submit_beyond_registration_is_erange)
{
	__u64 h = reg_buf(self->fd, self->buf + 1024, 4096);

	ASSERT_NE(0, h);
	self->pinned = foll_pinned();
	self->s.recv.handle = h;
	self->s.recv.addr = 4096 - 16 * sizeof(float) + 4;	/* 4 bytes too far */
	SUBMIT_FAILS(ERANGE);
	self->s.recv.addr = 1ULL << 40;
	SUBMIT_FAILS(ERANGE);
	self->s.recv.addr = 0;
	self->s.count = 1025;			/* one element more than registered */
	SUBMIT_FAILS(ERANGE);
	still_usable(_metadata, self);
}

TEST_F(one, submit_handle_of_another_file_is_enoent)
{
	int other = kc_open(_metadata);
	__u64 h[3];
	int i;

	/* Three handles there, none here: handle numbers are per file. */
	for (i = 0; i < 3; i++) {
		h[i] = reg_buf(other, self->buf + 2048, 4096);
		ASSERT_NE(0, h[i]);
	}
	self->s.recv.handle = h[2];
	self->s.recv.addr = 0;
	SUBMIT_FAILS(ENOENT);
	close(other);
	still_usable(_metadata, self);
}

TEST_F(one, submit_alltoallv_bad_count_arrays)
{
	__u64 counts[1] = { 16 }, displs[1] = { 0 };
	void *p = map_buf(4096);

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, munmap(p, 4096));
	self->s.op = KCOLL_OP_ALLTOALLV;
	SUBMIT_FAILS(EINVAL);			/* no arrays */
	self->s.scounts = (uintptr_t)counts;
	self->s.sdispls = (uintptr_t)displs;
	self->s.rcounts = (uintptr_t)counts;
	self->s.rdispls = (uintptr_t)p;		/* unmapped */
	SUBMIT_FAILS(EFAULT);
	still_usable(_metadata, self);
}

/* A page of @len bytes holding a copy of @src, then made read-only. */
static void *ro_copy(const void *src, size_t len)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, src, len);
	if (mprotect(p, 4096, PROT_READ)) {
		munmap(p, 4096);
		return NULL;
	}
	return p;
}

TEST_F(one, submit_struct_in_readonly_memory_is_efault_nothing_runs)
{
	struct kcoll_completion cpl[2] = {};
	struct kcoll_reap r = { .size = sizeof(r), .entries = (uintptr_t)cpl, .max = 2,
				.entry_size = sizeof(cpl[0]) };
	struct kcoll_submit *ro;

	self->s.size = sizeof(self->s);
	ro = ro_copy(&self->s, sizeof(self->s));
	ASSERT_NE(NULL, ro);
	/* Readable, so it is read; its op_id cannot be written. */
	EXPECT_EQ(-1, ioctl(self->fd, KCOLL_IOC_SUBMIT, ro));
	EXPECT_EQ(EFAULT, errno);
	/* No operation ran: no completion now or later. */
	sleep_ms(200);
	EXPECT_EQ(0, ioctl(self->fd, KCOLL_IOC_REAP, &r));
	EXPECT_EQ(0, r.count) TH_LOG("the refused operation ran (op_id %llu)",
				     (unsigned long long)cpl[0].op_id);
	munmap(ro, 4096);
	still_usable(_metadata, self);
}

TEST_F(one, submit_refused_keeps_callers_op_id)
{
	self->s.op_id = 0x1234;
	self->s.dtype = 77;
	SUBMIT_FAILS(EINVAL);
	EXPECT_EQ(0x1234, self->s.op_id);
	self->s.dtype = KCOLL_FP32;
	self->s.recv.handle = 99;
	SUBMIT_FAILS(ENOENT);
	EXPECT_EQ(0x1234, self->s.op_id);
	still_usable(_metadata, self);
}

TEST_F(one, abort_then_submit_is_ecanceled)
{
	struct kcoll_abort a = { .size = sizeof(a) };

	a.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, KCOLL_IOC_ABORT, &a));
	EXPECT_EQ(EINVAL, errno);
	/* The refused abort changed nothing. */
	still_usable(_metadata, self);
	a.flags = 0;
	ASSERT_EQ(0, ioctl(self->fd, KCOLL_IOC_ABORT, &a));
	SUBMIT_FAILS(ECANCELED);
}

/* ------------------------------------------------------------ reap */

TEST_F(one, reap_bad_arguments_are_einval)
{
	struct kcoll_completion cpl[2];
	struct kcoll_reap r = { .size = sizeof(r), .entries = (uintptr_t)cpl, .max = 2,
				.entry_size = sizeof(cpl[0]) };
	struct kcoll_reap bad;

	bad = r;
	bad.max = 0;
	EXPECT_EQ(-1, ioctl(self->fd, KCOLL_IOC_REAP, &bad));
	EXPECT_EQ(EINVAL, errno);
	bad = r;
	bad.entry_size = sizeof(cpl[0]) - 8;
	EXPECT_EQ(-1, ioctl(self->fd, KCOLL_IOC_REAP, &bad));
	EXPECT_EQ(EINVAL, errno);
	bad = r;
	bad.entries = 0;
	EXPECT_EQ(-1, ioctl(self->fd, KCOLL_IOC_REAP, &bad));
	EXPECT_EQ(EINVAL, errno);
	bad = r;
	bad.flags = 0x80;
	EXPECT_EQ(-1, ioctl(self->fd, KCOLL_IOC_REAP, &bad));
	EXPECT_EQ(EINVAL, errno);
	bad = r;
	bad.entries = 0xffff888000000000ULL;
	EXPECT_EQ(-1, ioctl(self->fd, KCOLL_IOC_REAP, &bad));
	EXPECT_EQ(EFAULT, errno);
	/* Nothing outstanding: no wait, or ENOENT when asked to wait. */
	EXPECT_EQ(0, ioctl(self->fd, KCOLL_IOC_REAP, &r));
	EXPECT_EQ(0, r.count);
	r.flags = KCOLL_REAP_WAIT;
	EXPECT_EQ(-1, ioctl(self->fd, KCOLL_IOC_REAP, &r));
	EXPECT_EQ(ENOENT, errno);
	still_usable(_metadata, self);
}

/* A one-rank communicator whose completions signal an eventfd. */
FIXTURE(ev) {
	int fd, efd;
	float *buf;
};

FIXTURE_SETUP(ev)
{
	struct cluster c;

	self->fd = kc_open(_metadata);
	self->efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, self->efd);
	cluster_single(&c, PORT);
	ASSERT_EQ(0, comm_create(self->fd, &c, self->efd, NULL));
	self->buf = map_buf(4096);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(ev)
{
	close(self->fd);
	close(self->efd);
	munmap(self->buf, 4096);
}

/* Submit @n AllReduces (cookie 100 + i) and wait until all completed. */
static void submit_n(struct __test_metadata *_metadata, FIXTURE_DATA(ev) *self, unsigned int n)
{
	struct kcoll_submit s;
	unsigned int i;
	__u64 done = 0, v;

	for (i = 0; i < n; i++) {
		memset(&s, 0, sizeof(s));
		s.op = KCOLL_OP_ALLREDUCE;
		s.dtype = KCOLL_FP32;
		s.count = 16;
		s.cookie = 100 + i;
		s.send.addr = (uintptr_t)self->buf;
		s.recv.addr = (uintptr_t)(self->buf + 512);
		ASSERT_EQ(0, submit(self->fd, &s)) TH_LOG("%s", strerror(errno));
	}
	while (done < n) {
		ASSERT_EQ(sizeof(v), read(self->efd, &v, sizeof(v)));
		done += v;
	}
}

TEST_F(ev, reap_into_unwritable_memory_is_efault_nothing_lost)
{
	struct kcoll_completion ok[4], *ro;
	struct kcoll_reap r = { .size = sizeof(r), .max = 2, .entry_size = sizeof(ok[0]) };
	struct kcoll_reap *rro;
	char *two;

	memset(ok, 0, sizeof(ok));
	submit_n(_metadata, self, 2);
	/* Entries in read-only memory. */
	ro = ro_copy(ok, sizeof(ok));
	ASSERT_NE(NULL, ro);
	r.entries = (uintptr_t)ro;
	EXPECT_EQ(-1, ioctl(self->fd, KCOLL_IOC_REAP, &r));
	EXPECT_EQ(EFAULT, errno);
	/* The first entry writable, the second read-only. */
	two = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, two);
	ASSERT_EQ(0, mprotect(two + 4096, 4096, PROT_READ));
	r.entries = (uintptr_t)(two + 4096 - sizeof(ok[0]));
	EXPECT_EQ(-1, ioctl(self->fd, KCOLL_IOC_REAP, &r));
	EXPECT_EQ(EFAULT, errno);
	/* Good entries, but the count cannot be written. */
	r.entries = (uintptr_t)ok;
	rro = ro_copy(&r, sizeof(r));
	ASSERT_NE(NULL, rro);
	EXPECT_EQ(-1, ioctl(self->fd, KCOLL_IOC_REAP, rro));
	EXPECT_EQ(EFAULT, errno);
	/* Both completions are still there, in order. */
	r.max = 4;
	ASSERT_EQ(0, ioctl(self->fd, KCOLL_IOC_REAP, &r));
	ASSERT_EQ(2, r.count) TH_LOG("%u of 2 completions lost", 2 - r.count);
	EXPECT_EQ(1, ok[0].op_id);
	EXPECT_EQ(100, ok[0].cookie);
	EXPECT_EQ(2, ok[1].op_id);
	EXPECT_EQ(101, ok[1].cookie);
	EXPECT_EQ(0, ok[0].status);
	EXPECT_EQ(0, ioctl(self->fd, KCOLL_IOC_REAP, &r));
	EXPECT_EQ(0, r.count);
	munmap(ro, 4096);
	munmap(rro, 4096);
	munmap(two, 8192);
}

#define REAPERS 4
#define REAP_OPS 1000

struct reaper {
	int fd;
	unsigned char *seen;	/* REAP_OPS + 1, by op_id */
	int err;
};

static void *reaper_main(void *arg)
{
	struct reaper *rp = arg;
	struct kcoll_completion c[3];
	struct kcoll_reap r = { .size = sizeof(r), .entries = (uintptr_t)c, .max = 3,
				.entry_size = sizeof(c[0]) };
	__u32 i;

	for (;;) {
		if (ioctl(rp->fd, KCOLL_IOC_REAP, &r)) {
			rp->err = errno;
			return NULL;
		}
		if (!r.count)
			return NULL;
		for (i = 0; i < r.count; i++) {
			if (c[i].op_id < 1 || c[i].op_id > REAP_OPS)
				rp->err = ERANGE;
			else
				__atomic_fetch_add(&rp->seen[c[i].op_id], 1, __ATOMIC_RELAXED);
		}
	}
}

TEST_F(ev, concurrent_reapers_get_each_completion_once)
{
	static unsigned char seen[REAP_OPS + 1];
	struct reaper rp[REAPERS];
	pthread_t t[REAPERS];
	unsigned int i, missing = 0, twice = 0;

	submit_n(_metadata, self, REAP_OPS);
	for (i = 0; i < REAPERS; i++) {
		rp[i] = (struct reaper){ .fd = self->fd, .seen = seen };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, reaper_main, &rp[i]));
	}
	for (i = 0; i < REAPERS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, rp[i].err) TH_LOG("reaper %u: %s", i, strerror(rp[i].err));
	}
	for (i = 1; i <= REAP_OPS; i++) {
		missing += !seen[i];
		twice += seen[i] > 1;
	}
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, twice);
}

/* ------------------------------------------------ read-only buffers */

/* @n floats i + 0.5, in a mapping then made read-only. */
static float *ro_floats(size_t n)
{
	size_t len = (n * sizeof(float) + 4095) & ~(size_t)4095, i;
	float *p = map_buf(len);

	if (!p)
		return NULL;
	for (i = 0; i < n; i++)
		p[i] = (float)i + 0.5f;
	if (mprotect(p, len, PROT_READ)) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

TEST_F(one, submit_readonly_send_buffer_works_in_place_is_efault)
{
	float *ro = ro_floats(4096);
	struct kcoll_completion cpl;
	int i;

	ASSERT_NE(NULL, ro);
	self->s.count = 4096;
	self->s.send.addr = (uintptr_t)ro;
	self->s.recv.addr = (uintptr_t)self->buf;
	ASSERT_EQ(0, submit(self->fd, &self->s)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, wait_one(self->fd, &cpl));
	for (i = 0; i < 4096; i++)
		ASSERT_EQ((float)i + 0.5f, self->buf[i]) TH_LOG("element %d", i);
	/* In place, the send buffer is written. */
	self->s.recv.addr = (uintptr_t)ro;
	SUBMIT_FAILS(EFAULT);
	/* ReduceScatter in place writes its send buffer too. */
	self->s.op = KCOLL_OP_REDUCESCATTER;
	self->s.count = 16;
	SUBMIT_FAILS(EFAULT);
	munmap(ro, 4096 * sizeof(float));
	EXPECT_GE(self->pinned, foll_pinned_settle(self->pinned, 2000));
	memset(self->buf, 0, 4096 * sizeof(float));
	/* The refusals used no id: the next operation is the second. */
	self->s.op = KCOLL_OP_ALLREDUCE;
	self->s.send.addr = (uintptr_t)self->buf;
	self->s.recv.addr = (uintptr_t)(self->buf + 1024);
	ASSERT_EQ(0, submit(self->fd, &self->s));
	EXPECT_EQ(2, self->s.op_id);
	ASSERT_EQ(0, wait_one(self->fd, &cpl));
}

static __u64 reg_flags(int fd, void *p, size_t len, __u32 flags)
{
	struct kcoll_mem_reg reg = { .size = sizeof(reg), .flags = flags, .addr = (uintptr_t)p,
				     .len = len };

	return ioctl(fd, KCOLL_IOC_MEM_REG, &reg) ? 0 : reg.handle;
}

TEST_F(one, register_rdonly_serves_as_send_efault_as_receive)
{
	float *ro = ro_floats(1024), *late = map_buf(4096);
	struct kcoll_mem_dereg dr = { .size = sizeof(dr) };
	struct kcoll_completion cpl;
	__u64 h, hl;
	int i;

	ASSERT_NE(NULL, ro);
	ASSERT_NE(NULL, late);
	/* Read-only memory: only as a read-only registration. */
	EXPECT_EQ(0, reg_flags(self->fd, ro, 4096, 0));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0, reg_flags(self->fd, ro, 4096, ~KCOLL_MEM_REG_RDONLY));
	EXPECT_EQ(EINVAL, errno);
	h = reg_flags(self->fd, ro, 4096, KCOLL_MEM_REG_RDONLY);
	ASSERT_NE(0, h) TH_LOG("%s", strerror(errno));
	/* Memory registered read-only before it is written: the writes count. */
	hl = reg_flags(self->fd, late, 4096, KCOLL_MEM_REG_RDONLY);
	ASSERT_NE(0, hl) TH_LOG("%s", strerror(errno));
	for (i = 0; i < 1024; i++)
		late[i] = (float)(3 * i);

	self->s.count = 1024;
	self->s.send.handle = h;
	self->s.send.addr = 0;
	self->s.recv.addr = (uintptr_t)self->buf;
	ASSERT_EQ(0, submit(self->fd, &self->s)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, wait_one(self->fd, &cpl));
	for (i = 0; i < 1024; i++)
		ASSERT_EQ((float)i + 0.5f, self->buf[i]) TH_LOG("element %d", i);
	self->s.send.handle = hl;
	ASSERT_EQ(0, submit(self->fd, &self->s)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, wait_one(self->fd, &cpl));
	for (i = 0; i < 1024; i++)
		ASSERT_EQ((float)(3 * i), self->buf[i]) TH_LOG("element %d", i);

	/* As a receive buffer, or in place: EFAULT, and no id used. */
	self->s.send.handle = 0;
	self->s.send.addr = (uintptr_t)self->buf;
	self->s.recv.handle = hl;
	self->s.recv.addr = 0;
	SUBMIT_FAILS(EFAULT);
	self->s.send.handle = hl;
	self->s.send.addr = 0;
	SUBMIT_FAILS(EFAULT);
	self->s.recv.handle = 0;
	self->s.recv.addr = (uintptr_t)self->buf;
	ASSERT_EQ(0, submit(self->fd, &self->s));
	EXPECT_EQ(3, self->s.op_id);
	ASSERT_EQ(0, wait_one(self->fd, &cpl));

	dr.handle = h;
	EXPECT_EQ(0, ioctl(self->fd, KCOLL_IOC_MEM_DEREG, &dr));
	dr.handle = hl;
	EXPECT_EQ(0, ioctl(self->fd, KCOLL_IOC_MEM_DEREG, &dr));
	EXPECT_GE(self->pinned, foll_pinned_settle(self->pinned, 2000));
	munmap(ro, 4096);
	munmap(late, 4096);
}

/* ------------------------------------------------------- registration */

TEST(register_bad_arguments)
{
	struct kcoll_mem_reg reg = { .size = sizeof(reg) };
	struct kcoll_info info = { .size = sizeof(info) };
	size_t len = 1 << 20;
	void *p = map_buf(len);
	int fd = kc_open(_metadata);
	long long pinned = foll_pinned();

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_INFO, &info));
	reg.addr = (uintptr_t)p;
	reg.len = 0;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_REG, &reg));
	EXPECT_EQ(EINVAL, errno);
	reg.len = info.max_reg_bytes + 1;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_REG, &reg));
	EXPECT_EQ(EINVAL, errno);
	reg.len = len;
	reg.flags = 2;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_REG, &reg));
	EXPECT_EQ(EINVAL, errno);
	reg.flags = 0;
	reg.addr = 0xffff800000000000ULL;	/* kernel half */
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_REG, &reg));
	EXPECT_EQ(EFAULT, errno);
	reg.addr = ~0ULL - 4096;		/* wraps around */
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_REG, &reg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, reg.handle);
	EXPECT_GE(pinned, foll_pinned_settle(pinned, 2000));
	reg.addr = (uintptr_t)p;
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_MEM_REG, &reg));
	EXPECT_NE(0, reg.handle);
	EXPECT_LT(pinned, foll_pinned());	/* (other pins come and go) */
	close(fd);
	EXPECT_GE(pinned, foll_pinned_settle(pinned, 2000));
	munmap(p, len);
}

TEST(register_unmapped_or_readonly_is_efault_nothing_pinned)
{
	struct kcoll_mem_reg reg = { .size = sizeof(reg) };
	char *p = map_buf(1 << 20), *ro;
	int fd = kc_open(_metadata);
	long long pinned = foll_pinned();

	ASSERT_NE(NULL, p);
	/* Half mapped: the first half gets pinned, then must be let go. */
	ASSERT_EQ(0, munmap(p + (1 << 19), 1 << 19));
	memset(p, 1, 1 << 19);
	reg.addr = (uintptr_t)p;
	reg.len = 1 << 20;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_REG, &reg));
	EXPECT_EQ(EFAULT, errno);
	ro = mmap(NULL, 1 << 16, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	reg.addr = (uintptr_t)ro;
	reg.len = 1 << 16;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_REG, &reg));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_GE(pinned, foll_pinned_settle(pinned, 2000));
	close(fd);
	munmap(ro, 1 << 16);
	munmap(p, 1 << 19);
}

TEST(deregister_unknown_twice_or_foreign_is_enoent)
{
	struct kcoll_mem_dereg dr = { .size = sizeof(dr) };
	size_t len = 1 << 16;
	void *p = map_buf(len);
	int fd = kc_open(_metadata);
	int other = kc_open(_metadata);
	long long pinned = foll_pinned();
	__u64 h;

	ASSERT_NE(NULL, p);
	h = reg_buf(fd, p, len);
	ASSERT_NE(0, h);
	dr.handle = 0;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_DEREG, &dr));
	EXPECT_EQ(ENOENT, errno);
	dr.handle = h + 1000;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_DEREG, &dr));
	EXPECT_EQ(ENOENT, errno);
	dr.handle = 1ULL << 33;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_DEREG, &dr));
	EXPECT_EQ(ENOENT, errno);
	/* Another file does not know this handle. */
	dr.handle = h;
	EXPECT_EQ(-1, ioctl(other, KCOLL_IOC_MEM_DEREG, &dr));
	EXPECT_EQ(ENOENT, errno);
	dr.flags = 1;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_DEREG, &dr));
	EXPECT_EQ(EINVAL, errno);
	dr.flags = 0;
	EXPECT_EQ(0, ioctl(fd, KCOLL_IOC_MEM_DEREG, &dr));
	EXPECT_GE(pinned, foll_pinned_settle(pinned, 2000));
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_DEREG, &dr));
	EXPECT_EQ(ENOENT, errno);
	close(other);
	close(fd);
	munmap(p, len);
}

/* ------------------------------------------------------------ sysfs */

static int sysfs_read(const char *name, char *buf, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), KC_SYSFS "%s", name);
	return kc_file_read(path, buf, len);
}

/* Write @val to tunable @name; returns 0 or the errno of the write. */
static int sysfs_write(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), KC_SYSFS "%s", name);
	return kc_file_write(path, val);
}

static void sysfs_refuses(struct __test_metadata *_metadata, const char *name,
			  const char *const *bad, size_t nbad)
{
	char before[KCOLL_ALGO_STR_MAX + 8], after[KCOLL_ALGO_STR_MAX + 8];
	size_t i;

	if (geteuid() != 0)
		SKIP(return, "writing sysfs needs root");
	ASSERT_EQ(0, sysfs_read(name, before, sizeof(before))) TH_LOG("%s", name);
	for (i = 0; i < nbad; i++) {
		EXPECT_EQ(EINVAL, sysfs_write(name, bad[i])) TH_LOG("%s <- \"%s\"", name, bad[i]);
		ASSERT_EQ(0, sysfs_read(name, after, sizeof(after)));
		EXPECT_STREQ(before, after) TH_LOG("%s <- \"%s\"", name, bad[i]);
	}
}

TEST(sysfs_malformed_algo_is_einval_old_value_kept)
{
	static const char *const bad[] = {
		"level1:no-such-algorithm", "level9:ring", "level1", "AllReduce=",
		"allreduce=level1:ring/bogus=level1:NB", "level0:ring;;", "\x01",
	};

	sysfs_refuses(_metadata, "algo", bad, sizeof(bad) / sizeof(bad[0]));
}

TEST(sysfs_absurd_chunk_bytes_is_einval)
{
	static const char *const bad[] = {
		"0", "3", "4097", "4095", "122888", "126976", "126984", "262144", "1048576",
		"1048584",
		"4294967295", "4294967296",
		"99999999999999999999", "-1", "abc", "0x", "65536 junk",
	};

	sysfs_refuses(_metadata, "chunk_bytes", bad, sizeof(bad) / sizeof(bad[0]));
}

TEST(sysfs_absurd_slots_is_einval)
{
	static const char *const bad[] = { "0", "65", "4294967295", "4294967296", "-8", "x" };

	sysfs_refuses(_metadata, "slots", bad, sizeof(bad) / sizeof(bad[0]));
}

TEST(sysfs_absurd_timeouts_are_einval)
{
	static const char *const bad[] = {
		"0", "9", "3600001", "4294967295", "4294967296", "-1", "1e3", "\n",
	};

	sysfs_refuses(_metadata, "timeout_ms", bad, sizeof(bad) / sizeof(bad[0]));
	sysfs_refuses(_metadata, "connect_timeout_ms", bad, sizeof(bad) / sizeof(bad[0]));
}

KC_HARNESS_MAIN
