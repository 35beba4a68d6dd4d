// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: what a user can put into the kernel log and see
 * through the generic netlink family.
 *
 *  - An HCCL_ALGO string is the caller's: one with "\nBUG: fake" in it
 *    leaves no line of the log (as dmesg shows it, record by record from
 *    /dev/kmsg, newlines decoded) that starts with "BUG: fake".
 *  - 500 failed creations in a row (a bad algorithm string, port,
 *    address family, topology) add at most a handful of kcoll lines.
 *  - A user sees its own communicators in a dump and by id; another
 *    user's are not in its dump and are ENOENT by id; it may not join
 *    the events group, and collctl monitor says why.  Root sees both.
 *
 * One-rank communicators on the loopback address (no peer, no RDMA
 * traffic): every rank of the cluster may run this at the same time.
 * Needs root (/dev/kmsg, setuid).  Skips (exit 4) without /dev/kcoll.
 */
#include <libgen.h>
#include <sys/wait.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"
#include "uapi/linux/kcoll_genl.h"

#define PORT 17330
#define UID_USER 65534

/* A one-rank communicator on @fd; its id, or 0 with errno set. */
static __u64 create1(int fd, const char *algo, unsigned int port)
{
	struct cluster c;
	struct kcoll_comm_create cc = {
		.size = sizeof(cc), .nranks = 1, .rank_size = sizeof(struct kcoll_rank),
		.eventfd = -1, .algo = (uintptr_t)algo,
	};

	cluster_single(&c, port);
	cc.ranks = (uintptr_t)c.ranks;
	return ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc) ? 0 : cc.comm_id;
}

/* --------------------------------------------------------- kernel log */

/*
 * Every record since kc_kmsg_open(), its text unescaped (/dev/kmsg writes
 * a newline inside a record as \x0a), and so split into the lines dmesg
 * shows; @fn sees each line.  Returns the number of records.
 */
static int kmsg_lines(int fd, void (*fn)(const char *line, void *arg), void *arg)
{
	char rec[8192], text[8192];
	int records = 0;
	ssize_t n;

	for (;;) {
		char *p, *end, *o = text;

		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten meanwhile: go on from the oldest */
		if (n <= 0)
			break;
		rec[n] = 0;
		records++;
		p = strchr(rec, ';');
		if (!p)
			continue;
		end = strchr(++p, '\n');
		if (end)
			*end = 0;
		for (; *p; p++) {
			unsigned int c;

			if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &c) == 1) {
				*o++ = (char)c;
				p += 3;
			} else {
				*o++ = *p;
			}
		}
		*o = 0;
		for (p = strtok(text, "\n"); p; p = strtok(NULL, "\n"))
			fn(p, arg);
	}
	return records;
}

struct log_scan {
	int fake;		/* lines that start with "BUG: fake" */
	int kcoll;		/* lines that name kcoll */
	char first_fake[256];
};

static void scan_line(const char *line, void *arg)
{
	struct log_scan *s = arg;

	if (!strncmp(line, "BUG: fake", 9) && !s->fake++)
		snprintf(s->first_fake, sizeof(s->first_fake), "%s", line);
	if (strstr(line, "kcoll"))
		s->kcoll++;
}

TEST(algo_string_cannot_forge_a_log_line)
{
	static const char *const algos[] = {
		"\nBUG: fake", "level1:ring\nBUG: fake", "level1:ring;\r\nBUG: fake oops",
		"allreduce=level1:ring/\nBUG: fake\n",
	};
	struct log_scan s = {};
	int fd, kmsg;
	size_t i;

	kmsg = kc_kmsg_open();
	if (kmsg < 0)
		SKIP(return, "/dev/kmsg: %s (needs root)", strerror(errno));
	fd = kc_open(_metadata);
	for (i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
		EXPECT_EQ(0, create1(fd, algos[i], PORT));
		EXPECT_EQ(EINVAL, errno);
	}
	close(fd);
	kmsg_lines(kmsg, scan_line, &s);
	close(kmsg);
	EXPECT_EQ(0, s.fake) TH_LOG("forged: \"%s\"", s.first_fake);
}

