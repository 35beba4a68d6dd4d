/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tools' numeric arguments, parsed one way everywhere: sizes in bytes
 * (4096, 64K, 1.5M, 2GiB; K M G T are powers of 1024) and whole numbers
 * in a range.  coll-perf, coll-sim, collctl, demo_sim and the benchmarks
 * link it, so one size means the same in all of them, and a bad one gets
 * the same words.  Plain C, no kcoll header: mpicc builds it too.
 */
#ifndef KC_TOOLS_SIZE_H
#define KC_TOOLS_SIZE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A size in bytes: decimal digits, an optional decimal fraction, an
 * optional unit K M G T (or k m g t, KiB MiB GiB TiB; powers of 1024) and
 * an optional B.  A fraction must come to a whole number of bytes (1.5K
 * is 1536; 1.3K and 0.5 are refused).  0 or -EINVAL (empty, negative,
 * garbage, not whole) or -ERANGE (above 2^64 - 1), with @err saying
 * which and naming @s.
 */
int parse_size(const char *s, uint64_t *out, char *err, size_t errlen);

/*
 * A whole decimal number in lo..hi: 0, or -EINVAL (not a number) or
 * -ERANGE (outside lo..hi) with @err as "'S' out of range LO..HI".
 */
int parse_ranged(const char *s, uint64_t lo, uint64_t hi, uint64_t *out, char *err,
		 size_t errlen);

/* @v as the shortest exact size: 8, 1K, 1536K, 64M, 1G; returns @buf. */
const char *format_size(uint64_t v, char *buf, size_t len);

/*
 * An option's value for the small tools (demo_sim, the benchmarks): as
 * parse_ranged() / parse_size(), the size also within lo..hi, and on
 * failure "PROG: --NAME ..." on stderr.  0, or 2 (the usage error's exit
 * status) to return from main().
 */
int arg_ranged(const char *prog, const char *name, const char *s, uint64_t lo, uint64_t hi,
	       uint64_t *out);
int arg_size(const char *prog, const char *name, const char *s, uint64_t lo, uint64_t hi,
	     uint64_t *out);
/*
 * The same for a subcommand's option (collctl CMD --NAME): "PROG: CMD:
 * --NAME ..." on stderr and -EINVAL, for the subcommand to return.
 */
int cmd_arg_ranged(const char *prog, const char *cmd, const char *name, const char *s,
		   uint64_t lo, uint64_t hi, uint64_t *out);

#endif
