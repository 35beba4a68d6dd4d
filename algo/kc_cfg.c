// SPDX-License-Identifier: GPL-2.0
/*
 * HCCL_ALGO parser (see kc_cfg.h).  A small lexer hands out words and
 * separators with their place in the original string, skipping spaces
 * (also inside words, as HCCL strips every space first); the parser fills
 * a scratch copy of the configuration and commits it only when the whole
 * string is valid, so a bad write leaves the previous setting in force.
 * A refusal is a struct kc_cfg_err (offsets, no text of the string), so
 * the kernel and the tools render the same fault their own way through
 * the one formatter, kc_cfg_strerror().
 */
#include "kc_cfg.h"

#define KC_CFG_WORD	32

#define KC_CFG_FORM "level0:NA;level1:<algo> or <op>=level0:NA;level1:<algo>/<op>=..."
#define KC_CFG_CHARS "letters, digits, '-', '_' and the separators : ; = /"
#define KC_CFG_LEVEL_NAMES "level0, level1 or level2"

struct kc_lex {
	const char *s;
	u32 pos;		/* next character */
	u32 tpos;		/* where the current token starts */
	u32 tend;		/* where it ends (after its last character) */
	char tok;		/* 'w' word, one of ":;=/", 0 end */
	char word[KC_CFG_WORD];
	struct kc_cfg_err *e;
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

static const char *const kc_cfg_levels_known[] = { "level0", "level1", "level2" };

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

static bool kc_is_sep(char c)
{
	return c == ':' || c == ';' || c == '=' || c == '/';
}

/*
 * Edit distance of @a and @b, case-insensitive, with a swap of two
 * neighbours as one edit ("rign" is one from "ring"); three rows of
 * bytes, as names are shorter than KC_CFG_WORD and the kernel stack small.
 */
static u32 kc_cfg_distance(const char *a, const char *b)
{
	u8 rows[3][KC_CFG_WORD + 1], *pp = rows[0], *p = rows[1], *c = rows[2], *t;
	u32 la = strlen(a), lb = strlen(b), i, j;

	if (la >= KC_CFG_WORD || lb >= KC_CFG_WORD)
		return KC_CFG_WORD;
	for (j = 0; j <= lb; j++)
		p[j] = j;
	for (i = 1; i <= la; i++) {
		c[0] = i;
		for (j = 1; j <= lb; j++) {
			u32 sub = kc_lower(a[i - 1]) != kc_lower(b[j - 1]);
			u32 d = kc_min_u32(kc_min_u32(p[j] + 1, c[j - 1] + 1), p[j - 1] + sub);

			if (i > 1 && j > 1 && kc_lower(a[i - 1]) == kc_lower(b[j - 2]) &&
			    kc_lower(a[i - 2]) == kc_lower(b[j - 1]))
				d = kc_min_u32(d, pp[j - 2] + 1);
			c[j] = d;
		}
		t = pp;
		pp = p;
		p = c;
		c = t;
	}
	return p[lb];
}

/*
 * Keep @cand as the suggestion for @w if it is the nearest so far and near
 * enough to be a slip: at most one edit in three characters.
 */
static void kc_cfg_near(const char *w, const char *cand, const char **best, u32 *bestd)
{
	u32 d = kc_cfg_distance(w, cand);
	u32 l = kc_max_u64(strlen(w), strlen(cand));

	if (d && 3 * d <= l && d < *bestd) {
		*best = cand;
		*bestd = d;
	}
}

static const char *kc_cfg_suggest(const char *w, const char *const *names, u32 n)
{
	const char *best = NULL;
	u32 i, bestd = KC_CFG_WORD;

	for (i = 0; i < n; i++)
		kc_cfg_near(w, names[i], &best, &bestd);
	return best;
}

/*
 * Refuse at the current token: the caret under it, the message quoting it
 * (a word, or the separator).  Callers adjust @x->e where the fault is
 * elsewhere.
 */
static int kc_fail(struct kc_lex *x, u32 kind, const char *what, const char *pre,
		   const char *expected)
{
	struct kc_cfg_err *e = x->e;

	e->kind = kind;
	e->off = x->tpos;
	e->qoff = x->tpos;
	e->len = x->tend - x->tpos;
	e->qlen = e->len;
	if (!e->len)
		e->len = 1;	/* the end of the string */
	e->what = what;
	e->pre = pre;
	e->post = NULL;
	e->expected = expected;
	e->hint = NULL;
	return -EINVAL;
}

/* Advance to the next token; 0 or -EINVAL (a name too long). */
static int kc_lex_next(struct kc_lex *x)
{
	u32 n = 0;
	char c;

	while (kc_is_space(x->s[x->pos]))
		x->pos++;
	x->tpos = x->pos;
	x->tend = x->pos;
	c = x->s[x->pos];
	if (!c) {
		x->tok = 0;
		return 0;
	}
	if (kc_is_sep(c)) {
		x->tok = c;
		x->tend = ++x->pos;
		return 0;
	}
	/* kc_cfg_charset() let only words, spaces and separators through */
	for (;;) {
		c = x->s[x->pos];
		if (kc_is_space(c)) {
			x->pos++;
			continue;
		}
		if (!kc_is_word(c))
			break;
		x->tend = ++x->pos;
		if (n + 1 >= KC_CFG_WORD) {
			x->tok = 'w';
			return kc_fail(x, KC_CFG_E_NAME_LONG, "name too long", NULL,
				       "a level, operation or algorithm name (at most 31 characters)");
		}
		x->word[n++] = c;
	}
	x->word[n] = '\0';
	x->tok = 'w';
	return 0;
}

/* Where the @k-th character of the current word is in the string. */
static u32 kc_lex_at(const struct kc_lex *x, u32 k)
{
	u32 p = x->tpos;

	for (;;) {
		while (kc_is_space(x->s[p]))
			p++;
		if (!k--)
			return p;
		p++;
	}
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

/* The algorithm name nearest @w: tokens, aliases, NA and null. */
static const char *kc_cfg_suggest_algo(const char *w)
{
	static const char *const autos[] = { "NA", "null" };
	const char *best = NULL, *const *al;
	u32 i, bestd = KC_CFG_WORD;

	for (i = 0; i < kc_algo_table_len; i++) {
		kc_cfg_near(w, kc_algo_table[i]->hccl, &best, &bestd);
		for (al = kc_algo_table[i]->aliases; al && *al; al++)
			kc_cfg_near(w, *al, &best, &bestd);
	}
	for (i = 0; i < ARRAY_SIZE(autos); i++)
		kc_cfg_near(w, autos[i], &best, &bestd);
	return best;
}

/* The algorithm of the level whose "levelN:" spans @lvpos to @lvend. */
static int kc_cfg_algo(struct kc_lex *x, u32 level, u32 lvpos, u32 lvend, u8 *algo)
{
	u32 i;

	if (x->tok != 'w') {
		/* the caret where the name belongs, the message quotes "levelN:" */
		if (x->tok)
			x->tend = x->tpos;
		kc_fail(x, KC_CFG_E_NO_ALGO, "missing algorithm after ':'",
			"missing algorithm after", NULL);
		x->e->len = 1;
		x->e->qoff = lvpos;
		x->e->qlen = lvend - lvpos;
		return -EINVAL;
	}
	if (kc_ieq(x->word, "NHR_V1"))
		return kc_fail(x, KC_CFG_E_NHR_V1, "NHR_V1 is not implemented by kcoll",
			       NULL, "NHR (same semantics, log2 steps)");
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
			kc_fail(x, KC_CFG_E_LEVEL0, "a multi-level algorithm at level0",
				"multi-level algorithm", NULL);
			x->e->post = "at level0";
			return -EINVAL;
		}
		return kc_lex_next(x);
	}
	kc_fail(x, KC_CFG_E_ALGO, "unknown algorithm", "unknown algorithm", NULL);
	x->e->hint = kc_cfg_suggest_algo(x->word);
	return -EINVAL;
}

