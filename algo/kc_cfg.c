// SPDX-License-Identifier: GPL-2.0
/*
 * HCCL_ALGO parser (see kc_cfg.h).  A small lexer hands out words and
 * separators with their position in the original string, skipping spaces
 * (also inside words, as HCCL strips every space first); the parser fills
 * a scratch copy of the configuration and commits it only when the whole
 * string is valid, so a bad write leaves the previous setting in force.
 */
#include "kc_cfg.h"

#define KC_CFG_WORD	32
/* Room for the list of algorithm names in an error message. */
#define KC_CFG_LIST	256

#define KC_CFG_FORM "level0:NA;level1:<algo> or <op>=level0:NA;level1:<algo>/<op>=..."

struct kc_lex {
	const char *s;
	u32 pos;		/* next character */
	u32 tpos;		/* position of the current token */
	char tok;		/* 'w' word, one of ":;=/", 0 end, '?' bad */
	char word[KC_CFG_WORD];
	char *err;
	u32 errlen;
};

static const char *const kc_cfg_ops[KC_CFG_OTHERS + 1] = {
	[KCOLL_OP_ALLREDUCE] = "allreduce",
	[KCOLL_OP_REDUCESCATTER] = "reducescatter",
	[KCOLL_OP_ALLGATHER] = "allgather",
	[KCOLL_OP_BROADCAST] = "broadcast",
	[KCOLL_OP_REDUCE] = "reduce",
	[KCOLL_OP_SCATTER] = "scatter",
	[KCOLL_OP_GATHER] = "gather",
	[KCOLL_OP_ALLTOALL] = "alltoall",
	[KCOLL_OP_ALLTOALLV] = "alltoallv",
	[KCOLL_OP_BARRIER] = "barrier",
	[KC_CFG_OTHERS] = "others",
};

/* HCCL point-to-point keys: accepted so HCCL strings parse, no effect here. */
static const char *const kc_cfg_p2p[] = { "send", "receive", "sendrecv", "alltoallvc" };

static char kc_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static bool kc_ieq(const char *a, const char *b)
{
	while (*a && kc_lower(*a) == kc_lower(*b)) {
		a++;
		b++;
	}
	return !*a && !*b;
}

static bool kc_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool kc_is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

static int kc_lex_fail(struct kc_lex *x, u32 pos, const char *what, const char *expected)
{
	if (x->err && x->errlen)
		kc_snprintf(x->err, x->errlen, "HCCL_ALGO: %s at position %u; expected %s",
			    what, pos, expected);
	return -EINVAL;
}

/* Advance to the next token; 0 or -EINVAL (bad character, word too long). */
static int kc_lex_next(struct kc_lex *x)
{
	u32 n = 0;
	char c;

	while (kc_is_space(x->s[x->pos]))
		x->pos++;
	x->tpos = x->pos;
	c = x->s[x->pos];
	if (!c) {
		x->tok = 0;
		return 0;
	}
	if (c == ':' || c == ';' || c == '=' || c == '/') {
		x->tok = c;
		x->pos++;
		return 0;
	}
	if (!kc_is_word(c)) {
		x->tok = '?';
		return kc_lex_fail(x, x->tpos, "unexpected character",
				   "letters, digits, '-', '_' and the separators : ; = /");
	}
	for (;;) {
		c = x->s[x->pos];
		if (kc_is_space(c)) {
			x->pos++;
			continue;
		}
		if (!kc_is_word(c))
			break;
		if (n + 1 >= KC_CFG_WORD)
			return kc_lex_fail(x, x->tpos, "name too long",
					   "a level, operation or algorithm name");
		x->word[n++] = c;
		x->pos++;
	}
	x->word[n] = '\0';
	x->tok = 'w';
	return 0;
}

/* Does word w name algorithm a (its HCCL token or an alias)? */
static bool kc_cfg_names(const struct kc_algo_ops *a, const char *w)
{
	const char *const *al;

	if (kc_ieq(w, a->hccl))
		return true;
	for (al = a->aliases; al && *al; al++)
		if (kc_ieq(w, *al))
			return true;
	return false;
}

/* Every algorithm token, in table order, after @pos in @buf. */
static u32 kc_cfg_tokens(char *buf, u32 len, u32 pos)
{
	const char *const *al;
	u32 i;

	for (i = 0; i < kc_algo_table_len && pos < len; i++) {
		const struct kc_algo_ops *a = kc_algo_table[i];

		pos += kc_snprintf(buf + pos, len - pos, "%s, ", a->hccl);
		for (al = a->aliases; al && *al && pos < len; al++)
			pos += kc_snprintf(buf + pos, len - pos, "%s, ", *al);
	}
	return pos;
}