TEST(failed_creates_add_a_bounded_number_of_lines)
{
	struct kcoll_rank r[3];
	struct log_scan s = {};
	int fd, kmsg, i, records, refused = 0;

	kmsg = kc_kmsg_open();
	if (kmsg < 0)
		SKIP(return, "/dev/kmsg: %s (needs root)", strerror(errno));
	fd = kc_open(_metadata);
	/*
	 * Past the rate limit's interval (5 s) since what earlier tests
	 * logged: the first refusals are logged, so some lines must come.
	 */
	sleep_ms(6000);
	for (i = 0; i < 500; i++) {
		struct kcoll_comm_create cc = {
			.size = sizeof(cc), .nranks = 1, .ranks = (uintptr_t)r,
			.rank_size = sizeof(r[0]), .eventfd = -1,
		};
		unsigned int k;

		memset(r, 0, sizeof(r));
		for (k = 0; k < 3; k++) {
			r[k].family = KCOLL_AF_INET;
			r[k].port = PORT + 1 + k;
			inet_pton(AF_INET, "127.0.0.1", r[k].addr);
		}
		switch (i % 4) {
		case 0:		/* HCCL_ALGO the parser refuses */
			cc.algo = (uintptr_t)"level1:no-such-algorithm";
			break;
		case 1:		/* port out of range */
			r[0].port = 70000;
			break;
		case 2:		/* unknown address family */
			r[0].family = 77;
			break;
		case 3:		/* a server's ranks not contiguous */
			cc.nranks = 3;
			r[1].server_id = 1;
			break;
		}
		if (ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc) && errno == EINVAL)
			refused++;
	}
	close(fd);
	records = kmsg_lines(kmsg, scan_line, &s);
	close(kmsg);
	EXPECT_EQ(500, refused);
	TH_LOG("%d records, %d kcoll lines", records, s.kcoll);
	EXPECT_LE(1, s.kcoll);
	EXPECT_LE(s.kcoll, 20);
}

/* ------------------------------------------------------ generic netlink */

struct nl_ids {
	__u64 ids[256];
	int n;
	int kerr;		/* the kernel's errno from an NLMSG_ERROR, negative */
};

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nl_ids *l = arg;

	(void)nla;
	l->kerr = e->error;
	return NL_STOP;
}

static int on_comm(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[KCOLL_A_MAX + 1];
	struct nl_ids *l = arg;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, KCOLL_A_MAX, NULL) || !tb[KCOLL_A_COMM_ID])
		return NL_SKIP;
	if (l->n < (int)(sizeof(l->ids) / sizeof(l->ids[0])))
		l->ids[l->n++] = nla_get_u64(tb[KCOLL_A_COMM_ID]);
	return NL_OK;
}

/* A socket on the family; its id and the events group's, resolved first. */
static struct nl_sock *nl_kcoll(int *family, int *events)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk)
		return NULL;
	if (genl_connect(sk) || (*family = genl_ctrl_resolve(sk, KCOLL_GENL_NAME)) < 0 ||
	    (*events = genl_ctrl_resolve_grp(sk, KCOLL_GENL_NAME,
					     KCOLL_GENL_MCGRP_EVENTS)) < 0) {
		nl_socket_free(sk);
		return NULL;
	}
	/* Replies only: an ACK left over would answer the next request. */
	nl_socket_disable_auto_ack(sk);
	return sk;
}

/*
 * KCOLL_CMD_COMM_GET: a dump (@id 0) or one; 0, the kernel's negative
 * errno, or libnl's negative error.
 */
static int nl_get(struct nl_sock *sk, int family, __u64 id, struct nl_ids *out)
{
	struct nl_msg *msg = nlmsg_alloc();
	int ret;

	if (!msg)
		return -NLE_NOMEM;
	out->n = 0;
	out->kerr = 0;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, id ? 0 : NLM_F_DUMP,
			 KCOLL_CMD_COMM_GET, KCOLL_GENL_VERSION) ||
	    (id && nla_put_u64(msg, KCOLL_A_COMM_ID, id))) {
		nlmsg_free(msg);
		return -NLE_NOMEM;
	}
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_comm, out);
	nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, on_error, out);
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return ret;
	ret = nl_recvmsgs_default(sk);
	if (out->kerr)
		return out->kerr;
	return ret < 0 ? ret : 0;
}

static bool has(const struct nl_ids *l, __u64 id)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->ids[i] == id)
			return true;
	return false;
}

/* What the unprivileged child checks; each bit a failure. */
enum {
	U_SETUP = 1, U_OWN_DUMP = 2, U_ROOT_DUMP = 4, U_OWN_GET = 8, U_ROOT_GET = 16,
	U_JOIN = 32,
};

