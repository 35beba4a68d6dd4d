/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll_fuzz: the parts of the fuzzer and what they share.
 *
 *   kcoll_fuzz_abi.h    what the fuzzer knows of the ABI: field tables
 *   kcoll_fuzz_rand.c   the random generator and boundary-biased values
 *   kcoll_fuzz_mem.c    the memory every pointer comes from, and its chaos
 *   kcoll_fuzz_args.c   argument structs: size, tail, field mutations
 *   kcoll_fuzz_build.c  one builder per command (valid first, then mutated)
 *   kcoll_fuzz_state.c  files, registrations and descriptors an epoch knows
 *   kcoll_fuzz_exec.c   a thread's loop: calls, statistics, oracles
 *   kcoll_fuzz_act.c    what is not one ioctl: close, dup, fork, pairs
 *   kcoll_fuzz_pair.c   two-rank communicators, in threads or processes
 *   kcoll_fuzz.c        the driver: epochs, progress, kernel log, verdict
 *
 * The driver runs the calls in epochs: each epoch is a child process
 * (root, or user 65534 with a small RLIMIT_MEMLOCK) with several threads
 * sharing a handful of /dev/kcoll files.  Counters and the last calls of
 * every thread live in memory shared with the driver (struct fz_shared),
 * so they survive an epoch that is killed or crashes.
 */
#ifndef KCOLL_FUZZ_H
#define KCOLL_FUZZ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kcoll_fuzz_abi.h"

#define FZ_MAX_THREADS	16
#define FZ_NFILES	6	/* /dev/kcoll files an epoch's threads share */
#define FZ_NHANDLES	64	/* registrations remembered per epoch */
#define FZ_NCHAOS	4	/* areas remapped and reprotected during calls */
#define FZ_NEFD		2	/* eventfds */
#define FZ_RING		32	/* last calls kept per thread */
#define FZ_NERR		160	/* errno buckets; the last takes the rest */
#define FZ_NBUCKETS	(FZ_NCMDS + 1)	/* the commands and FZ_BADCMD */
#define FZ_NMSG		16	/* oracle messages kept */
#define FZ_MAX_RANKS_PAIR 2

/* Ports of the two-rank communicators: FZ_PORT_BASE + local rank * 64. */
#define FZ_PORT_BASE	17300
#define FZ_PORT_SPAN	64

/* ------------------------------------------------------------ random */

struct fz_rng {
	uint64_t s[4];
};

void fz_seed(struct fz_rng *r, uint64_t seed, uint64_t stream);
uint64_t fz_rand(struct fz_rng *r);
/* 0..n-1 (n > 0) */
uint64_t fz_below(struct fz_rng *r, uint64_t n);
/* lo..hi, inclusive */
uint64_t fz_range(struct fz_rng *r, uint64_t lo, uint64_t hi);
/* true with probability pct / 1000 */
bool fz_permille(struct fz_rng *r, unsigned int pm);
/* An integer of @bytes bytes, biased to boundaries (0, 1, -1, max, 2^k +- 1). */
uint64_t fz_int(struct fz_rng *r, unsigned int bytes);
/* One of @n values. */
uint64_t fz_pick(struct fz_rng *r, const uint64_t *v, size_t n);
#define FZ_PICK(r, ...) ({						\
	const uint64_t __v[] = { __VA_ARGS__ };				\
	fz_pick(r, __v, sizeof(__v) / sizeof(__v[0]));			\
})

/* ------------------------------------------------------------ shared */

/* What is not one ioctl; counted apart from the call budget. */
enum fz_act {
	FZ_ACT_REOPEN,		/* close a file (maybe mid-ioctl) and open another */
	FZ_ACT_DUP,		/* a slot gets a dup() of another */
	FZ_ACT_CHAOS,		/* remap, mprotect or drop the pages of an area */
	FZ_ACT_FORK,		/* a child checks EPERM on the inherited files */
	FZ_ACT_PAIR_THREADS,	/* two-rank communicator, two threads */
	FZ_ACT_PAIR_PROCS,	/* two-rank communicator, two processes */
	FZ_ACT_MATCHED_OPS,	/* operations both ranks of a pair submitted */
	FZ_ACT_SIGNAL,		/* a signal into another thread's ioctl */
	FZ_ACT_EPOCH,		/* epochs run */
	FZ_ACT_EPOCH_UNPRIV,	/* of them as user 65534 */
	FZ_ACT_EPOCH_KILLED,	/* of them ended by SIGKILL */
	FZ_NACTS
};

extern const char *const fz_act_names[FZ_NACTS];

/* One call, as the ring of a thread keeps it. */
struct fz_trace {
	uint64_t seq;		/* call number (global) */
	uint32_t epoch;
	uint32_t req;		/* the ioctl request */
	int32_t fd;
	int32_t err;		/* 0 or errno */
	uint32_t size;		/* the size field as passed */
	uint32_t place;		/* offset of the struct in the thread's area */
	uint8_t head[64];	/* the first bytes of the struct */
};