/* The multi-level algorithms, in selection's order, those it never tries last. */
static void kc_cfg_builders(char *buf, u32 len)
{
	u32 ids[KCOLL_ALGO_COUNT], n, i, k, pos = 0;

	n = kc_algo_auto_list(true, ids);
	for (i = 0; i < kc_algo_table_len && n < KCOLL_ALGO_COUNT; i++)
		if (kc_algo_table[i]->build && !kc_algo_table[i]->auto_rank)
			ids[n++] = kc_algo_table[i]->id;
	buf[0] = '\0';
	for (k = 0; k < n && pos < len; k++)
		pos += kc_snprintf(buf + pos, len - pos, "%s%s",
				   !k ? "" : k + 1 < n ? ", " : " and ", kc_algo_get(ids[k])->hccl);
}

static int kc_cfg_algo(struct kc_lex *x, u32 level, u8 *algo)
{
	char list[KC_CFG_LIST];
	u32 i;

	if (x->tok != 'w') {
		i = kc_snprintf(list, sizeof(list), "an algorithm (");
		i = kc_cfg_tokens(list, sizeof(list), i);
		if (i < sizeof(list))
			kc_snprintf(list + i, sizeof(list) - i, "NA)");
		return kc_lex_fail(x, x->tpos, "missing algorithm after ':'", list);
	}
	if (kc_ieq(x->word, "NHR_V1"))
		return kc_lex_fail(x, x->tpos, "NHR_V1 is not implemented by kcoll",
				   "NHR (same semantics, log2 steps)");
	if (kc_ieq(x->word, "NA") || kc_ieq(x->word, "null")) {
		*algo = KCOLL_ALGO_AUTO;
		return kc_lex_next(x);
	}
	for (i = 0; i < kc_algo_table_len; i++) {
		const struct kc_algo_ops *a = kc_algo_table[i];

		if (!kc_cfg_names(a, x->word))
			continue;
		*algo = (u8)a->id;
		if (level == KCOLL_LEVEL0 && a->build) {
			kc_cfg_builders(list, sizeof(list));
			i = strlen(list);
			if (i < sizeof(list))
				kc_snprintf(list + i, sizeof(list) - i, " at level1 or level2");
			return kc_lex_fail(x, x->tpos, "a multi-level algorithm at level0", list);
		}
		return kc_lex_next(x);
	}
	i = kc_cfg_tokens(list, sizeof(list), 0);
	if (i < sizeof(list))
		kc_snprintf(list + i, sizeof(list) - i, "NA or null");
	return kc_lex_fail(x, x->tpos, "unknown algorithm", list);
}

/* levels := level ( ";" level )*  level := "levelN" ":" algo */
static int kc_cfg_levels(struct kc_lex *x, u8 *algo, bool per_op)
{
	u32 seen = 0;
	int ret;

	for (;;) {
		u32 lvl;

		if (x->tok != 'w')
			return kc_lex_fail(x, x->tpos, x->tok == ';' || x->tok == 0 ?
					   "empty level entry" : "misplaced separator",
					   "levelN:<algo> with N in 0..3");
		if (!kc_ieq(x->word, "level0") && !kc_ieq(x->word, "level1") &&
		    !kc_ieq(x->word, "level2") && !kc_ieq(x->word, "level3"))
			return kc_lex_fail(x, x->tpos, "unknown level",
					   "level0, level1, level2 or level3");
		lvl = (u32)(x->word[5] - '0');
		if (seen & (1u << lvl))
			return kc_lex_fail(x, x->tpos, "level given twice",
					   "each of level0..level3 at most once");
		seen |= 1u << lvl;
		ret = kc_lex_next(x);
		if (ret)
			return ret;
		if (x->tok != ':')
			return kc_lex_fail(x, x->tpos, "missing ':' after the level",
					   "levelN:<algo>");
		ret = kc_lex_next(x);
		if (ret)
			return ret;
		if (per_op && lvl == KCOLL_LEVEL0 && x->tok == 'w' && kc_ieq(x->word, "null"))
			return kc_lex_fail(x, x->tpos, "level0:null in a per-operation entry",
					   "level0:NA");
		ret = kc_cfg_algo(x, lvl, &algo[lvl]);
		if (ret)
			return ret;
		if (x->tok != ';')
			return 0;
		ret = kc_lex_next(x);
		if (ret)
			return ret;
	}
}

