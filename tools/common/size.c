// SPDX-License-Identifier: GPL-2.0
/*
 * The tools' numeric arguments (size.h): sizes with binary units and
 * whole numbers in a range.  Integer arithmetic only, so 1.5M is exactly
 * 1572864 and an overflow is seen, never rounded or wrapped.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "size.h"

#define SIZE_EXPECT "expected bytes such as 4096, 64K, 1.5M or 2GiB (K M G T: powers of 1024)"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The unit at @s: its shift (0 for none), or -1 when @s is not a unit. */
static int unit_shift(const char *s)
{
	static const char units[] = "kmgt";
	const char *u;
	int shift = 0;

	u = *s ? strchr(units, *s | 0x20) : NULL;
	if (u) {
		shift = 10 * (int)(u - units + 1);
		s++;
		/* KiB: the B must follow the i */
		if ((*s == 'i' || *s == 'I') && *++s != 'B' && *s != 'b')
			return -1;
	}
	if (*s == 'B' || *s == 'b')
		s++;
	return *s ? -1 : shift;
}

int parse_size(const char *s, uint64_t *out, char *err, size_t errlen)
{
	uint64_t whole = 0, frac = 0, pow5 = 1, v;
	int fdigits = 0, shift, d;
	const char *p = s;

	if (!s || !*s) {
		snprintf(err, errlen, "empty size: %s", SIZE_EXPECT);
		return -EINVAL;
	}
	if (*p == '-') {
		snprintf(err, errlen, "'%s': a size cannot be negative", s);
		return -EINVAL;
	}
	if (!is_digit(*p) && !(*p == '.' && is_digit(p[1]))) {
		snprintf(err, errlen, "'%s' is not a size: %s", s, SIZE_EXPECT);
		return -EINVAL;
	}
	for (; is_digit(*p); p++) {
		if (whole > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			goto range;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		for (p++; is_digit(*p); p++) {
			/* 19 digits of fraction fit; more are only zeros or refused below */
			if (fdigits == 19) {
				if (*p != '0')
					goto notwhole;
				continue;
			}
			frac = frac * 10 + (uint64_t)(*p - '0');
			fdigits++;
		}
	}
	shift = unit_shift(p);
	if (shift < 0) {
		snprintf(err, errlen, "'%s' is not a size: %s", s, SIZE_EXPECT);
		return -EINVAL;
	}
	/* frac / 10^d x 2^shift is whole when 5^d divides frac and 2^d divides the rest */
	while (fdigits && frac % 10 == 0) {
		frac /= 10;
		fdigits--;
	}
	for (d = 0; d < fdigits; d++)
		pow5 *= 5;
	if (frac % pow5)
		goto notwhole;
	frac /= pow5;
	if (fdigits > shift) {
		if (frac & ((1ull << (fdigits - shift)) - 1))
			goto notwhole;
		frac >>= fdigits - shift;
	} else if (frac > (UINT64_MAX >> (shift - fdigits))) {
		goto range;
	} else {
		frac <<= shift - fdigits;
	}
	if (shift && whole > (UINT64_MAX >> shift))
		goto range;
	v = whole << shift;
	if (v > UINT64_MAX - frac)
		goto range;
	*out = v + frac;
	return 0;
notwhole:
	snprintf(err, errlen, "'%s' is not a whole number of bytes", s);
	return -EINVAL;
range:
	snprintf(err, errlen, "'%s' is too large (at most 16E - 1 bytes)", s);
	return -ERANGE;
}

int parse_ranged(const char *s, uint64_t lo, uint64_t hi, uint64_t *out, char *err,
		 size_t errlen)
{
	uint64_t v = 0;
	const char *p = s;

	if (!s || !*s || (*p == '-' && !is_digit(p[1])) || (*p != '-' && !is_digit(*p))) {
		snprintf(err, errlen, "'%s' is not a number (expected %llu..%llu)", s ? s : "",
			 (unsigned long long)lo, (unsigned long long)hi);
		return -EINVAL;
	}
	if (*p == '-') {
		/* a negative number is out of any range we take: say so, not "garbage" */
		for (p++; is_digit(*p); p++)
			;
		if (*p)
			goto nan;
		goto range;
	}
	for (; is_digit(*p); p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) {
			while (is_digit(*p))
				p++;
			if (*p)
				goto nan;
			goto range;
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p)
		goto nan;
	if (v < lo || v > hi)
		goto range;
	*out = v;
	return 0;
nan:
	snprintf(err, errlen, "'%s' is not a number (expected %llu..%llu)", s,
		 (unsigned long long)lo, (unsigned long long)hi);
	return -EINVAL;
range:
	snprintf(err, errlen, "%s out of range %llu..%llu", s, (unsigned long long)lo,
		 (unsigned long long)hi);
	return -ERANGE;
}

const char *format_size(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "\0KMGTPE";
	int u = 0;

	while (v && !(v & 1023) && u < 6) {
		v >>= 10;
		u++;
	}
	if (u)
		snprintf(buf, len, "%llu%c", (unsigned long long)v, units[u]);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

int arg_ranged(const char *prog, const char *name, const char *s, uint64_t lo, uint64_t hi,
	       uint64_t *out)
{
	char err[160];

	if (!parse_ranged(s, lo, hi, out, err, sizeof(err)))
		return 0;
	fprintf(stderr, "%s: --%s %s\n", prog, name, err);
	return 2;
}

int cmd_arg_ranged(const char *prog, const char *cmd, const char *name, const char *s,
		   uint64_t lo, uint64_t hi, uint64_t *out)
{
	char err[160];

	if (!parse_ranged(s, lo, hi, out, err, sizeof(err)))
		return 0;
	fprintf(stderr, "%s: %s: --%s %s\n", prog, cmd, name, err);
	return -EINVAL;
}

int arg_size(const char *prog, const char *name, const char *s, uint64_t lo, uint64_t hi,
	     uint64_t *out)
{
	char err[160], l[16], h[16];
	uint64_t v;

	if (parse_size(s, &v, err, sizeof(err))) {
		fprintf(stderr, "%s: --%s: %s\n", prog, name, err);
		return 2;
	}
	if (v < lo || v > hi) {
		/* the range in the units the user writes, as coll-sim says it */
		fprintf(stderr, "%s: --%s %s out of range %s..%s\n", prog, name, s,
			format_size(lo, l, sizeof(l)), format_size(hi, h, sizeof(h)));
		return 2;
	}
	*out = v;
	return 0;
}
