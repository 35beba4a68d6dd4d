/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What kcoll_fuzz knows of the /dev/kcoll ioctl ABI (uapi/linux/kcoll.h),
 * in one place: a table per argument struct naming the fields whose
 * meaning the fuzzer uses to pick values, and the table of commands.
 *
 * Everything else follows from sizeof(): the byte ranges of a struct that
 * no entry names (a field appended to the header and not listed here
 * yet) are fuzzed as plain integers or pointers, are zero in well-formed
 * calls, and the sizes the fuzzer tries (too small, exact, larger with a
 * zero or non-zero tail) are derived from sizeof() and the field ends.
 * So a grown struct is covered without a change here; to make the fuzzer
 * use a new field's meaning, add one FZ_FIELD() line with the kind that
 * describes it (and, for a new flag, its bit in the command's flags).
 */
#ifndef KCOLL_FUZZ_ABI_H
#define KCOLL_FUZZ_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/linux/kcoll.h"

/* What a field holds: how kcoll_fuzz mutates it (see fz_field_value()). */
enum fz_kind {
	FZ_SIZE,	/* the leading size; chosen by the size logic */
	FZ_FLAGS,	/* zero, the command's valid bits, any other bit */
	FZ_PAD,		/* must be zero */
	FZ_OUT,		/* written by the kernel: any input */
	FZ_INT,		/* any integer: boundary values, random */
	FZ_PTR,		/* user pointer the kernel reads or writes */
	FZ_LEN,		/* a byte length */
	FZ_FD,		/* a file descriptor (eventfd) */
	FZ_HANDLE,	/* a registration handle */
	FZ_OP,		/* enum kcoll_op */
	FZ_DTYPE,	/* enum kcoll_dtype */
	FZ_REDOP,	/* enum kcoll_redop */
	FZ_RANK,	/* a rank of the communicator: rank, root */
	FZ_NRANKS,	/* a rank count */
	FZ_COUNT,	/* an element count */
	FZ_ADDR,	/* buffer address, or offset inside a registration */
	FZ_MS,		/* a timeout in milliseconds */
	FZ_CHUNK,	/* a message size */
	FZ_SLOTS,	/* receive slots per peer */
	FZ_ESIZE,	/* the caller's size of an array element */
	FZ_NUM,		/* room of an output array */
	FZ_NKINDS
};

struct fz_field {
	const char *name;
	unsigned short off, len;
	unsigned char kind;
};

#define FZ_FIELD(st, f, k) \
	{ #f, offsetof(struct st, f), sizeof(((struct st *)0)->f), k }

static const struct fz_field fz_info_fields[] = {
	FZ_FIELD(kcoll_info, size, FZ_SIZE),
	FZ_FIELD(kcoll_info, abi_version, FZ_OUT),
	FZ_FIELD(kcoll_info, features, FZ_OUT),
	FZ_FIELD(kcoll_info, ops, FZ_OUT),
	FZ_FIELD(kcoll_info, dtypes, FZ_OUT),
	FZ_FIELD(kcoll_info, redops, FZ_OUT),
	FZ_FIELD(kcoll_info, algos, FZ_OUT),
	FZ_FIELD(kcoll_info, max_ranks, FZ_OUT),
	FZ_FIELD(kcoll_info, max_inflight, FZ_OUT),
	FZ_FIELD(kcoll_info, max_reg_bytes, FZ_OUT),
	FZ_FIELD(kcoll_info, chunk_bytes, FZ_OUT),
	FZ_FIELD(kcoll_info, slots, FZ_OUT),
	FZ_FIELD(kcoll_info, timeout_ms, FZ_OUT),
	FZ_FIELD(kcoll_info, connect_timeout_ms, FZ_OUT),
	FZ_FIELD(kcoll_info, version, FZ_OUT),
	FZ_FIELD(kcoll_info, pad, FZ_PAD),
};

static const struct fz_field fz_create_fields[] = {
	FZ_FIELD(kcoll_comm_create, size, FZ_SIZE),
	FZ_FIELD(kcoll_comm_create, flags, FZ_FLAGS),
	FZ_FIELD(kcoll_comm_create, rank, FZ_RANK),
	FZ_FIELD(kcoll_comm_create, nranks, FZ_NRANKS),
	FZ_FIELD(kcoll_comm_create, ranks, FZ_PTR),
	FZ_FIELD(kcoll_comm_create, rank_size, FZ_ESIZE),
	FZ_FIELD(kcoll_comm_create, eventfd, FZ_FD),
	FZ_FIELD(kcoll_comm_create, algo, FZ_PTR),
	FZ_FIELD(kcoll_comm_create, timeout_ms, FZ_MS),
	FZ_FIELD(kcoll_comm_create, connect_timeout_ms, FZ_MS),
	FZ_FIELD(kcoll_comm_create, chunk_bytes, FZ_CHUNK),
	FZ_FIELD(kcoll_comm_create, slots, FZ_SLOTS),
	FZ_FIELD(kcoll_comm_create, comm_id, FZ_OUT),
	FZ_FIELD(kcoll_comm_create, secret, FZ_PTR),
	FZ_FIELD(kcoll_comm_create, secret_len, FZ_LEN),
	FZ_FIELD(kcoll_comm_create, pad, FZ_PAD),
};

static const struct fz_field fz_reg_fields[] = {
	FZ_FIELD(kcoll_mem_reg, size, FZ_SIZE),
	FZ_FIELD(kcoll_mem_reg, flags, FZ_FLAGS),
	FZ_FIELD(kcoll_mem_reg, addr, FZ_ADDR),
	FZ_FIELD(kcoll_mem_reg, len, FZ_LEN),
	FZ_FIELD(kcoll_mem_reg, handle, FZ_OUT),
};

static const struct fz_field fz_dereg_fields[] = {
	FZ_FIELD(kcoll_mem_dereg, size, FZ_SIZE),
	FZ_FIELD(kcoll_mem_dereg, flags, FZ_FLAGS),
	FZ_FIELD(kcoll_mem_dereg, handle, FZ_HANDLE),
};

static const struct fz_field fz_submit_fields[] = {
	FZ_FIELD(kcoll_submit, size, FZ_SIZE),
	FZ_FIELD(kcoll_submit, flags, FZ_FLAGS),
	FZ_FIELD(kcoll_submit, op, FZ_OP),
	FZ_FIELD(kcoll_submit, dtype, FZ_DTYPE),
	FZ_FIELD(kcoll_submit, redop, FZ_REDOP),
	FZ_FIELD(kcoll_submit, root, FZ_RANK),
	FZ_FIELD(kcoll_submit, count, FZ_COUNT),
	FZ_FIELD(kcoll_submit, send.handle, FZ_HANDLE),
	FZ_FIELD(kcoll_submit, send.addr, FZ_ADDR),
	FZ_FIELD(kcoll_submit, recv.handle, FZ_HANDLE),
	FZ_FIELD(kcoll_submit, recv.addr, FZ_ADDR),
	FZ_FIELD(kcoll_submit, scounts, FZ_PTR),
	FZ_FIELD(kcoll_submit, sdispls, FZ_PTR),
	FZ_FIELD(kcoll_submit, rcounts, FZ_PTR),
	FZ_FIELD(kcoll_submit, rdispls, FZ_PTR),
	FZ_FIELD(kcoll_submit, cookie, FZ_INT),
	FZ_FIELD(kcoll_submit, op_id, FZ_OUT),
};

static const struct fz_field fz_reap_fields[] = {
	FZ_FIELD(kcoll_reap, size, FZ_SIZE),
	FZ_FIELD(kcoll_reap, flags, FZ_FLAGS),
	FZ_FIELD(kcoll_reap, entries, FZ_PTR),
	FZ_FIELD(kcoll_reap, max, FZ_NUM),
	FZ_FIELD(kcoll_reap, count, FZ_OUT),
	FZ_FIELD(kcoll_reap, entry_size, FZ_ESIZE),
	FZ_FIELD(kcoll_reap, timeout_ms, FZ_MS),
};

static const struct fz_field fz_abort_fields[] = {
	FZ_FIELD(kcoll_abort, size, FZ_SIZE),
	FZ_FIELD(kcoll_abort, flags, FZ_FLAGS),
};

static const struct fz_field fz_fault_fields[] = {
	FZ_FIELD(kcoll_fault, size, FZ_SIZE),
	FZ_FIELD(kcoll_fault, kind, FZ_OUT),
	FZ_FIELD(kcoll_fault, op_id, FZ_OUT),
	FZ_FIELD(kcoll_fault, status, FZ_OUT),
	FZ_FIELD(kcoll_fault, rank, FZ_OUT),
	FZ_FIELD(kcoll_fault, reporter, FZ_OUT),
	FZ_FIELD(kcoll_fault, pid, FZ_OUT),
	FZ_FIELD(kcoll_fault, code, FZ_OUT),
	FZ_FIELD(kcoll_fault, pad, FZ_OUT),
	FZ_FIELD(kcoll_fault, fp_rank, FZ_OUT),
	FZ_FIELD(kcoll_fault, fp_mine, FZ_OUT),
};

static const struct fz_field fz_peers_fields[] = {
	FZ_FIELD(kcoll_peers, size, FZ_SIZE),
	FZ_FIELD(kcoll_peers, nranks, FZ_NUM),
	FZ_FIELD(kcoll_peers, fates, FZ_PTR),
};

/* Flag bits a command accepts; a bit defined by a newer header joins here. */
#ifdef KCOLL_MEM_REG_RDONLY
#define FZ_REG_FLAGS	KCOLL_MEM_REG_RDONLY
#else
#define FZ_REG_FLAGS	0
#endif

/* The commands, indexed by enum fz_cmd_id (the _IOC_NR of each). */
enum fz_cmd_id {
	FZ_INFO, FZ_CREATE, FZ_REG, FZ_DEREG, FZ_SUBMIT, FZ_REAP, FZ_ABORT, FZ_FAULT,
	FZ_PEERS,
	FZ_NCMDS,
	FZ_BADCMD = FZ_NCMDS	/* statistics bucket of every other number */
};

struct fz_cmd {
	const char *name;
	unsigned long nr;	/* the command as the header defines it */
	size_t size;		/* sizeof() of today's struct */
	const struct fz_field *fields;
	unsigned int nfields;
	uint32_t flags;		/* valid flag bits */
	size_t esize;		/* element size an FZ_ESIZE field describes */
};

#define FZ_CMD(n, c, st, f, fl, es) \
	{ n, c, sizeof(struct st), f, sizeof(f) / sizeof(f[0]), fl, es }

static const struct fz_cmd fz_cmds[FZ_NCMDS] = {
	[FZ_INFO] = FZ_CMD("info", KCOLL_IOC_INFO, kcoll_info, fz_info_fields, 0, 0),
	[FZ_CREATE] = FZ_CMD("comm_create", KCOLL_IOC_COMM_CREATE, kcoll_comm_create,
			     fz_create_fields, 0, sizeof(struct kcoll_rank)),
	[FZ_REG] = FZ_CMD("mem_reg", KCOLL_IOC_MEM_REG, kcoll_mem_reg, fz_reg_fields,
			  FZ_REG_FLAGS, 0),
	[FZ_DEREG] = FZ_CMD("mem_dereg", KCOLL_IOC_MEM_DEREG, kcoll_mem_dereg, fz_dereg_fields,
			    0, 0),
	[FZ_SUBMIT] = FZ_CMD("submit", KCOLL_IOC_SUBMIT, kcoll_submit, fz_submit_fields, 0, 0),
	[FZ_REAP] = FZ_CMD("reap", KCOLL_IOC_REAP, kcoll_reap, fz_reap_fields,
			   KCOLL_REAP_WAIT, sizeof(struct kcoll_completion)),
	[FZ_ABORT] = FZ_CMD("abort", KCOLL_IOC_ABORT, kcoll_abort, fz_abort_fields, 0, 0),
	[FZ_FAULT] = FZ_CMD("fault", KCOLL_IOC_FAULT, kcoll_fault, fz_fault_fields, 0, 0),
	[FZ_PEERS] = FZ_CMD("peers", KCOLL_IOC_PEERS, kcoll_peers, fz_peers_fields, 0, 0),
};

#endif /* KCOLL_FUZZ_ABI_H */
