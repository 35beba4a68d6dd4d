// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_fuzz: a structure-aware fuzzer of /dev/kcoll's ioctls, in the
 * spirit of syzkaller, that needs no peer: run it on each VM alone.
 *
 *   kcoll_fuzz [-n CALLS] [-s SEED] [-t SECONDS] [-j THREADS] [-p SECONDS]
 *              [--no-unpriv] [--no-fork] [--no-pairs] [--no-chaos]
 *              [--no-kill] [-v]
 *
 * The environment gives the defaults: KCOLL_FUZZ_CALLS (20000, the short
 * run of `make check`; `make fuzz` passes 10^6), KCOLL_FUZZ_SEED (from the
 * clock; printed, and KCOLL_RANK is added so the VMs of one run differ),
 * KCOLL_FUZZ_SECONDS (time budget, 120), KCOLL_FUZZ_THREADS (4).
 *
 * The calls run in epochs (kcoll_fuzz.h): child processes of a few
 * thousand calls each, some as user 65534 with a small RLIMIT_MEMLOCK,
 * some ended by SIGKILL mid-call.  Between epochs and at the end the
 * driver checks what must hold whatever the calls were:
 *  - the kernel log (/dev/kmsg) shows no WARNING, BUG, KASAN, lockdep or
 *    allocation failure report (the runner also watches the console);
 *  - the pages pinned system-wide (kcoll_util.h: foll_pinned()) are back
 *    to their value before the run: 0 leaked pins;
 *  - the ABI's promises checked on every call (kcoll_fuzz_exec.c) held;
 *  - no epoch crashed, and none stopped making calls for a minute (its
 *    tasks' kernel stacks are printed).
 * It prints progress lines (calls/s), per-command and per-errno counts, the
 * last calls of every thread when something went wrong, and a verdict;
 * `kcoll-vm --rmmod` then unloads the module.  TAP output, exit 0 on pass,
 * 4 (skip) without /dev/kcoll.
 *
 * The same seed with -j 1 replays the same calls, as far as the kernel
 * answers the same (completions, timing); with more threads the
 * interleaving differs from run to run.
 */
#include <dirent.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"
#include "kcoll_fuzz.h"

#define FZ_HANG_S	60	/* no call for this long: the epoch hangs */

static struct fz_cfg cfg;
static struct fz_shared *sh;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kcoll_fuzz [options]\n"
		"  -n, --calls N      ioctl calls in all (KCOLL_FUZZ_CALLS, 20000)\n"
		"  -s, --seed S       seed (KCOLL_FUZZ_SEED, default from the clock)\n"
		"  -t, --time S       time budget in seconds (KCOLL_FUZZ_SECONDS, 120)\n"
		"  -j, --threads N    threads per epoch, 1..%d (KCOLL_FUZZ_THREADS, 4)\n"
		"  -p, --progress S   seconds between progress lines (10)\n"
		"      --no-unpriv    every epoch as root\n"
		"      --no-fork      no fork children (EPERM checks, two-process pairs)\n"
		"      --no-pairs     no two-rank communicators\n"
		"      --no-chaos     no remapping, reprotecting or signals\n"
		"      --no-kill      no epoch ended by SIGKILL\n"
		"  -v, --verbose      more output (twice: every call)\n"
		"  -h, --help         this text\n", FZ_MAX_THREADS);
}