struct fz_shared {
	_Atomic uint64_t issued;		/* calls started: the budget */
	_Atomic uint64_t calls[FZ_NBUCKETS];
	_Atomic uint64_t ok[FZ_NBUCKETS];
	_Atomic uint64_t err[FZ_NBUCKETS][FZ_NERR];
	_Atomic uint64_t acts[FZ_NACTS];
	_Atomic uint64_t pair_ok;		/* two-rank communicators that came up */
	_Atomic uint64_t ops_ok;		/* completions with status 0 */
	_Atomic uint64_t ops_err;		/* completions with an error status */
	_Atomic uint32_t oracle_fail;
	_Atomic uint32_t nmsg;
	char msg[FZ_NMSG][200];
	_Atomic uint32_t next_port;
	_Atomic int stop;			/* the driver asks everyone to stop */
	_Atomic uint32_t ring_pos[FZ_MAX_THREADS];
	struct fz_trace ring[FZ_MAX_THREADS][FZ_RING];
};

/* Record an oracle failure (a broken promise of the ABI). */
void fz_oracle_fail(struct fz_shared *sh, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------ options */

struct fz_cfg {
	uint64_t seed;
	uint64_t calls;		/* budget of ioctl calls */
	unsigned int seconds;	/* time budget */
	unsigned int threads;
	unsigned int progress;	/* seconds between progress lines */
	bool unpriv;		/* some epochs as user 65534 */
	bool forks;		/* fork children (EPERM checks, two processes) */
	bool pairs;		/* two-rank communicators */
	bool chaos;		/* munmap/mprotect/remap, close mid-ioctl, signals */
	bool kill_epochs;	/* end some epochs with SIGKILL */
	int verbose;
	char ip[64];		/* this node's address for two-rank pairs */
	unsigned int port_base;
	dev_t kcoll_rdev;	/* /dev/kcoll, to tell its files from others */
	int parent_fd;		/* the driver's own file: every epoch gets EPERM */
	uint32_t max_ranks;	/* from KCOLL_IOC_INFO */
};

/* ------------------------------------------------------------ memory */

/*
 * Every pointer the fuzzer passes points into one reservation of its own
 * (or nowhere): regions separated by PROT_NONE guard pages, so a length
 * that runs past a region faults instead of reaching the fuzzer's heap,
 * stacks or counters.  Only the kernel touches the pool, the chaos areas
 * and the read-only pages; the fuzzer writes only its argument areas.
 */
enum fz_ptr_class {
	FZ_P_NULL,
	FZ_P_POOL,		/* read-write, aligned */
	FZ_P_POOL_ODD,		/* read-write, misaligned */
	FZ_P_RDONLY,		/* a read-only page */
	FZ_P_NONE,		/* a PROT_NONE page */
	FZ_P_UNMAPPED,		/* nothing mapped there, ever */
	FZ_P_KERNEL,		/* kernel addresses */
	FZ_P_NONCANON,		/* past the user address space */
	FZ_P_EDGE,		/* the last bytes before a guard page */
	FZ_P_SELF,		/* the argument struct itself */
	FZ_P_SHM,		/* shmem (memfd) pages */
	FZ_P_CHAOS,		/* pages being remapped under the kernel */
	FZ_P_RANDOM,
	FZ_P_NCLASSES
};

struct fz_mem {
	uint8_t *base;
	size_t len;
	uint8_t *pool;		/* read-write anonymous pages */
	size_t pool_len;
	uint8_t *shm;		/* memfd pages */
	size_t shm_len;
	uint8_t *ro;		/* one read-only page */
	uint8_t *none;		/* one PROT_NONE page inside a mapping */
	uint8_t *edge;		/* a read-write page followed by a guard */
	uint8_t *chaos[FZ_NCHAOS];
	size_t chaos_len;
	uint8_t *arg[FZ_MAX_THREADS];	/* per thread, FZ_ARG_LEN and a guard */
};

/*
 * A thread's argument area: FZ_ARR_LEN bytes of arrays (rank tables,
 * completions, AlltoAllv counts, algorithm strings), then FZ_STRUCT_LEN
 * bytes where the struct goes, then a guard page.
 */
#define FZ_PAGE		4096u
#define FZ_ARR_LEN	(2 * FZ_PAGE)
#define FZ_STRUCT_LEN	(2 * FZ_PAGE)
#define FZ_ARG_LEN	(FZ_ARR_LEN + FZ_STRUCT_LEN)

int fz_mem_init(struct fz_mem *m, unsigned int threads);
/*
 * A pointer of class @cls for @len bytes (a hint: where the class allows,
 * @len bytes from the result are inside the region).  @self is the
 * argument struct being built.
 */
uint64_t fz_ptr(struct fz_rng *r, const struct fz_mem *m, unsigned int cls, uint64_t len,
		const void *self);
/* Any class, biased to valid memory. */
uint64_t fz_ptr_any(struct fz_rng *r, const struct fz_mem *m, uint64_t len, const void *self);
/* Remap, mprotect or drop one chaos area. */
void fz_mem_chaos(struct fz_rng *r, struct fz_mem *m);

/* ------------------------------------------------------------ epoch */

struct fz_file {
	_Atomic int fd;		/* -1: closed */
	_Atomic int nranks;	/* communicator as far as we know, 0: none */
	_Atomic int rank;
	_Atomic int pair_slot;	/* the other rank's slot in this process, or -1 */
};

enum { FZ_H_EMPTY, FZ_H_LIVE, FZ_H_STALE };

struct fz_handle {
	_Atomic uint64_t h;
	_Atomic int slot;
	_Atomic int state;
	_Atomic uint64_t len;
};

struct fz_epoch {
	const struct fz_cfg *cfg;
	struct fz_shared *sh;
	unsigned int index;
	bool unpriv;
	uint64_t seed;
	uint64_t end_issued;	/* the shared budget counter to stop at */
	double deadline;	/* CLOCK_MONOTONIC seconds */
	_Atomic int stop;
	struct fz_mem mem;
	struct fz_file files[FZ_NFILES];
	struct fz_handle handles[FZ_NHANDLES];
	int efd[FZ_NEFD];
	int pipefd[2];
	int nullfd;
	int closedfd;		/* a number known to be closed */
	unsigned int nthreads;
	_Atomic pid_t ktid[FZ_MAX_THREADS];	/* for tgkill(): harmless once gone */
	pthread_barrier_t go;			/* every thread has its ktid */
};

struct fz_thread {
	struct fz_epoch *ep;
	unsigned int id;
	struct fz_rng rng;
	uint8_t *arr;		/* arrays part of the argument area */
	uint8_t *st;		/* struct part */
	uint8_t *cur;		/* where the struct being built goes */
	uint64_t seq;		/* number of the current call */
};

/* One ioctl to make, as a builder leaves it. */
struct fz_call {
	unsigned int bucket;	/* enum fz_cmd_id, or FZ_BADCMD */
	unsigned long req;
	int slot;		/* file slot, or -1 */
	int fd;
	uint8_t *arg;		/* where the struct is, in the thread's area */
	uint32_t size;		/* size field as written */
	bool wellformed;	/* no mutation: the kernel may accept it */
	bool inherited;		/* fd is the driver's file: EPERM expected */
	int nranks;		/* communicator the builder assumed */
};

double fz_now(void);
int fz_open_kcoll(void);
/* Opened file of a random slot (reopens a closed one), or -1. */
int fz_slot_fd(struct fz_thread *t, int *slot);
/* Put @fd into @slot as a file with a communicator of @nranks; closes the old one. */
void fz_slot_install(struct fz_epoch *ep, int slot, int fd, int nranks, int rank, int pair);
void fz_handle_add(struct fz_epoch *ep, int slot, uint64_t h, uint64_t len);
struct fz_handle *fz_handle_lookup(struct fz_epoch *ep, int slot, uint64_t h);
/* A registration of @slot big enough for @len bytes, or NULL. */
struct fz_handle *fz_handle_find(struct fz_thread *t, int slot, uint64_t len);
/* A handle value: valid, another file's, stale, or a boundary value. */
uint64_t fz_handle_value(struct fz_thread *t, int slot);
/* A file descriptor for an eventfd field. */
int fz_fd_value(struct fz_thread *t);

/* kcoll_fuzz_args.c */
uint32_t fz_pick_size(struct fz_rng *r, const struct fz_cmd *cmd);
uint8_t *fz_place(struct fz_thread *t, uint32_t size);
void fz_emit(struct fz_thread *t, struct fz_call *c, const struct fz_cmd *cmd,
	     const void *valid, unsigned int mutate_pm);
uint64_t fz_field_value(struct fz_thread *t, const struct fz_cmd *cmd,
			const struct fz_field *f, int slot, int nranks);
uint64_t fz_get(const struct fz_call *c, const struct fz_thread *t, uint32_t off, uint32_t len);
bool fz_set(struct fz_call *c, const struct fz_thread *t, uint32_t off, uint32_t len, uint64_t v);
#define FZ_GET(c, t, st, f) \
	fz_get(c, t, offsetof(struct st, f), sizeof(((struct st *)0)->f))
#define FZ_SET(c, t, st, f, v) \
	fz_set(c, t, offsetof(struct st, f), sizeof(((struct st *)0)->f), v)

/* kcoll_fuzz_build.c */
void fz_build(struct fz_thread *t, struct fz_call *c, unsigned int bucket);
unsigned int fz_pick_bucket(struct fz_rng *r);
size_t fz_dtype_size(uint32_t dt);
void fz_op_bytes(uint32_t op, uint64_t n, unsigned int nranks, bool root,
		 uint64_t *sb, uint64_t *rb);
size_t fz_rank_table(struct fz_thread *t, struct kcoll_rank *r, unsigned int n,
		     unsigned int port);

/* kcoll_fuzz_exec.c */
long fz_ioctl(struct fz_thread *t, struct fz_call *c);
void *fz_thread_main(void *arg);
int fz_epoch_run(struct fz_epoch *ep);

/* kcoll_fuzz_act.c */
void fz_action(struct fz_thread *t);

/* kcoll_fuzz_pair.c */
void fz_pair_threads(struct fz_thread *t);
void fz_pair_procs(struct fz_thread *t);

#endif /* KCOLL_FUZZ_H */
