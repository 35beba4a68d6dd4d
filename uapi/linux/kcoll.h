/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kcoll: collective communication over RDMA, user-space ABI.
 *
 * This header is shared by the kernel module, libcoll and the algorithm
 * core in algo/.  It may include <linux/types.h> and <linux/ioctl.h> only.
 *
 * The enums below are part of the ABI: values never change meaning and new
 * values are only ever appended before the *_COUNT sentinel.
 */
#ifndef _UAPI_LINUX_KCOLL_H
#define _UAPI_LINUX_KCOLL_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define KCOLL_ABI_VERSION	1

/*
 * ioctl magic.  0xC7 is not assigned in
 * Documentation/userspace-api/ioctl/ioctl-number.rst; kcoll reserves it.
 */
#define KCOLL_IOC_MAGIC		0xC7

/* Collective operations. */
enum kcoll_op {
	KCOLL_OP_ALLREDUCE	= 0,
	KCOLL_OP_REDUCESCATTER	= 1,
	KCOLL_OP_ALLGATHER	= 2,
	KCOLL_OP_BROADCAST	= 3,
	KCOLL_OP_REDUCE		= 4,
	KCOLL_OP_SCATTER	= 5,
	KCOLL_OP_GATHER		= 6,
	KCOLL_OP_ALLTOALL	= 7,
	KCOLL_OP_ALLTOALLV	= 8,
	KCOLL_OP_BARRIER	= 9,
	KCOLL_OP_COUNT
};

/* Element types. */
enum kcoll_dtype {
	KCOLL_INT8	= 0,
	KCOLL_UINT8	= 1,
	KCOLL_INT16	= 2,
	KCOLL_UINT16	= 3,
	KCOLL_INT32	= 4,
	KCOLL_UINT32	= 5,
	KCOLL_INT64	= 6,
	KCOLL_UINT64	= 7,
	KCOLL_FP16	= 8,
	KCOLL_BF16	= 9,
	KCOLL_FP32	= 10,
	KCOLL_FP64	= 11,
	KCOLL_DTYPE_COUNT
};

/* Reduction operators. */
enum kcoll_redop {
	KCOLL_SUM	= 0,
	KCOLL_PROD	= 1,
	KCOLL_MAX	= 2,
	KCOLL_MIN	= 3,
	KCOLL_AVG	= 4,
	KCOLL_REDOP_COUNT
};

/*
 * Algorithms, selectable per topology level.  KCOLL_ALGO_AUTO lets the
 * cost model choose.  Names follow HCCL_ALGO tokens where one exists.
 */
enum kcoll_algo {
	KCOLL_ALGO_AUTO		= 0,
	KCOLL_ALGO_MESH		= 1,	/* "mesh", HCCL "fullmesh" */
	KCOLL_ALGO_RING		= 2,	/* "ring" */
	KCOLL_ALGO_RHD		= 3,	/* "H-D_R" */
	KCOLL_ALGO_NHR		= 4,	/* "NHR" */
	KCOLL_ALGO_NB		= 5,	/* "NB" */
	KCOLL_ALGO_PAIRWISE	= 6,	/* "pairwise" */
	KCOLL_ALGO_TREE		= 7,	/* "tree": NCCL double binary tree */
	KCOLL_ALGO_PIPELINE	= 8,	/* "pipeline" */
	KCOLL_ALGO_AHC		= 9,	/* "AHC" */
	KCOLL_ALGO_AHC_BROKE	= 10,	/* "AHC_BROKE" */
	KCOLL_ALGO_COUNT
};

/* Topology levels, as in HCCL_ALGO. */
enum kcoll_level {
	KCOLL_LEVEL0	= 0,	/* inside a server */
	KCOLL_LEVEL1	= 1,	/* between servers of a super-node */
	KCOLL_LEVEL2	= 2,	/* between super-nodes */
	KCOLL_LEVEL_COUNT
};

#endif /* _UAPI_LINUX_KCOLL_H */