static int user_side(__u64 root_id, int rd, int wr)
{
	struct nl_ids l;
	struct nl_sock *sk;
	int family, events, fd, bad = 0, ret;
	__u64 id;
	char c;

	if (kc_become(UID_USER, true))
		return U_SETUP;
	fd = open(KC_DEV, O_RDWR | O_CLOEXEC);
	id = fd < 0 ? 0 : create1(fd, NULL, PORT + 10);
	sk = nl_kcoll(&family, &events);
	if (!id || !sk)
		return U_SETUP;
	if (nl_get(sk, family, 0, &l) || !has(&l, id))
		bad |= U_OWN_DUMP;
	if (has(&l, root_id))
		bad |= U_ROOT_DUMP;
	if (nl_get(sk, family, id, &l) || !has(&l, id))
		bad |= U_OWN_GET;
	ret = nl_get(sk, family, root_id, &l);
	if (ret != -ENOENT || l.n) {
		fprintf(stderr, "# user: GET of root's %llu: %d, %d replies\n",
			(unsigned long long)root_id, ret, l.n);
		bad |= U_ROOT_GET;
	}
	ret = nl_socket_add_membership(sk, events);
	if (ret != -NLE_PERM) {
		fprintf(stderr, "# user: joining the events group: %s\n", nl_geterror(ret));
		bad |= U_JOIN;
	}
	nl_socket_free(sk);
	/* Tell root our id, hold the communicator until root has looked. */
	if (write(wr, &id, sizeof(id)) != sizeof(id) || read(rd, &c, 1) < 0)
		bad |= U_SETUP;
	close(fd);
	return bad;
}

TEST(netlink_user_sees_own_communicators_only)
{
	int to[2], from[2], fd, family, events, status;
	__u64 root_id, user_id = 0;
	struct nl_ids l;
	struct nl_sock *sk;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root (a second user)");
	fd = kc_open(_metadata);
	root_id = create1(fd, NULL, PORT + 11);
	ASSERT_NE(0, root_id) TH_LOG("create: %s", strerror(errno));
	ASSERT_EQ(0, pipe(to));
	ASSERT_EQ(0, pipe(from));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(to[1]);
		close(from[0]);
		_exit(user_side(root_id, to[0], from[1]));
	}
	close(to[0]);
	close(from[1]);
	EXPECT_EQ((ssize_t)sizeof(user_id), read(from[0], &user_id, sizeof(user_id)));

	/* Root (CAP_NET_ADMIN) sees both and may join the group. */
	sk = nl_kcoll(&family, &events);
	EXPECT_NE(NULL, sk);
	if (sk) {
		EXPECT_EQ(0, nl_get(sk, family, 0, &l));
		EXPECT_TRUE(has(&l, root_id));
		EXPECT_TRUE(has(&l, user_id)) TH_LOG("user's communicator %llu",
						     (unsigned long long)user_id);
		EXPECT_EQ(0, nl_get(sk, family, user_id, &l));
		EXPECT_TRUE(has(&l, user_id));
		EXPECT_EQ(0, nl_socket_add_membership(sk, events));
		nl_socket_free(sk);
	}
	close(to[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("user: %s%s%s%s%s%s", WEXITSTATUS(status) & U_SETUP ? "setup failed; " : "",
		       WEXITSTATUS(status) & U_OWN_DUMP ? "own missing from the dump; " : "",
		       WEXITSTATUS(status) & U_ROOT_DUMP ? "root's in the dump; " : "",
		       WEXITSTATUS(status) & U_OWN_GET ? "own not found by id; " : "",
		       WEXITSTATUS(status) & U_ROOT_GET ? "root's not ENOENT by id; " : "",
		       WEXITSTATUS(status) & U_JOIN ? "joined the events group" : "");
	close(from[0]);
	close(fd);
}

/* collctl next to this binary's build tree (build/bin/collctl). */
static int collctl_path(char *buf, size_t len)
{
	char self[512];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -1;
	self[n] = 0;
	/* build/obj/selftests/kcoll/kcoll_observe -> build/bin/collctl */
	snprintf(buf, len, "%s/../../../bin/collctl", dirname(self));
	return access(buf, X_OK);
}

TEST(collctl_monitor_refused_says_why)
{
	char path[600], out[1024] = "";
	int pipefd[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root (a second user)");
	if (collctl_path(path, sizeof(path)))
		SKIP(return, "no build/bin/collctl next to this test");
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(pipefd[1], 2);
		dup2(pipefd[1], 1);
		if (kc_become(UID_USER, true))
			_exit(100);
		execl(path, "collctl", "monitor", "-T", "1", (char *)NULL);
		_exit(101);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	close(pipefd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "CAP_NET_ADMIN")) TH_LOG("%s", out);
}

KC_HARNESS_MAIN