static void fz_options(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "calls", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "time", required_argument, NULL, 't' },
		{ "threads", required_argument, NULL, 'j' },
		{ "progress", required_argument, NULL, 'p' },
		{ "no-unpriv", no_argument, NULL, 1 },
		{ "no-fork", no_argument, NULL, 2 },
		{ "no-pairs", no_argument, NULL, 3 },
		{ "no-chaos", no_argument, NULL, 4 },
		{ "no-kill", no_argument, NULL, 5 },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *seed = getenv("KCOLL_FUZZ_SEED"), *ip = getenv("KCOLL_IP");
	int c;

	cfg.calls = env_u64("KCOLL_FUZZ_CALLS", 20000);
	cfg.seconds = (unsigned int)env_u32("KCOLL_FUZZ_SECONDS", 120);
	cfg.threads = (unsigned int)env_u32("KCOLL_FUZZ_THREADS", 4);
	cfg.progress = 10;
	cfg.unpriv = cfg.forks = cfg.pairs = cfg.chaos = cfg.kill_epochs = true;
	cfg.seed = seed && *seed ? strtoull(seed, NULL, 0) :
		   (uint64_t)time(NULL) * 1000003ULL ^ (uint64_t)getpid() << 20;
	while ((c = getopt_long(argc, argv, "n:s:t:j:p:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'n': cfg.calls = strtoull(optarg, NULL, 0); break;
		case 's': cfg.seed = strtoull(optarg, NULL, 0); seed = optarg; break;
		case 't': cfg.seconds = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'j': cfg.threads = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'p': cfg.progress = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 1: cfg.unpriv = false; break;
		case 2: cfg.forks = false; break;
		case 3: cfg.pairs = false; break;
		case 4: cfg.chaos = false; break;
		case 5: cfg.kill_epochs = false; break;
		case 'v': cfg.verbose++; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(64);
		}
	}
	if (!cfg.threads || cfg.threads > FZ_MAX_THREADS || optind != argc) {
		usage(stderr);
		exit(64);
	}
	if (!cfg.progress)
		cfg.progress = 10;
	/* The VMs of one run fuzz with different seeds. */
	cfg.seed += env_u32("KCOLL_RANK", 0);
	snprintf(cfg.ip, sizeof(cfg.ip), "%s", ip && *ip ? ip : "127.0.0.1");
	cfg.port_base = FZ_PORT_BASE + env_u32("KCOLL_LOCAL_RANK", 0) * FZ_PORT_SPAN;
	cfg.parent_fd = -1;
}

/* ------------------------------------------------------------ kernel log */

/* What the runner treats as a kernel problem, and a few more. */
static const char *const fz_kmsg_bad[] = {
	"BUG:", "Oops", "WARNING:", "Call Trace", "Kernel panic", "general protection fault",
	"UBSAN:", "KASAN:", "blocked for more than", "possible circular locking",
	"possible recursive locking", "inconsistent lock state", "suspicious RCU usage",
	"sleeping function called from invalid context", "kmemleak", "refcount_t:",
	"list_add corruption", "list_del corruption", "page allocation failure",
	"vmalloc error", "invoked oom-killer", "Out of memory",
};

struct fz_kmsg {
	int fd;
	unsigned long lines, kcoll, problems, lost;
};

static void fz_kmsg_open(struct fz_kmsg *k)
{
	memset(k, 0, sizeof(*k));
	k->fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (k->fd >= 0)
		lseek(k->fd, 0, SEEK_END);	/* only what the run causes */
}

/* Read what the kernel logged since the last call; returns new problems. */
static unsigned long fz_kmsg_scan(struct fz_kmsg *k)
{
	unsigned long found = 0;
	char rec[8192], *msg, *nl;
	unsigned int i;
	ssize_t n;

	while (k->fd >= 0) {
		n = read(k->fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE) {
			k->lost++;		/* overwritten before we read it */
			continue;
		}
		if (n <= 0)
			break;
		rec[n] = 0;
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = 0;
		k->lines++;
		if (strstr(msg, "kcoll"))
			k->kcoll++;
		for (i = 0; i < sizeof(fz_kmsg_bad) / sizeof(fz_kmsg_bad[0]); i++) {
			if (strstr(msg, fz_kmsg_bad[i])) {
				printf("# kmsg: %s\n", msg);
				found++;
				break;
			}
		}
	}
	k->problems += found;
	return found;
}

