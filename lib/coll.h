/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcoll: the thin user-space interface of kcoll (collective operations
 * over RDMA, run by the kcoll kernel module through /dev/kcoll).
 *
 * Every call maps onto the module's ioctl ABI (<linux/kcoll.h>); the
 * module does the work.  Conventions:
 *  - every function returning int returns 0 or a negative errno value;
 *    coll_strerror() turns it into text and coll_last_error() gives the
 *    detailed message of the last failure in the calling thread (which
 *    file, field, rank, and what to do);
 *  - counts are in elements, NCCL conventions (see each operation);
 *  - a communicator is one open file of /dev/kcoll: it is not shared
 *    between threads without the caller's own locking.
 *
 * Minimal use:
 *
 *	coll_comm_t *comm;
 *	coll_request_t *req;
 *	int err = coll_comm_init_ranktable(getenv("KCOLL_RANKTABLE"), rank, &comm);
 *	if (err) { fprintf(stderr, "%s\n", coll_last_error()); exit(1); }
 *	err = coll_allreduce(comm, in, out, n, COLL_FLOAT, COLL_SUM, &req);
 *	if (!err) err = coll_wait(&req, NULL);
 *	coll_comm_destroy(comm);
 */
#ifndef COLL_H
#define COLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COLL_VERSION_MAJOR	0
#define COLL_VERSION_MINOR	1

/* Element types: the values of enum kcoll_dtype. */
typedef enum coll_dtype {
	COLL_INT8 = 0, COLL_UINT8 = 1, COLL_INT16 = 2, COLL_UINT16 = 3,
	COLL_INT32 = 4, COLL_UINT32 = 5, COLL_INT64 = 6, COLL_UINT64 = 7,
	COLL_FLOAT16 = 8, COLL_BFLOAT16 = 9, COLL_FLOAT = 10, COLL_DOUBLE = 11,
	COLL_DTYPE_COUNT
} coll_dtype_t;

/* Reduction operators: the values of enum kcoll_redop. */
typedef enum coll_redop {
	COLL_SUM = 0, COLL_PROD = 1, COLL_MAX = 2, COLL_MIN = 3, COLL_AVG = 4,
	COLL_REDOP_COUNT
} coll_redop_t;

/* Operations: the values of enum kcoll_op. */
typedef enum coll_op {
	COLL_OP_ALLREDUCE = 0, COLL_OP_REDUCESCATTER = 1, COLL_OP_ALLGATHER = 2,
	COLL_OP_BROADCAST = 3, COLL_OP_REDUCE = 4, COLL_OP_SCATTER = 5,
	COLL_OP_GATHER = 6, COLL_OP_ALLTOALL = 7, COLL_OP_ALLTOALLV = 8,
	COLL_OP_BARRIER = 9, COLL_OP_COUNT
} coll_op_t;

typedef struct coll_comm coll_comm_t;
typedef struct coll_request coll_request_t;
typedef struct coll_mr coll_mr_t;

/* ------------------------------------------------------------ errors */

/*
 * Text for a (negative or positive) errno value as libcoll and the module
 * use it; never NULL.  -ENODEV: the kcoll module is not loaded,
 * -EPROTONOSUPPORT: module and library ABI versions differ, -EACCES: no
 * permission on /dev/kcoll, each with what to do.
 */
const char *coll_strerror(int err);

/* The detailed message of the calling thread's last failure ("" if none). */
const char *coll_last_error(void);

/* ------------------------------------------------------- rank tables */

/* One rank of a communicator. */
struct coll_rank_desc {
	char addr[64];		/* IPv4 or IPv6 address, text form */
	uint32_t port;		/* rdma_cm port, 1..65535; 0: the module's listen_port */
	uint32_t server_id;	/* ranks of one server are contiguous */
	uint32_t pod_id;	/* servers of one super-node are contiguous */
};

/* A parsed HCCL rank table (v1.0 or v1.2). */
struct coll_ranktable {
	uint32_t nranks;
	uint32_t nservers;
	uint32_t npods;			/* 1 without super_pod_list */
	char version[8];		/* "1.0" or "1.2" */
	struct coll_rank_desc *ranks;	/* [nranks], indexed by rank_id */
	char (*server_names)[68];	/* [nservers]: server_id strings */
	char (*pod_names)[68];		/* [npods]: super_pod_id strings */
};