/* The level @w names, or -1. */
static int kc_cfg_level_of(const char *w)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(kc_cfg_levels_known); i++)
		if (kc_ieq(w, kc_cfg_levels_known[i]))
			return (int)i;
	return -1;
}

/*
 * A word where a level belongs that is not one: name what is wrong with
 * it.  "level1ring" is "level1 ring" with the spaces gone: a missing ':'.
 */
static int kc_cfg_bad_level(struct kc_lex *x)
{
	u32 i;

	if (kc_ieq(x->word, "level3")) {
		kc_fail(x, KC_CFG_E_LEVEL3,
			"level3 is not used by kcoll (levels are 0 server, 1 super-node, 2 cluster)",
			NULL, KC_CFG_LEVEL_NAMES);
		x->e->qlen = 0;
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(kc_cfg_levels_known) && strlen(x->word) > 6; i++) {
		char c = x->word[6];
		bool level;

		x->word[6] = '\0';
		level = kc_ieq(x->word, kc_cfg_levels_known[i]);
		x->word[6] = c;
		if (level) {
			kc_fail(x, KC_CFG_E_COLON, "missing ':' after the level",
				"missing ':' after", "levelN:<algo>");
			x->e->qlen = kc_lex_at(x, 5) + 1 - x->tpos;
			x->e->off = x->e->qoff + x->e->qlen;
			x->e->len = 1;
			return -EINVAL;
		}
	}
	kc_fail(x, KC_CFG_E_LEVEL, "unknown level", "unknown level", KC_CFG_LEVEL_NAMES);
	x->e->hint = kc_cfg_suggest(x->word, kc_cfg_levels_known,
				    ARRAY_SIZE(kc_cfg_levels_known));
	return -EINVAL;
}

