// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_fuzz: what is not one ioctl.
 *
 * Between calls a thread sometimes changes the world the other threads'
 * calls run in: it closes a file (maybe while another thread is inside
 * an ioctl on it; the kernel keeps the file until that ioctl returns) and
 * opens another, dup()s one file into another slot, remaps, reprotects
 * or drops the pages of an area buffers live in, interrupts another
 * thread (a waiting REAP returns EINTR), forks a child that checks every
 * command on the inherited files gets EPERM (INFO excepted), or sets up a
 * two-rank communicator (kcoll_fuzz_pair.c).  None counts as a call.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kcoll_fuzz.h"

static void fz_act_reopen(struct fz_thread *t)
{
	int slot = (int)fz_below(&t->rng, FZ_NFILES);

	/* Closed only, half the time: the next call on the slot opens it. */
	fz_slot_install(t->ep, slot, fz_permille(&t->rng, 500) ? fz_open_kcoll() : -1, 0, 0, -1);
}

static void fz_act_dup(struct fz_thread *t)
{
	struct fz_epoch *ep = t->ep;
	int a = (int)fz_below(&t->rng, FZ_NFILES), b = (int)fz_below(&t->rng, FZ_NFILES);
	int fd = atomic_load(&ep->files[a].fd), nfd;

	if (fd < 0 || a == b)
		return;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd >= 0)
		fz_slot_install(ep, b, nfd, atomic_load(&ep->files[a].nranks),
				atomic_load(&ep->files[a].rank), -1);
}

static void fz_act_signal(struct fz_thread *t)
{
	unsigned int i = (unsigned int)fz_below(&t->rng, t->ep->nthreads);
	pid_t tid = atomic_load(&t->ep->ktid[i]);

	/* A thread that has exited is gone: ESRCH, nothing else. */
	if (i != t->id && tid > 0)
		tgkill(getpid(), tid, SIGUSR1);
}

/* In the forked child: the parent's files are not ours. */
static void fz_fork_child(struct fz_thread *t)
{
	const struct fz_cfg *cfg = t->ep->cfg;
	uint64_t buf[512];
	unsigned int s, i;
	struct stat st;
	int fd;
	long ret;

	for (s = 0; s < FZ_NFILES; s++) {
		fd = atomic_load(&t->ep->files[s].fd);
		/* The slot may hold a number reused by something else by now. */
		if (fd < 0 || fstat(fd, &st) || !S_ISCHR(st.st_mode) ||
		    st.st_rdev != cfg->kcoll_rdev)
			continue;
		for (i = 0; i < FZ_NCMDS; i++) {
			uint32_t size = (uint32_t)fz_cmds[i].size;

			memset(buf, 0, sizeof(buf));
			memcpy(buf, &size, sizeof(size));
			ret = ioctl(fd, fz_cmds[i].nr, buf);
			if (i == FZ_INFO && ret)
				fz_oracle_fail(t->ep->sh, "fork child: info on an inherited file: %s",
					       strerrorname_np(errno));
			if (i != FZ_INFO && (!ret || errno != EPERM))
				fz_oracle_fail(t->ep->sh,
					       "fork child: %s on an inherited file: %s, expected EPERM",
					       fz_cmds[i].name, ret ? strerrorname_np(errno) : "accepted");
		}
	}
}

static void fz_act_fork(struct fz_thread *t)
{
	pid_t pid = fork();

	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fz_fork_child(t);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

void fz_action(struct fz_thread *t)
{
	const struct fz_cfg *cfg = t->ep->cfg;
	unsigned int x = (unsigned int)fz_below(&t->rng, 1000);
	enum fz_act a;

	if (x < 450)
		a = FZ_ACT_REOPEN;
	else if (x < 550)
		a = FZ_ACT_DUP;
	else if (x < 800)
		a = FZ_ACT_CHAOS;
	else if (x < 950)
		a = FZ_ACT_SIGNAL;
	else if (x < 990)
		a = FZ_ACT_FORK;
	else if (x < 995)
		a = FZ_ACT_PAIR_THREADS;
	else
		a = FZ_ACT_PAIR_PROCS;
	if (((a == FZ_ACT_CHAOS || a == FZ_ACT_SIGNAL) && !cfg->chaos) ||
	    ((a == FZ_ACT_FORK || a == FZ_ACT_PAIR_PROCS) && !cfg->forks) ||
	    ((a == FZ_ACT_PAIR_THREADS || a == FZ_ACT_PAIR_PROCS) && !cfg->pairs))
		a = FZ_ACT_REOPEN;
	atomic_fetch_add(&t->ep->sh->acts[a], 1);
	switch (a) {
	case FZ_ACT_DUP:
		fz_act_dup(t);
		break;
	case FZ_ACT_CHAOS:
		fz_mem_chaos(&t->rng, &t->ep->mem);
		break;
	case FZ_ACT_SIGNAL:
		fz_act_signal(t);
		break;
	case FZ_ACT_FORK:
		fz_act_fork(t);
		break;
	case FZ_ACT_PAIR_THREADS:
		fz_pair_threads(t);
		break;
	case FZ_ACT_PAIR_PROCS:
		fz_pair_procs(t);
		break;
	default:
		fz_act_reopen(t);
		break;
	}
}