/* Default device_port when a device entry has none. */
#define COLL_DEFAULT_PORT	16667

/*
 * Load and validate a rank table file.  Accepts HCCL's shapes (v1.0:
 * server_list[].device[] with device_ip and rank_id; v1.2: plus
 * super_pod_list[]), all values strings, plus kcoll's optional per-device
 * fields "kcoll_addr" (address override) and "kcoll_port" (port
 * override).  -EINVAL with a message naming the file, field, value and
 * rank (coll_last_error()) for a bad table; *rt is then NULL.
 */
int coll_ranktable_load(const char *path, struct coll_ranktable **rt);
/* The same from a string in memory; @name is used in messages. */
int coll_ranktable_parse(const char *json, size_t len, const char *name,
			 struct coll_ranktable **rt);
void coll_ranktable_free(struct coll_ranktable *rt);

/* ------------------------------------------------------ communicators */

/*
 * Optional settings of a communicator; zero fields take the defaults.
 * Fields beyond @size are taken as zero; a @size of 0 means the fields
 * up to @device (the struct before @secret was added).
 */
struct coll_comm_opts {
	uint32_t size;			/* sizeof(struct coll_comm_opts) */
	const char *algo;		/* HCCL_ALGO string; NULL: $KCOLL_ALGO,
					 * else $HCCL_ALGO, else sysfs default */
	uint32_t timeout_ms;		/* per operation */
	uint32_t connect_timeout_ms;	/* creation waits this long for peers */
	uint32_t chunk_bytes;		/* same on every rank */
	uint32_t slots;			/* same on every rank */
	const char *device;		/* default "/dev/kcoll" */
	/*
	 * Shared secret of the job's ranks, the same bytes on every rank
	 * (16..256): only ranks that prove they know it may connect.  NULL:
	 * the file $KCOLL_SECRET_FILE (mode 0600), else $KCOLL_SECRET, else
	 * none (peers are then admitted by their address alone).
	 */
	const void *secret;
	size_t secret_len;
	/*
	 * The communicator's 128-bit id, the same 16 bytes on every rank (one
	 * rank draws them, the job distributes them, as an ncclUniqueId): the
	 * node's kcoll listener hands connections to the communicator it
	 * names, so any number of communicators share one port.  NULL: the id
	 * is derived from the rank table, and two communicators of one table
	 * alive on one node clash (-EEXIST).  coll_comm_init_oob() draws one.
	 */
	const uint8_t *unique_id;
};

/*
 * Create a communicator from a rank table file and this process's rank.
 * @path NULL means $KCOLL_RANKTABLE.  Blocks until every peer is connected.
 */
int coll_comm_init_ranktable(const char *path, uint32_t rank, coll_comm_t **comm);
/* The same with options (@opts may be NULL). */
int coll_comm_init_ranktable_opts(const char *path, uint32_t rank,
				  const struct coll_comm_opts *opts, coll_comm_t **comm);
/* From an explicit array of @nranks rank descriptions, the same on every rank. */
int coll_comm_init_ranks(const struct coll_rank_desc *ranks, uint32_t nranks, uint32_t rank,
			 const struct coll_comm_opts *opts, coll_comm_t **comm);
/*
 * Close the communicator: outstanding operations end (the module cancels
 * them), registrations are released, requests not yet completed are freed.
 */
void coll_comm_destroy(coll_comm_t *comm);
/* End the communicator: outstanding operations complete with -ECANCELED. */
int coll_comm_abort(coll_comm_t *comm);

int coll_comm_rank(const coll_comm_t *comm);
int coll_comm_size(const coll_comm_t *comm);
/* Module-wide id of the communicator (as collctl shows it). */
uint64_t coll_comm_id(const coll_comm_t *comm);
/*
 * An eventfd signalled once per completed operation: put it in a
 * poll/epoll loop, read() it to clear, then call coll_test().
 */
int coll_comm_event_fd(const coll_comm_t *comm);