/* The last calls of every thread, oldest first. */
static void fz_dump_rings(const char *why)
{
	unsigned int i, j, b;

	printf("# last calls of each thread (%s); place is the offset in the thread's area\n", why);
	for (i = 0; i < cfg.threads; i++) {
		uint32_t pos = atomic_load(&sh->ring_pos[i]);

		for (j = 0; j < FZ_RING; j++) {
			const struct fz_trace *e = &sh->ring[i][(pos + j) % FZ_RING];
			char hex[3 * 40 + 1] = "";

			if (!e->req)
				continue;
			for (b = 0; b < 40; b++)
				sprintf(hex + 3 * b, "%02x ", e->head[b]);
			printf("#  t%u call %llu epoch %u: fd %d req 0x%08x size %u place %d -> %s | %s\n",
			       i, (unsigned long long)e->seq, e->epoch, e->fd, e->req, e->size,
			       e->place == UINT32_MAX ? -1 : (int)e->place,
			       e->err < 0 ? "(in the kernel)" : e->err ? strerrorname_np(e->err) : "ok",
			       hex);
		}
	}
}

/* ------------------------------------------------------------ statistics */

static void fz_print_stats(void)
{
	unsigned int b, e, k, top[8] = { 0 };

	printf("# %-12s %10s %10s  errors, most frequent first\n", "command", "calls", "ok");
	for (b = 0; b < FZ_NBUCKETS; b++) {
		char line[512];
		size_t len = 0;
		unsigned int ntop = 0;

		/* The eight most frequent errnos, by selection. */
		for (k = 0; k < 8; k++) {
			uint64_t best = 0;
			unsigned int be = 0, j;

			for (e = 1; e < FZ_NERR; e++) {
				uint64_t v = atomic_load(&sh->err[b][e]);
				bool taken = false;

				for (j = 0; j < ntop; j++)
					taken |= top[j] == e;
				if (!taken && v > best) {
					best = v;
					be = e;
				}
			}
			if (!best)
				break;
			top[ntop++] = be;
			len += snprintf(line + len, sizeof(line) - len, "%s%s %llu", k ? ", " : "",
					be == FZ_NERR - 1 ? "errno>=159" : strerrorname_np((int)be),
					(unsigned long long)best);
		}
		line[len] = 0;
		printf("# %-12s %10llu %10llu  %s\n", b < FZ_NCMDS ? fz_cmds[b].name : "bad request",
		       (unsigned long long)atomic_load(&sh->calls[b]),
		       (unsigned long long)atomic_load(&sh->ok[b]), line);
	}
	printf("# actions:");
	for (k = 0; k < FZ_NACTS; k++)
		printf("%s %s %llu", k ? "," : "", fz_act_names[k],
		       (unsigned long long)atomic_load(&sh->acts[k]));
	printf("\n# two-rank communicators up: %llu; completions reaped: %llu ok, %llu with an error\n",
	       (unsigned long long)atomic_load(&sh->pair_ok),
	       (unsigned long long)atomic_load(&sh->ops_ok),
	       (unsigned long long)atomic_load(&sh->ops_err));
}

/* Every task of a hung epoch: where it waits in the kernel. */
static void fz_dump_stacks(pid_t pid)
{
	char path[96], buf[4096];
	struct dirent *d;
	ssize_t n;
	DIR *dir;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stack", (int)pid, d->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = 0;
		printf("# task %s of epoch %d, kernel stack:\n%s", d->d_name, (int)pid, buf);
	}
	if (dir)
		closedir(dir);
}

/* ------------------------------------------------------------ epochs */

struct fz_run {
	struct fz_kmsg kmsg;
	struct fz_rng rng;
	double t0, last_t;
	uint64_t last_issued;
	long long base;		/* pinned pages before the run */
	unsigned int epochs;
	unsigned int crashed, hung, leaks;
	bool abandoned;
	bool shared_node;	/* other ranks on this kernel: pins are not ours alone */
	bool dumped;		/* rings already printed for a kernel problem */
};