/* levels := level ( ";" level )*  level := "levelN" ":" algo */
static int kc_cfg_levels(struct kc_lex *x, u8 *algo, bool per_op)
{
	u32 seen = 0, semi = 0;
	int ret;

	for (;;) {
		u32 lvl, lvpos, lvend;

		if (x->tok != 'w') {
			if (semi && (!x->tok || x->tok == '/')) {
				/* the caret under the ';' that has nothing after it */
				x->tpos = semi;
				x->tend = semi + 1;
				return kc_fail(x, KC_CFG_E_TRAILING, "trailing ';'", NULL,
					       "another levelN:<algo> after ';', or no ';' at the end");
			}
			return kc_fail(x, x->tok == ';' || !x->tok ? KC_CFG_E_EMPTY_LEVEL :
				       KC_CFG_E_SEPARATOR, x->tok == ';' || !x->tok ?
				       "empty level entry" : "misplaced separator",
				       x->tok == ';' || !x->tok ? NULL : "misplaced",
				       "levelN:<algo> with N in 0..2");
		}
		if (kc_cfg_level_of(x->word) < 0)
			return kc_cfg_bad_level(x);
		lvl = kc_cfg_level_of(x->word);
		if (seen & (1u << lvl)) {
			kc_fail(x, KC_CFG_E_LEVEL_TWICE, "level given twice", "level",
				"each of level0..level2 at most once");
			x->e->post = "given twice";
			return -EINVAL;
		}
		seen |= 1u << lvl;
		lvpos = x->tpos;
		lvend = x->tend;
		ret = kc_lex_next(x);
		if (ret)
			return ret;
		if (x->tok != ':') {
			/* "level1=": the caret right after the level, where ':' belongs */
			kc_fail(x, KC_CFG_E_COLON, "missing ':' after the level",
				"missing ':' after", "levelN:<algo>");
			x->e->off = lvend;
			x->e->len = 1;
			x->e->qoff = lvpos;
			x->e->qlen = lvend - lvpos;
			return -EINVAL;
		}
		lvend = x->tend;
		ret = kc_lex_next(x);
		if (ret)
			return ret;
		if (per_op && lvl == KCOLL_LEVEL0 && x->tok == 'w' && kc_ieq(x->word, "null"))
			return kc_fail(x, KC_CFG_E_NULL, "level0:null in a per-operation entry",
				       NULL, "level0:NA");
		ret = kc_cfg_algo(x, lvl, lvpos, lvend, &algo[lvl]);
		if (ret)
			return ret;
		if (x->tok != ';')
			return 0;
		semi = x->tpos;
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

		if (!kc_is_word(c) && !kc_is_space(c) && !kc_is_sep(c)) {
			x->tpos = i;
			x->tend = i + 1;
			return kc_fail(x, KC_CFG_E_CHAR, "unexpected character",
				       "unexpected character", KC_CFG_CHARS);
		}
	}
	return 0;
}