/* What the loaded module supports (struct kcoll_info in short). */
struct coll_module_info {
	uint32_t abi_version;
	uint32_t version;		/* (major << 16) | (minor << 8) | patch */
	uint64_t features;		/* KCOLL_FEAT_* */
	uint32_t ops, dtypes, redops, algos;	/* bit masks */
	uint32_t max_ranks, max_inflight;
	uint64_t max_reg_bytes;
	uint32_t chunk_bytes, slots, timeout_ms, connect_timeout_ms;
	uint32_t listen_port;		/* the node listener's port for rank ports 0 */
};
/* Query the module through @device (NULL: /dev/kcoll), no communicator needed. */
int coll_module_info(const char *device, struct coll_module_info *info);

/* ------------------------------------------- out-of-band bootstrap */

/*
 * The caller's own allgather (as UCC's ucc_oob_coll): every one of @size
 * ranks passes @len bytes at @sendbuf; when it returns, @recvbuf holds
 * @size * @len bytes, rank i's at offset i * @len.  Blocking; called by
 * every rank the same number of times with the same @len.  0, or any
 * other value for a failure (coll_comm_init_oob() then returns -EIO).
 * MPI: PMPI_Allgather(s, len, MPI_BYTE, r, len, MPI_BYTE, comm); the c10d
 * Store, PMIx fence and the like serve as well.
 */
typedef int (*coll_oob_allgather_t)(const void *sendbuf, void *recvbuf, size_t len,
				    void *ctx);

struct coll_oob {
	coll_oob_allgather_t allgather;
	void *ctx;		/* passed to @allgather; kept for coll_comm_split() */
	uint32_t rank;		/* this process's rank, 0..size-1 */
	uint32_t size;		/* ranks in the job */
};

/* Optional settings of coll_comm_init_oob(); zero fields take the defaults. */
struct coll_oob_opts {
	uint32_t size;			/* sizeof(struct coll_oob_opts) */
	const struct coll_comm_opts *comm;	/* settings of the communicator */
	/* This rank's RDMA address (IPv4/IPv6 text); NULL: coll_local_addr(NULL). */
	const char *addr;
	/*
	 * Host identity: ranks with the same string are one server.  NULL:
	 * $KCOLL_SERVER_ID, else the running kernel's boot id (every process
	 * of one kernel shares it: the kcoll module is one per kernel), else
	 * /etc/machine-id, else the host name.
	 */
	const char *server;
	/* Super-node identity of this rank's server; NULL: $KCOLL_POD_ID, else one for all. */
	const char *pod;
};

/*
 * Create a communicator without a rank table, collectively over the
 * @oob->size ranks of @oob.  Rank 0 draws the communicator's 128-bit unique
 * id and a secret (getrandom), and the ranks exchange them with their
 * addresses and host identities through @oob->allgather (two calls: the
 * exchange, then the outcome of the creation); servers and super-nodes follow from
 * the host identities (numbered in rank order; ranks of one server that are
 * not contiguous make every rank its own server), then the communicator
 * is created as by coll_comm_init_ranks().  A rank's local failure (no
 * RDMA address, say) fails every rank, with a message naming the rank.
 * A secret in @opts->comm (or $KCOLL_SECRET_FILE/$KCOLL_SECRET) replaces
 * the drawn one.  Every rank's port is the module's listen_port (0 in the
 * rank table): the id tells communicators apart.
 */
int coll_comm_init_oob(const struct coll_oob *oob, const struct coll_oob_opts *opts,
		       coll_comm_t **comm);

/*
 * Collective over @comm: a new communicator of the ranks that pass the same
 * @color >= 0, ranked by (@key, rank in @comm), as MPI_Comm_split and
 * ncclCommSplit.  @color < 0 (COLL_SPLIT_NOCOLOR): not a member; *@newcomm
 * is NULL and 0 is returned.  The exchange goes through the allgather
 * @comm was created with (coll_comm_init_oob(); its ctx must still be
 * valid), else through kcoll's AllGather on @comm.  The new communicator
 * keeps @comm's settings, addresses, servers and super-nodes, with its own
 * unique id and secret.
 */
#define COLL_SPLIT_NOCOLOR	(-1)
int coll_comm_split(coll_comm_t *comm, int color, int key, coll_comm_t **newcomm);
/* coll_comm_split(comm, 0, rank, newcomm): the same ranks, a new communicator. */
int coll_comm_dup(coll_comm_t *comm, coll_comm_t **newcomm);