static void fz_progress(struct fz_run *run, unsigned int epoch, bool unpriv)
{
	uint64_t issued = atomic_load(&sh->issued);
	double now = fz_now(), el = now - run->t0;

	printf("# kcoll_fuzz: %llu/%llu calls, %.0f s, %.0f calls/s (now %.0f/s), epoch %u%s, "
	       "pinned %+lld pages, kernel log +%lu lines\n",
	       (unsigned long long)issued, (unsigned long long)cfg.calls, el,
	       el > 0 ? issued / el : 0.0,
	       now > run->last_t ? (issued - run->last_issued) / (now - run->last_t) : 0.0,
	       epoch, unpriv ? " (user 65534)" : "", foll_pinned() - run->base, run->kmsg.lines);
	fflush(stdout);
	run->last_t = now;
	run->last_issued = issued;
}

/* Between two looks at the epoch: the kernel log, and a progress line. */
static void fz_tick(struct fz_run *run, unsigned int epoch, bool unpriv, double *next)
{
	if (fz_kmsg_scan(&run->kmsg) && !run->dumped) {
		run->dumped = true;
		fz_dump_rings("a kernel problem was logged");
	}
	if (fz_now() >= *next) {
		fz_progress(run, epoch, unpriv);
		*next += cfg.progress;
	}
}

/* Run epoch @idx in a child process and judge how it ended. */
static void fz_epoch(struct fz_run *run, unsigned int idx, double *next)
{
	static struct fz_epoch ep;
	uint64_t issued = atomic_load(&sh->issued), left = cfg.calls - issued;
	double kill_at = 0, idle_since = fz_now(), killed_at = 0;
	uint64_t seen = issued;
	long long now_pinned;
	int status = 0;
	pid_t pid;

	memset(&ep, 0, sizeof(ep));
	ep.cfg = &cfg;
	ep.sh = sh;
	ep.index = idx;
	ep.seed = cfg.seed;
	ep.nthreads = cfg.threads;
	ep.unpriv = cfg.unpriv && !geteuid() && fz_permille(&run->rng, 300);
	ep.end_issued = issued + (left < 20000 ? left : fz_range(&run->rng, 2000, 20000));
	ep.deadline = run->t0 + cfg.seconds;
	if (cfg.kill_epochs && fz_permille(&run->rng, 200))
		kill_at = fz_now() + fz_range(&run->rng, 50, 1500) / 1000.0;
	atomic_fetch_add(&sh->acts[FZ_ACT_EPOCH], 1);
	if (ep.unpriv)
		atomic_fetch_add(&sh->acts[FZ_ACT_EPOCH_UNPRIV], 1);
	if (cfg.verbose)
		printf("# epoch %u: calls %llu..%llu%s%s\n", idx, (unsigned long long)issued,
		       (unsigned long long)ep.end_issued, ep.unpriv ? ", user 65534" : "",
		       kill_at ? ", SIGKILL on the way" : "");
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (!pid) {
		setpgid(0, 0);
		_exit(fz_epoch_run(&ep));
	}
	if (pid < 0) {
		run->abandoned = true;
		return;
	}
	setpgid(pid, pid);
	while (waitpid(pid, &status, WNOHANG) != pid) {
		sleep_ms(100);
		fz_tick(run, idx, ep.unpriv, next);
		if (kill_at && fz_now() >= kill_at) {
			kill(-pid, SIGKILL);
			kill_at = 0;
			killed_at = fz_now();
			atomic_fetch_add(&sh->acts[FZ_ACT_EPOCH_KILLED], 1);
		}
		if (atomic_load(&sh->issued) != seen) {
			seen = atomic_load(&sh->issued);
			idle_since = fz_now();
		} else if (!killed_at && fz_now() - idle_since > FZ_HANG_S) {
			printf("# epoch %u: no call for %d s: hung\n", idx, FZ_HANG_S);
			fz_dump_stacks(pid);
			fz_dump_rings("an epoch hung");
			run->hung++;
			kill(-pid, SIGKILL);
			killed_at = fz_now();
		} else if (killed_at && fz_now() - killed_at > 30) {
			printf("# epoch %u: still there 30 s after SIGKILL\n", idx);
			fz_dump_stacks(pid);
			run->hung++;
			run->abandoned = true;
			return;
		}
	}
	kill(-pid, SIGKILL);		/* helpers it left behind */
	if (WIFSIGNALED(status) && !(WTERMSIG(status) == SIGKILL && killed_at)) {
		printf("# epoch %u died of signal %d (%s)\n", idx, WTERMSIG(status),
		       strsignal(WTERMSIG(status)));
		fz_dump_rings("an epoch crashed");
		run->crashed++;
	} else if (WIFEXITED(status) && WEXITSTATUS(status)) {
		printf("# epoch %u could not set up: exit %d\n", idx, WEXITSTATUS(status));
		run->crashed++;
	}
	/* Everything the epoch had is closed: its pins must be gone. */
	now_pinned = run->shared_node ? run->base : foll_pinned_settle(run->base, 5000);
	if (now_pinned > run->base) {
		printf("# epoch %u%s: %lld pages still pinned after it ended\n", idx,
		       ep.unpriv ? " (user 65534)" : "", now_pinned - run->base);
		if (!run->leaks++)
			fz_dump_rings("pages stayed pinned");
		run->base = now_pinned;		/* report each leak once */
	}
	run->epochs++;
}