/* One per-operation entry's name, followed by its '='. */
static int kc_cfg_op_key(struct kc_lex *x, const struct kc_algo_conf *c, int *key)
{
	u32 at = x->tpos, end = x->tend;
	const char *hint;
	bool level;
	int ret;

	if (x->tok != 'w')
		return kc_fail(x, x->tok == '/' || !x->tok ? KC_CFG_E_EMPTY_OP :
			       KC_CFG_E_SEPARATOR, x->tok == '/' || !x->tok ?
			       "empty operation entry" : "misplaced separator",
			       x->tok == '/' || !x->tok ? NULL : "misplaced",
			       "<op>=level0:NA;level1:<algo>");
	*key = kc_cfg_op(x->word);
	level = kc_cfg_level_of(x->word) >= 0;
	hint = kc_cfg_suggest(x->word, kc_cfg_ops, ARRAY_SIZE(kc_cfg_ops)) ?:
	       kc_cfg_suggest(x->word, kc_cfg_p2p, ARRAY_SIZE(kc_cfg_p2p));
	ret = kc_lex_next(x);
	if (ret)
		return ret;
	if (x->tok == '=' && *key < 0 && level) {
		/* "level1=ring": the '=' stands where the ':' belongs */
		x->tpos = end;
		x->tend = end;
		kc_fail(x, KC_CFG_E_COLON, "missing ':' after the level", "missing ':' after",
			"levelN:<algo>");
		x->e->qoff = at;
		x->e->qlen = end - at;
		return -EINVAL;
	}
	x->tpos = at;
	x->tend = end;
	if (x->tok == ':')
		return kc_fail(x, KC_CFG_E_MIXED, "global and per-operation forms mixed",
			       "global and per-operation forms mixed at", KC_CFG_FORM);
	if (*key < 0) {
		kc_fail(x, KC_CFG_E_OP, "unknown operation", "unknown operation",
			"allreduce, reducescatter, allgather, broadcast, reduce, scatter, gather, alltoall, alltoallv, barrier, send, receive, sendrecv or others");
		x->e->hint = hint;
		return -EINVAL;
	}
	if (x->tok != '=') {
		/* the caret right after the operation, where '=' belongs */
		x->tpos = end;
		x->tend = end;
		kc_fail(x, KC_CFG_E_EQUALS, "missing '=' after the operation",
			"missing '=' after", "<op>=level0:NA;level1:<algo>");
		x->e->qoff = at;
		x->e->qlen = end - at;
		return -EINVAL;
	}
	if (*key < KC_CFG_KEYS && (c->keys & (1u << *key))) {
		kc_fail(x, KC_CFG_E_OP_TWICE, "operation given twice", "operation",
			"one entry per operation");
		x->e->post = "given twice";
		return -EINVAL;
	}
	return kc_lex_next(x);
}