/* The key of an operation name, KC_CFG_KEYS for HCCL-only keys, or -1. */
static int kc_cfg_op(const char *w)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(kc_cfg_ops); i++)
		if (kc_ieq(w, kc_cfg_ops[i]))
			return (int)i;
	for (i = 0; i < ARRAY_SIZE(kc_cfg_p2p); i++)
		if (kc_ieq(w, kc_cfg_p2p[i]))
			return KC_CFG_KEYS;
	return -1;
}

/* Position of the first c in s, or -1. */
static int kc_cfg_find(const char *s, char c)
{
	int i;

	for (i = 0; s[i]; i++)
		if (s[i] == c)
			return i;
	return -1;
}

/* A character that can never be part of a valid string fails first. */
static int kc_cfg_charset(struct kc_lex *x)
{
	u32 i;

	for (i = 0; x->s[i]; i++) {
		char c = x->s[i];

		if (!kc_is_word(c) && !kc_is_space(c) && c != ':' && c != ';' && c != '=' &&
		    c != '/')
			return kc_lex_fail(x, i, "unexpected character",
					   "letters, digits, '-', '_' and the separators : ; = /");
	}
	return 0;
}

static int kc_cfg_parse_into(struct kc_lex *x, struct kc_algo_conf *c)
{
	u8 dummy[KC_CFG_LEVELS];
	int ret;

	ret = kc_cfg_charset(x) ?: kc_lex_next(x);
	if (ret || !x->tok)
		return ret;	/* empty: nothing configured */
	if (kc_cfg_find(x->s, '=') < 0) {
		if (kc_cfg_find(x->s, '/') >= 0)
			return kc_lex_fail(x, kc_cfg_find(x->s, '/'),
					   "'/' without per-operation entries", KC_CFG_FORM);
		ret = kc_cfg_levels(x, c->algo[KC_CFG_GLOBAL], false);
		if (ret)
			return ret;
		c->keys |= 1u << KC_CFG_GLOBAL;
		if (x->tok)
			return kc_lex_fail(x, x->tpos, "unexpected separator",
					   "';' between levels");
		return 0;
	}
	for (;;) {
		u32 at = x->tpos;
		int key;

		if (x->tok != 'w')
			return kc_lex_fail(x, at, x->tok == '/' || !x->tok ?
					   "empty operation entry" : "misplaced separator",
					   "<op>=level0:NA;level1:<algo>");
		key = kc_cfg_op(x->word);
		ret = kc_lex_next(x);
		if (ret)
			return ret;
		if (x->tok == ':')
			return kc_lex_fail(x, at, "global and per-operation forms mixed",
					   "either level0:NA;level1:<algo> or <op>=... entries only");
		if (key < 0)
			return kc_lex_fail(x, at, "unknown operation",
					   "allreduce, reducescatter, allgather, broadcast, reduce, scatter, gather, alltoall, alltoallv, barrier, send, receive, sendrecv or others");
		if (x->tok != '=')
			return kc_lex_fail(x, x->tpos, "missing '=' after the operation",
					   "<op>=level0:NA;level1:<algo>");
		if (key < KC_CFG_KEYS && (c->keys & (1u << key)))
			return kc_lex_fail(x, at, "operation given twice",
					   "one entry per operation");
		ret = kc_lex_next(x);
		if (ret)
			return ret;
		if (key < KC_CFG_KEYS)
			c->keys |= 1u << key;
		memset(dummy, 0, sizeof(dummy));
		ret = kc_cfg_levels(x, key < KC_CFG_KEYS ? c->algo[key] : dummy, true);
		if (ret)
			return ret;
		if (!x->tok)
			return 0;
		if (x->tok != '/')
			return kc_lex_fail(x, x->tpos, "unexpected separator",
					   "';' between levels, '/' between operations");
		ret = kc_lex_next(x);
		if (ret)
			return ret;
	}
}