/*
 * The driver's own file, with a communicator and a registration: every
 * epoch inherits it, and every call on it but INFO must get EPERM.
 */
static int fz_parent_file(void *page)
{
	struct kcoll_info info = { .size = sizeof(info) };
	struct cluster c;
	int fd = open(KC_DEV, O_RDWR);	/* inherited on purpose: no O_CLOEXEC */

	if (fd < 0 || ioctl(fd, KCOLL_IOC_INFO, &info))
		return -1;
	cfg.max_ranks = info.max_ranks;
	cluster_single(&c, cfg.port_base + FZ_PORT_SPAN - 1);
	if (comm_create(fd, &c, -1, NULL) || !reg_buf(fd, page, 4096)) {
		close(fd);
		return -1;
	}
	printf("# kcoll.ko ABI %u, version %u.%u.%u, max_ranks %u, max_inflight %u\n",
	       info.abi_version, info.version >> 16, (info.version >> 8) & 0xff,
	       info.version & 0xff, info.max_ranks, info.max_inflight);
	return fd;
}

int main(int argc, char **argv)
{
	struct fz_run run = { 0 };
	long long base0, end_pinned;
	double next, took;
	unsigned int idx;
	uint64_t issued;
	struct stat st;
	void *page;
	bool ok;

	(void)test_harness_run;		/* kcoll_util.h needs the harness; no TEST() here */
	fz_options(argc, argv);
	ksft_print_header();
	if (stat(KC_DEV, &st))
		ksft_exit_skip(KC_DEV " missing: kcoll.ko not loaded\n");
	ksft_set_plan(5);
	cfg.kcoll_rdev = st.st_rdev;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	page = map_buf(4096);
	if (sh == MAP_FAILED || !page)
		ksft_exit_fail_msg("out of memory\n");
	base0 = foll_pinned_settle(foll_pinned(), 1000);
	cfg.parent_fd = fz_parent_file(page);
	if (cfg.parent_fd < 0)
		ksft_exit_fail_msg("cannot set up the driver's own file: %s\n", strerror(errno));
	printf("# kcoll_fuzz: seed %llu (0x%llx), %llu calls, %u s budget, %u threads, "
	       "address %s, ports %u..%u%s%s%s%s%s\n",
	       (unsigned long long)cfg.seed, (unsigned long long)cfg.seed,
	       (unsigned long long)cfg.calls, cfg.seconds, cfg.threads, cfg.ip, cfg.port_base,
	       cfg.port_base + FZ_PORT_SPAN - 1, cfg.unpriv ? "" : ", no unprivileged epochs",
	       cfg.forks ? "" : ", no forks", cfg.pairs ? "" : ", no pairs",
	       cfg.chaos ? "" : ", no chaos", cfg.kill_epochs ? "" : ", no killed epochs");
	printf("# kcoll_fuzz: again with: kcoll_fuzz -s %llu -n %llu (-j 1 to replay one thread)\n",
	       (unsigned long long)(cfg.seed - env_u32("KCOLL_RANK", 0)),
	       (unsigned long long)cfg.calls);
	fz_kmsg_open(&run.kmsg);
	if (run.kmsg.fd < 0)
		printf("# /dev/kmsg not readable (%s): the console is the only kernel check\n",
		       strerror(errno));
	fz_seed(&run.rng, cfg.seed, 0xd41e);
	/* The pinned-page count is the kernel's: another rank here moves it too. */
	run.shared_node = env_u32("KCOLL_RANKS_PER_NODE", 1) > 1;
	run.base = foll_pinned_settle(foll_pinned(), 1000);
	printf("# pinned pages before the run: %lld (%lld of them the driver's)\n", run.base,
	       run.base - base0);
	run.t0 = fz_now();
	run.last_t = run.t0;
	next = run.t0 + cfg.progress;
	for (idx = 0; !run.abandoned && atomic_load(&sh->issued) < cfg.calls &&
	     fz_now() < run.t0 + cfg.seconds; idx++)
		fz_epoch(&run, idx, &next);
	took = fz_now() - run.t0;
	issued = atomic_load(&sh->issued);
	fz_progress(&run, idx, false);
	close(cfg.parent_fd);
	end_pinned = foll_pinned_settle(base0, 5000);
	fz_kmsg_scan(&run.kmsg);
	fz_print_stats();
	printf("# pinned pages: %lld before, %lld after (%lld leaked)\n", base0, end_pinned,
	       end_pinned > base0 ? end_pinned - base0 : 0);
	printf("# kernel log: %lu new lines, %lu naming kcoll, %lu problem reports%s\n",
	       run.kmsg.lines, run.kmsg.kcoll, run.kmsg.problems,
	       run.kmsg.lost ? " (some lines were overwritten before they were read)" : "");
	if (atomic_load(&sh->oracle_fail)) {
		unsigned int i, n = atomic_load(&sh->nmsg);

		printf("# %u broken promises of the ABI, the first ones:\n",
		       atomic_load(&sh->oracle_fail));
		for (i = 0; i < n && i < FZ_NMSG; i++)
			printf("#   %s\n", sh->msg[i]);
	}

	ksft_test_result(issued > 0 && !run.abandoned, "calls: %llu ioctl calls in %.1f s (%.0f/s)%s\n",
			 (unsigned long long)issued, took, took > 0 ? issued / took : 0.0,
			 issued < cfg.calls ? ", time budget reached first" : "");
	if (run.kmsg.fd < 0)
		ksft_test_result_skip("kernel log: /dev/kmsg not readable\n");
	else
		ksft_test_result(!run.kmsg.problems, "kernel log: %lu problem reports\n",
				 run.kmsg.problems);
	if (run.shared_node)
		ksft_test_result_skip("pinned pages: other ranks share this kernel\n");
	else
		ksft_test_result(!run.leaks && end_pinned <= base0,
				 "pinned pages: back to %lld after every epoch and at the end\n",
				 base0);
	ksft_test_result(!atomic_load(&sh->oracle_fail),
			 "ABI promises: EPERM on others' files, ENOTTY for bad requests, no internal errno\n");
	ksft_test_result(!run.crashed && !run.hung, "epochs: %u ran, %u crashed, %u hung\n",
			 run.epochs, run.crashed, run.hung);
	ok = ksft_get_fail_cnt() == 0;
	printf("# kcoll_fuzz: %s: seed %llu, %llu calls, %.1f s, %.0f calls/s\n",
	       ok ? "PASS" : "FAIL", (unsigned long long)cfg.seed, (unsigned long long)issued, took,
	       took > 0 ? issued / took : 0.0);
	ksft_finished();
	return 0;
}
