// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_fuzz: argument structs from a command's field table.
 *
 * A builder (kcoll_fuzz_build.c) makes a valid struct of today's size;
 * fz_emit() then decides what the kernel gets: the size field (exact
 * mostly; else too small, each field's end, larger with a zero or a
 * non-zero tail, a page and past it), where the struct sits (page
 * aligned, misaligned, or running into a guard page), and a few fields
 * replaced by values of their kind (fz_field_value()).  Bytes no table
 * entry names (a field appended to the ABI) are zero unless mutated, and
 * then get integers or pointers: new fields are covered without a change.
 */
#include <string.h>

#include "kcoll_fuzz.h"

uint32_t fz_pick_size(struct fz_rng *r, const struct fz_cmd *cmd)
{
	const struct fz_field *f = &cmd->fields[fz_below(r, cmd->nfields)];
	uint32_t sz = cmd->size;

	switch (fz_below(r, 10)) {
	case 0:
		return f->off;			/* the field just left out */
	case 1:
		return f->off + f->len;		/* up to the field's end */
	case 2:
		return f->off + fz_range(r, 1, f->len);	/* ends inside the field */
	case 3:
		return sz - (uint32_t)fz_range(r, 1, 8);
	case 4:
		return sz + (uint32_t)fz_range(r, 1, 16);
	case 5:
		return sz + 8 * (uint32_t)fz_range(r, 1, 64);
	case 6:
		return FZ_PICK(r, 4095, 4096, 4097, 8192, 65536);
	case 7:
		return FZ_PICK(r, 0, 1, 3, 4, 7, 8);
	case 8:
		return (uint32_t)fz_int(r, 4);
	default:
		return sz + (uint32_t)fz_below(r, 4096 - sz + 1);	/* up to a page */
	}
}

/*
 * Where the struct goes: the start of the struct area mostly, sometimes
 * misaligned, sometimes so that it runs into the guard page after it.
 */
uint8_t *fz_place(struct fz_thread *t, uint32_t size)
{
	uint32_t k;

	if (fz_permille(&t->rng, 50))
		return t->st + fz_range(&t->rng, 1, 7);
	if (fz_permille(&t->rng, 60) && size > 1 && size <= FZ_STRUCT_LEN) {
		k = (uint32_t)fz_range(&t->rng, 1, size - 1);	/* bytes before the guard */
		return t->st + FZ_STRUCT_LEN - k;
	}
	return t->st;
}

/* Bytes of [0, cmd->size) no field of the table names. */
static bool fz_unnamed(const struct fz_cmd *cmd, uint32_t off)
{
	unsigned int i;

	for (i = 0; i < cmd->nfields; i++)
		if (off >= cmd->fields[i].off && off < cmd->fields[i].off + cmd->fields[i].len)
			return false;
	return true;
}

static void fz_store(struct fz_call *c, uint32_t room, uint32_t off, uint32_t len, uint64_t v)
{
	if (off >= room)
		return;
	if (len > room - off)
		len = room - off;
	memcpy(c->arg + off, &v, len > 8 ? 8 : len);	/* little endian */
}

