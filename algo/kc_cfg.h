/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HCCL_ALGO configuration strings (Documentation/algorithms.md,
 * "HCCL_ALGO"), parsed in the kernel for sysfs writes and in user space for
 * coll-sim:
 *
 *   level0:NA;level1:H-D_R;level2:NHR                  (global)
 *   allreduce=level0:NA;level1:AHC/allgather=level1:NB  (per operation)
 *   others=level1:ring/broadcast=level1:NHR             (others = default)
 *
 * Spaces are ignored anywhere, also inside names, as HCCL removes every
 * space first; level, operation and algorithm names are accepted in any
 * case, so HCCL's own strings parse unchanged.  A ';' must be followed by
 * a level, as in HCCL: a trailing ';' is refused, with or without spaces
 * around it.  Algorithms: the HCCL tokens ring, H-D_R, NHR, NB, AHC,
 * AHC_BROKE, pipeline, pairwise, fullmesh, NA and null (NA/null:
 * automatic), plus kcoll's mesh and tree.  NHR_V1 is refused with a
 * message.  level3 is refused: kcoll has three levels (0 server, 1
 * super-node, 2 cluster) and a setting that does nothing would hide a typo.
 */
#ifndef KC_CFG_H
#define KC_CFG_H

#include "kc_coll.h"

#define KC_CFG_LEVELS	KCOLL_LEVEL_COUNT	/* level0..level2 */
#define KC_CFG_OTHERS	KCOLL_OP_COUNT		/* the others= entry */
#define KC_CFG_GLOBAL	(KCOLL_OP_COUNT + 1)	/* the global form */
#define KC_CFG_KEYS	(KCOLL_OP_COUNT + 2)
#define KC_CFG_MAX_LEN	1024			/* longest string accepted */
/* Room for kc_cfg_strerror() of any string: itself twice, the caret line, the rest. */
#define KC_CFG_ERR_LEN	(3 * KC_CFG_MAX_LEN + 768)

struct kc_algo_conf {
	u8 algo[KC_CFG_KEYS][KC_CFG_LEVELS];	/* enum kcoll_algo; AUTO unset */
	u32 keys;				/* bit k: entry k present */
};

/* What is wrong with a refused string (struct kc_cfg_err.kind). */
enum kc_cfg_fault {
	KC_CFG_E_NONE,
	KC_CFG_E_CHAR,		/* a character no name or separator has */
	KC_CFG_E_NAME_LONG,	/* a name longer than any known one */
	KC_CFG_E_STR_LONG,	/* the string is over KC_CFG_MAX_LEN */
	KC_CFG_E_LEVEL,		/* unknown level name */
	KC_CFG_E_LEVEL3,	/* level3: HCCL's, not used by kcoll */
	KC_CFG_E_COLON,		/* a level without ':' after it */
	KC_CFG_E_NO_ALGO,	/* nothing after "levelN:" */
	KC_CFG_E_ALGO,		/* unknown algorithm name */
	KC_CFG_E_NHR_V1,	/* HCCL's NHR_V1, not implemented */
	KC_CFG_E_LEVEL0,	/* a multi-level algorithm at level0 */
	KC_CFG_E_LEVEL_TWICE,	/* a level given twice in one entry */
	KC_CFG_E_EMPTY_LEVEL,	/* ";;" or a leading ';' */
	KC_CFG_E_TRAILING,	/* a ';' with no level after it */
	KC_CFG_E_SEPARATOR,	/* a separator where a name belongs, or vice versa */
	KC_CFG_E_SLASH,		/* '/' in the global form */
	KC_CFG_E_MIXED,		/* global and per-operation forms together */
	KC_CFG_E_OP,		/* unknown operation name */
	KC_CFG_E_EQUALS,	/* an operation without '=' after it */
	KC_CFG_E_OP_TWICE,	/* an operation given twice */
	KC_CFG_E_EMPTY_OP,	/* "//", a leading or trailing '/' */
	KC_CFG_E_NULL,		/* level0:null in a per-operation entry */
};

/*
 * Where and why a string was refused.  It holds no text of the string
 * (the kernel must not print what a user wrote), only offsets into it:
 * kc_cfg_strerror() quotes the string where the caller may show it.
 */
struct kc_cfg_err {
	u32 kind;		/* enum kc_cfg_fault */
	u32 off, len;		/* the fault: 0-based byte offset and length in the string */
	u32 qoff, qlen;		/* the part of the string the message quotes (qlen 0: none) */
	const char *what;	/* the fault without the string's text: "unknown algorithm" */
	const char *pre, *post;	/* the same around the quoted part: unknown algorithm "x" */
	const char *expected;	/* the expected form; NULL: the list kind implies */
	const char *hint;	/* the known name nearest the faulty one, or NULL */
};

/*
 * Parse @s into @conf.  Returns 0, or -EINVAL with @conf untouched and
 * @e saying where and why.  An empty string is valid and configures
 * nothing.
 */
int kc_cfg_parse_ex(const char *s, struct kc_algo_conf *conf, struct kc_cfg_err *e);

/*
 * Render @e: with the string @s, the message of every user-space tool
 * (@s quoted, echoed with a caret under the fault, the expected form and
 * "did you mean"); with @s NULL, one line without any text of the string,
 * for the kernel log.  Returns the length written (truncated to @len).
 */
u32 kc_cfg_strerror(const char *s, const struct kc_cfg_err *e, char *buf, u32 len);

/* kc_cfg_parse_ex() with kc_cfg_strerror(@s, ...) into @err (may be NULL). */
int kc_cfg_parse(const char *s, struct kc_algo_conf *conf, char *err, u32 errlen);

/*
 * The per-level algorithms @conf gives operation @op, HCCL semantics:
 * the op's own entry, else others=, else the global form; level1 AHC or
 * AHC_BROKE also governs level2.  An algorithm that cannot run @op falls
 * back to automatic selection for this op only; the fallback is reported
 * in @note (may be NULL) and the return value is the number of levels
 * that fell back.  out->conf keeps what was configured before the
 * fallback, for plan building to report (struct kc_algo_cfg).
 */
u32 kc_cfg_for_op(const struct kc_algo_conf *conf, u32 op, struct kc_algo_cfg *out,
		  char *note, u32 notelen);

/* Write @conf back in HCCL_ALGO form (for sysfs reads); returns length. */
u32 kc_cfg_format(const struct kc_algo_conf *conf, char *buf, u32 len);

/* The HCCL_ALGO token of an algorithm ("H-D_R", "NA" for AUTO). */
const char *kc_cfg_algo_token(u32 algo);

#endif /* KC_CFG_H */