static int kc_cfg_parse_into(struct kc_lex *x, struct kc_algo_conf *c)
{
	u8 dummy[KC_CFG_LEVELS];
	int key, ret;

	ret = kc_cfg_charset(x) ?: kc_lex_next(x);
	if (ret || !x->tok)
		return ret;	/* empty: nothing configured */
	if (kc_cfg_find(x->s, '=') < 0) {
		if (kc_cfg_find(x->s, '/') >= 0) {
			x->tpos = kc_cfg_find(x->s, '/');
			x->tend = x->tpos + 1;
			return kc_fail(x, KC_CFG_E_SLASH, "'/' without per-operation entries",
				       NULL, KC_CFG_FORM);
		}
		ret = kc_cfg_levels(x, c->algo[KC_CFG_GLOBAL], false);
		if (ret)
			return ret;
		c->keys |= 1u << KC_CFG_GLOBAL;
		if (x->tok)
			return kc_fail(x, KC_CFG_E_SEPARATOR, "unexpected separator",
				       "unexpected", "';' between levels");
		return 0;
	}
	for (;;) {
		ret = kc_cfg_op_key(x, c, &key);
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
			return kc_fail(x, KC_CFG_E_SEPARATOR, "unexpected separator",
				       "unexpected",
				       "';' between levels, '/' between operations");
		ret = kc_lex_next(x);
		if (ret)
			return ret;
	}
}

int kc_cfg_parse_ex(const char *s, struct kc_algo_conf *conf, struct kc_cfg_err *e)
{
	struct kc_lex x = { .s = s, .e = e };
	struct kc_algo_conf *c;
	u32 n = 0;
	int ret;

	memset(e, 0, sizeof(*e));
	while (n <= KC_CFG_MAX_LEN && s[n])
		n++;
	if (n > KC_CFG_MAX_LEN) {
		x.tpos = KC_CFG_MAX_LEN;
		x.tend = KC_CFG_MAX_LEN + 1;
		kc_fail(&x, KC_CFG_E_STR_LONG, "string too long", NULL,
			"at most 1024 characters");
		e->qlen = 0;
		return -EINVAL;
	}
	c = kc_zalloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	ret = kc_cfg_parse_into(&x, c);
	if (!ret)
		*conf = *c;
	kc_free(c);
	return ret;
}

/* Append @str to @buf (kc_snprintf's semantics: @pos may pass @len). */
static u32 kc_cat(char *buf, u32 len, u32 pos, const char *str)
{
	return pos < len ? pos + kc_snprintf(buf + pos, len - pos, "%s", str) : pos;
}

/* Append @n bytes of @s, spaces for white space and '?' for what cannot be shown. */
static u32 kc_cat_echo(char *buf, u32 len, u32 pos, const char *s, u32 n)
{
	u32 i;

	for (i = 0; i < n && pos + 1 < len; i++) {
		char c = s[i];

		buf[pos++] = kc_is_space(c) ? ' ' : c >= ' ' && c < 0x7f ? c : '?';
	}
	if (pos < len)
		buf[pos] = '\0';
	return pos + (n - i);
}

/* Every algorithm token, in table order. */
static u32 kc_cfg_tokens(char *buf, u32 len, u32 pos)
{
	const char *const *al;
	u32 i;

	for (i = 0; i < kc_algo_table_len; i++) {
		const struct kc_algo_ops *a = kc_algo_table[i];

		pos = kc_cat(buf, len, kc_cat(buf, len, pos, a->hccl), ", ");
		for (al = a->aliases; al && *al; al++)
			pos = kc_cat(buf, len, kc_cat(buf, len, pos, *al), ", ");
	}
	return pos;
}