uint64_t fz_field_value(struct fz_thread *t, const struct fz_cmd *cmd,
			const struct fz_field *f, int slot, int nranks)
{
	struct fz_rng *r = &t->rng;
	uint64_t es = cmd->esize ? cmd->esize : 32;

	switch (f->kind) {
	case FZ_SIZE:
		return fz_pick_size(r, cmd);
	case FZ_FLAGS:
		if (fz_permille(r, 300))
			return cmd->flags;
		if (fz_permille(r, 700))
			return 1ULL << fz_below(r, f->len * 8);
		return fz_int(r, f->len);
	case FZ_PAD:
		return fz_permille(r, 500) ? 1 : fz_int(r, f->len);
	case FZ_PTR:
		return fz_ptr_any(r, &t->ep->mem, fz_below(r, 4097), t->cur);
	case FZ_ADDR:
		/* A user pointer, or an offset inside a registration. */
		if (fz_permille(r, 500))
			return fz_ptr_any(r, &t->ep->mem, fz_below(r, 65537), t->cur);
		return fz_permille(r, 500) ? fz_below(r, 1u << 20) : fz_int(r, 8);
	case FZ_LEN:
		if (fz_permille(r, 300))
			return fz_int(r, f->len);
		return FZ_PICK(r, 0, 1, 7, 8, 15, 16, 256, 257, 4095, 4096, 4097, 65536, 1u << 20,
			       (1u << 20) + 1,
			       1ULL << 36, (1ULL << 36) + 1, 1ULL << 63, UINT64_MAX,
			       UINT64_MAX - 4095);
	case FZ_FD:
		return (uint32_t)fz_fd_value(t);
	case FZ_HANDLE:
		return fz_handle_value(t, slot);
	case FZ_OP:
		return fz_permille(r, 700) ? fz_below(r, KCOLL_OP_COUNT) :
		       FZ_PICK(r, KCOLL_OP_COUNT, KCOLL_OP_COUNT + 1, 0xffffffff, 0x80000000);
	case FZ_DTYPE:
		return fz_permille(r, 700) ? fz_below(r, KCOLL_DTYPE_COUNT) :
		       FZ_PICK(r, KCOLL_DTYPE_COUNT, KCOLL_DTYPE_COUNT + 1, 0xffffffff, 255);
	case FZ_REDOP:
		return fz_permille(r, 700) ? fz_below(r, KCOLL_REDOP_COUNT) :
		       FZ_PICK(r, KCOLL_REDOP_COUNT, KCOLL_REDOP_COUNT + 1, 0xffffffff, 255);
	case FZ_RANK:
		if (fz_permille(r, 600))
			return fz_below(r, nranks > 0 ? nranks : 1);
		return FZ_PICK(r, nranks, nranks + 1, 0xffffffff, 0x80000000, 4095, 4096);
	case FZ_NRANKS:
		if (fz_permille(r, 600))
			return FZ_PICK(r, 1, 1, 1, 2, 3);
		return FZ_PICK(r, 0, t->ep->cfg->max_ranks, t->ep->cfg->max_ranks + 1ULL,
			       0xffffffff, 0x80000000, 64, 65);
	case FZ_COUNT:
		if (fz_permille(r, 400))
			return fz_range(r, 0, 64);
		if (fz_permille(r, 400))
			return fz_int(r, 8);
		return FZ_PICK(r, 1ULL << 32, (1ULL << 32) + 1, 1ULL << 33, 1ULL << 36,
			       (1ULL << 36) / 8, (1ULL << 36) / 8 + 1, 1ULL << 62, 1ULL << 63,
			       UINT64_MAX, UINT64_MAX / 2, UINT64_MAX / 8 + 1, 262144, 262145);
	case FZ_MS:
		return FZ_PICK(r, 0, 1, 9, 10, 11, 100, 1000, 3600000, 3600001, 0xffffffff,
			       0x80000000);
	case FZ_CHUNK:
		return FZ_PICK(r, 0, 8, 4088, 4095, 4096, 4097, 4100, 8192, 65536,
			       31 * 4096, 31 * 4096 + 1, 31 * 4096 + 8, 1u << 20, 0xffffffff);
	case FZ_SLOTS:
		return FZ_PICK(r, 0, 1, 2, 16, 63, 64, 65, 0xffffffff, 0x80000000);
	case FZ_ESIZE:
		return FZ_PICK(r, 0, 1, es - 1, es, es + 1, es + 8, 64, 4095, 4096, 4097,
			       0xffffffff);
	case FZ_NUM:
		return FZ_PICK(r, 0, 1, 2, 64, 255, 256, 257, 1024, 0xffffffff);
	default:	/* FZ_OUT, FZ_INT and anything newer */
		return fz_int(r, f->len);
	}
}