int kc_cfg_parse(const char *s, struct kc_algo_conf *conf, char *err, u32 errlen)
{
	struct kc_lex x = { .s = s, .err = err, .errlen = errlen };
	struct kc_algo_conf *c;
	u32 n = 0;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	while (n <= KC_CFG_MAX_LEN && s[n])
		n++;
	if (n > KC_CFG_MAX_LEN)
		return kc_lex_fail(&x, KC_CFG_MAX_LEN, "string too long",
				   "at most 1024 characters");
	c = kc_zalloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	ret = kc_cfg_parse_into(&x, c);
	if (!ret)
		*conf = *c;
	kc_free(c);
	return ret;
}

/* Can @a take part in @op (as the whole, the top level or a lower level)? */
static bool kc_cfg_usable(const struct kc_algo_ops *a, u32 op)
{
	if (kc_algo_supports(a, op))
		return true;
	if (a->build)
		return false;
	switch (op) {
	case KCOLL_OP_ALLREDUCE:
		return a->rs && a->ag;
	case KCOLL_OP_BROADCAST:
		return a->scatter && a->ag;
	case KCOLL_OP_REDUCE:
		return a->rs && a->gather;
	}
	return false;
}

u32 kc_cfg_for_op(const struct kc_algo_conf *conf, u32 op, struct kc_algo_cfg *out,
		  char *note, u32 notelen)
{
	u32 key = op == KCOLL_OP_ALLTOALLV && !(conf->keys & (1u << KCOLL_OP_ALLTOALLV)) ?
		  KCOLL_OP_ALLTOALL : op;
	const u8 *lv = NULL;
	u32 l, fell = 0, pos = 0;

	if (note && notelen)
		note[0] = '\0';
	memset(out->algo, 0, sizeof(out->algo));
	memset(out->conf, 0, sizeof(out->conf));
	if (op < KCOLL_OP_COUNT && (conf->keys & (1u << key)))
		lv = conf->algo[key];
	else if (conf->keys & (1u << KC_CFG_OTHERS))
		lv = conf->algo[KC_CFG_OTHERS];
	else if (conf->keys & (1u << KC_CFG_GLOBAL))
		lv = conf->algo[KC_CFG_GLOBAL];
	if (!lv)
		return 0;
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
		out->algo[l] = lv[l];
	/* HCCL: level1 AHC governs level2 too, whatever level2 says */
	if (kc_algo_get(lv[KCOLL_LEVEL1]) && kc_algo_get(lv[KCOLL_LEVEL1])->governs_level2)
		out->algo[KCOLL_LEVEL2] = lv[KCOLL_LEVEL1];
	memcpy(out->conf, out->algo, sizeof(out->conf));
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		const struct kc_algo_ops *a = kc_algo_get(out->algo[l]);

		if (!a || kc_cfg_usable(a, op))
			continue;
		if (note && pos < notelen)
			pos += kc_snprintf(note + pos, notelen - pos,
					   "%slevel%u: %s cannot run %s, selected automatically",
					   fell ? "; " : "", l, kc_cfg_algo_token(out->algo[l]),
					   kc_op_name(op));
		out->algo[l] = KCOLL_ALGO_AUTO;
		fell++;
	}
	return fell;
}

const char *kc_cfg_algo_token(u32 algo)
{
	const struct kc_algo_ops *a = kc_algo_get(algo);

	return a ? a->hccl : "NA";
}

static u32 kc_cfg_fmt_levels(const u8 *lv, char *buf, u32 len, u32 pos)
{
	u32 l, last = 1;

	for (l = 2; l < KC_CFG_LEVELS; l++)
		if (lv[l])
			last = l;
	for (l = 0; l <= last && pos < len; l++)
		pos += kc_snprintf(buf + pos, len - pos, "%slevel%u:%s", l ? ";" : "", l,
				   kc_cfg_algo_token(lv[l]));
	return pos;
}

u32 kc_cfg_format(const struct kc_algo_conf *conf, char *buf, u32 len)
{
	u32 k, pos = 0;

	if (!len)
		return 0;
	buf[0] = '\0';
	if (conf->keys & (1u << KC_CFG_GLOBAL))
		return kc_cfg_fmt_levels(conf->algo[KC_CFG_GLOBAL], buf, len, 0);
	for (k = 0; k <= KC_CFG_OTHERS && pos < len; k++) {
		if (!(conf->keys & (1u << k)))
			continue;
		pos += kc_snprintf(buf + pos, len - pos, "%s%s=", pos ? "/" : "", kc_cfg_ops[k]);
		if (pos < len)
			pos = kc_cfg_fmt_levels(conf->algo[k], buf, len, pos);
	}
	return pos < len ? pos : len - 1;
}