/*
 * After a failure, the survivors of @comm form a new communicator of just
 * them (MPIX_Comm_shrink, ncclCommShrink): every survivor calls it once
 * its operation on @comm returned an error.  The ranks keep their order
 * (new rank = place among the survivors), servers and super-nodes, and
 * @comm's settings and secret; after a failure the connections between
 * the survivors are taken over from @comm (KCOLL_FEAT_REUSE; the others
 * are made anew).  A rank is dead if it said its process leaves, if a
 * rank found it gone (and told), or if it vanished without a word; one
 * that said its communicator failed is alive.  The survivors agree without an exchange: the new unique id
 * follows from @comm's and the survivors, so survivors that saw different
 * sets never meet and fail with -ETIMEDOUT at the connect timeout (call
 * again).  Works on a healthy @comm as well (every rank alive: a
 * duplicate).  @comm stays; destroy it when done.  0 or a negative errno
 * (-EOPNOTSUPP: the module lacks KCOLL_FEAT_PEERS).
 */
int coll_comm_shrink(coll_comm_t *comm, coll_comm_t **newcomm);

/*
 * A new communicator of ranks @members[0..@n-1] of @comm (new rank i is
 * @comm's rank @members[i]), called by those ranks only, each with the
 * same list (MPI_Comm_create_group; torch.distributed.new_group, which
 * runs on the members only).  Nothing is exchanged: the members know
 * @comm's addresses, servers, super-nodes and secret, and derive the new
 * unique id from @comm's, the list and how many groups of this list this
 * rank made from @comm before.  So members make their groups of one list
 * in the same order; a member that passed another list is never met and
 * fails with -ETIMEDOUT at the connect timeout.  Settings are @comm's but
 * for the nonzero algo, timeout_ms, connect_timeout_ms, chunk_bytes and
 * slots of @opts (NULL: none); device and secret are always @comm's, and
 * unique_id is ignored.  The new communicator has its own connections.
 * -EINVAL (nothing counted) if a member is not a rank of @comm, is listed
 * twice, or the caller is not listed.  Not collective over @comm, which
 * stays as it was.
 */
int coll_comm_create_group(coll_comm_t *comm, const uint32_t *members, uint32_t n,
			   const struct coll_comm_opts *opts, coll_comm_t **newcomm);

/*
 * The communicator's 128-bit unique id into @id (zeros for one made from
 * a rank table).  0 or -EINVAL.
 */
int coll_comm_unique_id(const coll_comm_t *comm, uint8_t id[16]);

/*
 * The address this node's kcoll would use, into @addr (@len >= 46): the
 * RoCE GID (IPv4 first, else a global IPv6) of RDMA device @device (NULL:
 * $KCOLL_DEVICE, else the first device, by name, with an active Ethernet
 * port), from /sys/class/infiniband.  0, -ENODEV with a message.
 */
int coll_local_addr(const char *device, char *addr, size_t len);

/* ------------------------------------------------------------ memory */

/*
 * Pin @len bytes at @addr for repeated use.  Operations whose buffers lie
 * inside a registration use it automatically; others pin per operation.
 */
int coll_mem_register(coll_comm_t *comm, void *addr, size_t len, coll_mr_t **mr);
/* -EBUSY while an operation not yet completed uses it. */
int coll_mem_deregister(coll_comm_t *comm, coll_mr_t *mr);

/* --------------------------------------------------------- operations */

/* How an operation ended. */
struct coll_status {
	int error;		/* 0 or negative errno */
	uint64_t op_id;
	uint64_t bytes;		/* payload bytes this rank sent plus received */
	uint64_t submit_ns;	/* CLOCK_MONOTONIC */
	uint64_t complete_ns;
};

/*
 * Asynchronous operations: each submits one operation and returns a
 * request in *req, to be completed by coll_test/coll_wait/coll_wait_all
 * (which free it).  Every rank submits the same operations in the same
 * order.  In place as in NCCL: recvbuf == sendbuf for AllReduce,
 * Broadcast, Reduce, AlltoAll; recvbuf = sendbuf + rank * count elements
 * for ReduceScatter and Scatter; sendbuf = recvbuf + rank * count for
 * AllGather and Gather.  In place, only the receive area is written:
 * ReduceScatter (and the root of Scatter) leave the other blocks of
 * sendbuf as they were.
 */
/* @count elements in and out. */
int coll_allreduce(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
		   coll_dtype_t dtype, coll_redop_t op, coll_request_t **req);
