// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_fuzz: the random generator and boundary-biased integers.
 *
 * xoshiro256** seeded through splitmix64: every thread of every epoch has
 * a stream of its own, derived from the run's seed, the epoch and the
 * thread, so one seed names one sequence of calls per thread (the
 * interleaving of threads, and what the kernel answers, still vary).
 *
 * Integers are what syzkaller calls "special": most are the values where
 * checks go wrong (0, 1, the largest value, one past it, powers of two and
 * their neighbours, the sign bit), a few are uniformly random.
 */
#include "kcoll_fuzz.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void fz_seed(struct fz_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1342543de82ef95ULL);
	unsigned int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
	if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
		r->s[0] = 1;
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t fz_rand(struct fz_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

uint64_t fz_below(struct fz_rng *r, uint64_t n)
{
	/* Lemire's multiply-shift; the bias is irrelevant for fuzzing. */
	return n ? (uint64_t)(((unsigned __int128)fz_rand(r) * n) >> 64) : 0;
}

uint64_t fz_range(struct fz_rng *r, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return lo;
	if (hi - lo == UINT64_MAX)
		return fz_rand(r);
	return lo + fz_below(r, hi - lo + 1);
}

bool fz_permille(struct fz_rng *r, unsigned int pm)
{
	return fz_below(r, 1000) < pm;
}

uint64_t fz_pick(struct fz_rng *r, const uint64_t *v, size_t n)
{
	return v[fz_below(r, n)];
}

uint64_t fz_int(struct fz_rng *r, unsigned int bytes)
{
	unsigned int bits = bytes >= 8 ? 64 : bytes * 8;
	uint64_t mask = bits == 64 ? UINT64_MAX : (1ULL << bits) - 1;
	uint64_t v;

	switch (fz_below(r, 12)) {
	case 0:
		v = 0;
		break;
	case 1:
		v = fz_range(r, 1, 16);
		break;
	case 2:
		v = mask;				/* -1 */
		break;
	case 3:
		v = mask - fz_below(r, 16);		/* -1 .. -16 */
		break;
	case 4:
		v = 1ULL << (bits - 1);			/* the sign bit */
		break;
	case 5:
		v = (1ULL << (bits - 1)) - 1;		/* the largest signed */
		break;
	case 6:
	case 7:
		v = 1ULL << fz_below(r, bits);		/* 2^k */
		break;
	case 8:
		v = (1ULL << fz_below(r, bits)) + FZ_PICK(r, -1ULL, 1);	/* 2^k +- 1 */
		break;
	case 9:
		v = fz_below(r, 4096);
		break;
	default:
		v = fz_rand(r);
		break;
	}
	return v & mask;
}