/* Replace one field, or a word of the bytes no field names. */
static void fz_mutate(struct fz_thread *t, struct fz_call *c, const struct fz_cmd *cmd,
		      uint32_t room)
{
	const struct fz_field *f;
	uint32_t off, tries;

	if (fz_permille(&t->rng, 100)) {
		for (tries = 0; tries < 8; tries++) {
			off = (uint32_t)fz_below(&t->rng, cmd->size / 4) * 4;
			if (!fz_unnamed(cmd, off))
				continue;
			fz_store(c, room, off, off % 8 ? 4 : 8,
				 fz_permille(&t->rng, 500) ?
				 fz_ptr_any(&t->rng, &t->ep->mem, 64, c->arg) :
				 fz_int(&t->rng, off % 8 ? 4 : 8));
			return;
		}
	}
	f = &cmd->fields[fz_below(&t->rng, cmd->nfields)];
	fz_store(c, room, f->off, f->len, fz_field_value(t, cmd, f, c->slot, c->nranks));
}

/*
 * Put @valid (a struct of cmd->size bytes) where the kernel will read it,
 * with its size, tail and, one time in 1000 / @mutate_pm, mutated fields.
 */
void fz_emit(struct fz_thread *t, struct fz_call *c, const struct fz_cmd *cmd,
	     const void *valid, unsigned int mutate_pm)
{
	struct fz_rng *r = &t->rng;
	uint32_t size = cmd->size, room, n, i, muts = 0;

	if (fz_permille(r, 150))
		size = fz_pick_size(r, cmd);
	c->arg = fz_place(t, size);
	t->cur = c->arg;
	room = (uint32_t)(t->st + FZ_STRUCT_LEN - c->arg);
	n = size > cmd->size ? size : (uint32_t)cmd->size;
	if (n > room)
		n = room;
	/* What the struct holds, then a tail of zeros... */
	memcpy(c->arg, valid, cmd->size < n ? cmd->size : n);
	if (n > cmd->size)
		memset(c->arg + cmd->size, 0, n - cmd->size);
	/* ...or not: non-zero bytes the kernel does not know. */
	if (size > cmd->size && size <= room && fz_permille(r, 400))
		c->arg[cmd->size + fz_below(r, size - cmd->size)] = (uint8_t)fz_range(r, 1, 255);
	if (fz_permille(r, mutate_pm))
		muts = (uint32_t)fz_range(r, 1, 3);
	fz_store(c, room, 0, 4, size);
	for (i = 0; i < muts; i++)
		fz_mutate(t, c, cmd, room);
	if (room < 4)
		c->size = size;
	else
		memcpy(&c->size, c->arg, 4);
	c->wellformed = !muts && size == cmd->size && c->arg == t->st;
}

/* Bytes from the struct to the guard page; 0 when it is not in the area. */
static uint32_t fz_room(const struct fz_call *c, const struct fz_thread *t)
{
	if (c->arg < t->st || c->arg >= t->st + FZ_STRUCT_LEN)
		return 0;
	return (uint32_t)(t->st + FZ_STRUCT_LEN - c->arg);
}

/* Read back a field as the kernel will see it (0 beyond the size). */
uint64_t fz_get(const struct fz_call *c, const struct fz_thread *t, uint32_t off, uint32_t len)
{
	uint32_t room = fz_room(c, t);
	uint64_t v = 0;

	if (off + len > c->size || off + len > room)
		return 0;
	memcpy(&v, c->arg + off, len > 8 ? 8 : len);
	return v;
}

/* Write a field the kernel will read; false when the size leaves it out. */
bool fz_set(struct fz_call *c, const struct fz_thread *t, uint32_t off, uint32_t len, uint64_t v)
{
	uint32_t room = fz_room(c, t);

	if (off + len > c->size || off + len > room)
		return false;
	memcpy(c->arg + off, &v, len > 8 ? 8 : len);
	return true;
}