/* The multi-level algorithms, in selection's order, those it never tries last. */
static u32 kc_cfg_builders(char *buf, u32 len, u32 pos)
{
	u32 ids[KCOLL_ALGO_COUNT], n, i, k;

	n = kc_algo_auto_list(true, ids);
	for (i = 0; i < kc_algo_table_len && n < KCOLL_ALGO_COUNT; i++)
		if (kc_algo_table[i]->build && !kc_algo_table[i]->auto_rank)
			ids[n++] = kc_algo_table[i]->id;
	for (k = 0; k < n; k++) {
		pos = kc_cat(buf, len, pos, !k ? "" : k + 1 < n ? ", " : " and ");
		pos = kc_cat(buf, len, pos, kc_algo_get(ids[k])->hccl);
	}
	return pos;
}

/* The expected form of @e, listing names where its kind calls for them. */
static u32 kc_cfg_expected(const struct kc_cfg_err *e, char *buf, u32 len, u32 pos)
{
	if (e->expected)
		return kc_cat(buf, len, pos, e->expected);
	if (e->kind == KC_CFG_E_LEVEL0) {
		pos = kc_cat(buf, len, pos, "NA at level0; ");
		pos = kc_cfg_builders(buf, len, pos);
		return kc_cat(buf, len, pos, " at level1 or level2");
	}
	pos = kc_cat(buf, len, pos, "one of ");
	pos = kc_cfg_tokens(buf, len, pos);
	return kc_cat(buf, len, pos, "NA or null");
}

u32 kc_cfg_strerror(const char *s, const struct kc_cfg_err *e, char *buf, u32 len)
{
	u32 pos = 0, i;

	if (!len)
		return 0;
	buf[0] = '\0';
	if (!s) {
		/* the kernel log: nothing of the string, one line */
		pos = kc_snprintf(buf, len, "HCCL_ALGO: %s at column %u; expected ", e->what,
				  e->off + 1);
		pos = kc_cfg_expected(e, buf, len, pos);
	} else {
		/* up to the first character past the limit, where a caret may go */
		u32 n = kc_min_u32(strlen(s), KC_CFG_MAX_LEN + 1);

		pos = kc_cat(buf, len, pos, "HCCL_ALGO \"");
		pos = kc_cat_echo(buf, len, pos, s, n);
		pos = kc_cat(buf, len, pos, "\": ");
		if (e->qlen && e->pre) {
			pos = kc_cat(buf, len, pos, e->pre);
			pos = kc_cat(buf, len, pos, " \"");
			pos = kc_cat_echo(buf, len, pos, s + e->qoff, e->qlen);
			pos = kc_cat(buf, len, pos, "\"");
			if (e->post)
				pos = kc_cat(buf, len, kc_cat(buf, len, pos, " "), e->post);
		} else {
			pos = kc_cat(buf, len, pos, e->what);
		}
		if (pos < len)
			pos += kc_snprintf(buf + pos, len - pos, " at column %u\n  ", e->off + 1);
		pos = kc_cat_echo(buf, len, pos, s, n);
		pos = kc_cat(buf, len, pos, "\n  ");
		for (i = 0; i < e->off; i++)
			pos = kc_cat(buf, len, pos, " ");
		pos = kc_cat(buf, len, pos, "^");
		for (i = 1; i < e->len; i++)
			pos = kc_cat(buf, len, pos, "~");
		pos = kc_cat(buf, len, pos, "\n  expected ");
		pos = kc_cfg_expected(e, buf, len, pos);
	}
	if (e->hint) {
		pos = kc_cat(buf, len, pos, "; did you mean \"");
		pos = kc_cat(buf, len, pos, e->hint);
		pos = kc_cat(buf, len, pos, "\"?");
	}
	return pos < len ? pos : len - 1;
}

int kc_cfg_parse(const char *s, struct kc_algo_conf *conf, char *err, u32 errlen)
{
	struct kc_cfg_err e;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	ret = kc_cfg_parse_ex(s, conf, &e);
	if (ret == -EINVAL && err && errlen)
		kc_cfg_strerror(s, &e, err, errlen);
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