/* Sends @recvcount * nranks, receives @recvcount. */
int coll_reducescatter(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t recvcount,
		       coll_dtype_t dtype, coll_redop_t op, coll_request_t **req);
/* Sends @sendcount, receives @sendcount * nranks. */
int coll_allgather(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t sendcount,
		   coll_dtype_t dtype, coll_request_t **req);
/* @sendbuf is read on @root only. */
int coll_broadcast(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
		   coll_dtype_t dtype, uint32_t root, coll_request_t **req);
/* @recvbuf is written on @root only. */
int coll_reduce(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
		coll_dtype_t dtype, coll_redop_t op, uint32_t root, coll_request_t **req);
/* @root sends @count * nranks; every rank receives @count. */
int coll_scatter(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
		 coll_dtype_t dtype, uint32_t root, coll_request_t **req);
/* Every rank sends @count; @root receives @count * nranks. */
int coll_gather(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
		coll_dtype_t dtype, uint32_t root, coll_request_t **req);
/* @count elements to and from every peer (buffers of @count * nranks). */
int coll_alltoall(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
		  coll_dtype_t dtype, coll_request_t **req);
/* Counts and displacements in elements, arrays of nranks entries. */
int coll_alltoallv(coll_comm_t *comm, const void *sendbuf, const uint64_t *sendcounts,
		   const uint64_t *sdispls, void *recvbuf, const uint64_t *recvcounts,
		   const uint64_t *rdispls, coll_dtype_t dtype, coll_request_t **req);
int coll_barrier(coll_comm_t *comm, coll_request_t **req);

/* Blocking forms: submit, then wait; the operation's status is returned. */
int coll_allreduce_sync(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
			coll_dtype_t dtype, coll_redop_t op);
int coll_reducescatter_sync(coll_comm_t *comm, const void *sendbuf, void *recvbuf,
			    size_t recvcount, coll_dtype_t dtype, coll_redop_t op);
int coll_allgather_sync(coll_comm_t *comm, const void *sendbuf, void *recvbuf,
			size_t sendcount, coll_dtype_t dtype);
int coll_broadcast_sync(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
			coll_dtype_t dtype, uint32_t root);
int coll_reduce_sync(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
		     coll_dtype_t dtype, coll_redop_t op, uint32_t root);
int coll_scatter_sync(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
		      coll_dtype_t dtype, uint32_t root);
int coll_gather_sync(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
		     coll_dtype_t dtype, uint32_t root);
int coll_alltoall_sync(coll_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
		       coll_dtype_t dtype);
int coll_alltoallv_sync(coll_comm_t *comm, const void *sendbuf, const uint64_t *sendcounts,
			const uint64_t *sdispls, void *recvbuf, const uint64_t *recvcounts,
			const uint64_t *rdispls, coll_dtype_t dtype);
int coll_barrier_sync(coll_comm_t *comm);

/*
 * Completion.  coll_test: *done = 1 when the request finished (then *req
 * is freed and set to NULL and *status, if not NULL, filled); never
 * blocks.  coll_wait: block until it finished.  The return value is the
 * operation's status (0 or negative errno), or the error of the wait
 * itself.  coll_wait_all: every non-NULL request of @reqs; @statuses (may
 * be NULL) gets one entry per request; returns the first error.
 */
int coll_test(coll_request_t **req, int *done, struct coll_status *status);
int coll_wait(coll_request_t **req, struct coll_status *status);
int coll_wait_all(coll_request_t **reqs, size_t n, struct coll_status *statuses);

/* ------------------------------------------------------------ names */

size_t coll_dtype_size(coll_dtype_t dtype);		/* 0 if invalid */
const char *coll_dtype_name(coll_dtype_t dtype);	/* "float", ... */
const char *coll_redop_name(coll_redop_t op);		/* "sum", ... */
const char *coll_op_name(coll_op_t op);			/* "allreduce", ... */
/* Parse the names above (also "fp32", "half", "bf16", "int"...); -EINVAL. */
int coll_dtype_parse(const char *s, coll_dtype_t *dtype);
int coll_redop_parse(const char *s, coll_redop_t *op);
int coll_op_parse(const char *s, coll_op_t *op);

#ifdef __cplusplus
}
#endif

#endif /* COLL_H */
