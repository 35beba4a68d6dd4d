// SPDX-License-Identifier: GPL-2.0
/*
 * collctl ranktable: an HCCL rank table generated from a list of hosts.
 *
 * Host i (in the order given) becomes server_list[i] with K devices:
 * rank i * K + l has device_id l, device_ip the host's address and
 * device_port base + l, as tools/vm/kcoll-vm writes them, because the
 * ranks of one node share its address and so need distinct ports
 * (lib/coll_ranktable.c refuses two ranks on one address and port).
 * server_id is the host as given (a name reads better than an address in
 * collctl show), host_ip its address.  With --servers-per-pod the table is
 * v1.2 with a super_pod_list of consecutive servers (HCCL wants a pod's
 * servers contiguous), super_pod_id "0", "1", ...; without, v1.0.
 *
 * A name is resolved once, here, with getaddrinfo(): its first IPv4
 * address, else its first IPv6 one, so the table does not depend on
 * /etc/gai.conf or on which family the resolver lists first.  Every check
 * is made before anything is written, and -o replaces the file in one
 * rename(), so a bad invocation leaves an existing table as it was.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll.h"
#include "collctl_ranktable.h"
#include "size.h"

struct rt_host {
	char name[CC_RT_NAME_MAX + 1];
	char addr[INET6_ADDRSTRLEN];
	unsigned pos;		/* line of the file, or place in the list (1-based) */
};

struct rt_hosts {
	const char *file;	/* NULL: the hosts came as a list */
	struct rt_host *h;
	size_t n, cap;
	char *err;
	size_t len;
};

static int rt_fail(char *err, size_t len, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int rt_fail(char *err, size_t len, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return ret;
}

/* "FILE:LINE" or "--hosts host N", for messages about host @i. */
static const char *rt_where(const struct rt_hosts *hs, const struct rt_host *h, char *buf,
			    size_t len)
{
	if (hs->file)
		snprintf(buf, len, "%s:%u", hs->file, h->pos);
	else
		snprintf(buf, len, "--hosts host %u", h->pos);
	return buf;
}

/* An address in the text inet_ntop() gives, so equal addresses compare equal. */
static int rt_resolve(struct rt_hosts *hs, struct rt_host *h)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *r, *pick = NULL;
	unsigned char a[16];
	char w[PATH_MAX + 32];
	int ret;

	if (inet_pton(AF_INET, h->name, a) == 1)
		return !inet_ntop(AF_INET, a, h->addr, sizeof(h->addr));
	if (inet_pton(AF_INET6, h->name, a) == 1)
		return !inet_ntop(AF_INET6, a, h->addr, sizeof(h->addr));
	/* getaddrinfo() would take "10.1" as 10.0.0.1: a typo, not a name */
	if (strspn(h->name, "0123456789.") == strlen(h->name) || strchr(h->name, ':'))
		return rt_fail(hs->err, hs->len, -EINVAL, "%s: '%s' is not an %s address",
			       rt_where(hs, h, w, sizeof(w)), h->name,
			       strchr(h->name, ':') ? "IPv6" : "IPv4 (a.b.c.d)");
	ret = getaddrinfo(h->name, NULL, &hints, &res);
	if (ret)
		return rt_fail(hs->err, hs->len, ret == EAI_SYSTEM ? -errno : -ENOENT,
			       "%s: cannot resolve '%s': %s (give its address instead)",
			       rt_where(hs, h, w, sizeof(w)), h->name,
			       ret == EAI_SYSTEM ? strerror(errno) : gai_strerror(ret));
	for (r = res; r && !pick; r = r->ai_next)
		pick = r->ai_family == AF_INET ? r : NULL;
	for (r = res; r && !pick; r = r->ai_next)
		pick = r->ai_family == AF_INET6 ? r : NULL;
	if (pick && pick->ai_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)pick->ai_addr)->sin_addr, h->addr,
			  sizeof(h->addr));
	else if (pick)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)pick->ai_addr)->sin6_addr, h->addr,
			  sizeof(h->addr));
	freeaddrinfo(res);
	if (!pick)
		return rt_fail(hs->err, hs->len, -ENOENT, "%s: '%s' has no IPv4 or IPv6 address",
			       rt_where(hs, h, w, sizeof(w)), h->name);
	return 0;
}

/* One host (@s, @n bytes, trimmed) found at @pos. */
static int rt_add(struct rt_hosts *hs, const char *s, size_t n, unsigned pos)
{
	struct rt_host *h;
	char w[PATH_MAX + 32];

	if (hs->n == hs->cap) {
		size_t cap = hs->cap ? 2 * hs->cap : 16;
		void *p = realloc(hs->h, cap * sizeof(*hs->h));

		if (!p)
			return rt_fail(hs->err, hs->len, -ENOMEM, "out of memory for %zu hosts",
				       cap);
		hs->h = p;
		hs->cap = cap;
	}
	h = &hs->h[hs->n];
	memset(h, 0, sizeof(*h));
	h->pos = pos;
	if (!n)
		return rt_fail(hs->err, hs->len, -EINVAL, "%s is empty (a trailing or doubled "
			       "comma?)", rt_where(hs, h, w, sizeof(w)));
	if (hs->n == CC_RT_MAX_RANKS)
		return rt_fail(hs->err, hs->len, -EINVAL, "%s: more than %d hosts",
			       rt_where(hs, h, w, sizeof(w)), CC_RT_MAX_RANKS);
	if (n > CC_RT_NAME_MAX)
		return rt_fail(hs->err, hs->len, -EINVAL, "%s: host '%.*s...' is %zu characters: "
			       "expected 1..%d (it becomes the server_id)",
			       rt_where(hs, h, w, sizeof(w)), 40, s, n, CC_RT_NAME_MAX);
	if (strcspn(s, " \t") < n)
		return rt_fail(hs->err, hs->len, -EINVAL, "%s: '%.*s' is more than one word: "
			       "expected one host per line", rt_where(hs, h, w, sizeof(w)),
			       (int)n, s);
	memcpy(h->name, s, n);
	hs->n++;
	return 0;
}

/* @s[0..@n) without blanks at either end: its start, its length in *@n. */
static const char *rt_trim(const char *s, size_t *n)
{
	while (*n && strchr(" \t\r\n", *s)) {
		s++;
		(*n)--;
	}
	while (*n && strchr(" \t\r\n", s[*n - 1]))
		(*n)--;
	return s;
}

static int rt_read_file(struct rt_hosts *hs)
{
	char *line = NULL, *hash;
	size_t cap = 0, n;
	unsigned lineno = 0;
	const char *s;
	int ret = 0;
	FILE *f = fopen(hs->file, "re");

	if (!f)
		return rt_fail(hs->err, hs->len, -errno, "--hosts: cannot open %s: %s", hs->file,
			       strerror(errno));
	while (!ret && getline(&line, &cap, f) >= 0) {
		lineno++;
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		n = strlen(line);
		s = rt_trim(line, &n);
		if (n)
			ret = rt_add(hs, s, n, lineno);
	}
	if (!ret && ferror(f))
		ret = rt_fail(hs->err, hs->len, -EIO, "--hosts: cannot read %s", hs->file);
	free(line);
	fclose(f);
	if (!ret && !hs->n)
		ret = rt_fail(hs->err, hs->len, -EINVAL, "--hosts: %s lists no host (only blank "
			      "lines and comments)", hs->file);
	return ret;
}

static int rt_read_list(struct rt_hosts *hs, const char *list)
{
	const char *s = list, *e, *h;
	unsigned pos = 1;
	size_t n;
	int ret;

	n = strlen(list);
	rt_trim(list, &n);
	if (!n)
		return rt_fail(hs->err, hs->len, -EINVAL, "--hosts '%s' lists no host: expected "
			       "a comma-separated list or a file of hosts", list);
	for (;; s = e + 1, pos++) {
		e = strchr(s, ',');
		n = e ? (size_t)(e - s) : strlen(s);
		h = rt_trim(s, &n);
		ret = rt_add(hs, h, n, pos);
		if (ret || !e)
			return ret;
	}
}

static int rt_cmp_addr(const void *a, const void *b)
{
	const struct rt_host *x = *(const struct rt_host *const *)a;
	const struct rt_host *y = *(const struct rt_host *const *)b;
	int c = strcmp(x->addr, y->addr);

	return c ? c : (x > y) - (x < y);
}

/*
 * Each host once: the same address twice would put two servers' ranks on
 * one node (more ranks per node are --ranks-per-node).  Sorted, so a long
 * list costs n log n; the first repeat in the order given is reported.
 */
static int rt_check_dups(struct rt_hosts *hs)
{
	struct rt_host **by = malloc(hs->n * sizeof(*by)), *dup = NULL, *first = NULL;
	char w1[PATH_MAX + 32], w2[PATH_MAX + 32];
	size_t i, g = 0;

	if (!by)
		return rt_fail(hs->err, hs->len, -ENOMEM, "out of memory for %zu hosts", hs->n);
	for (i = 0; i < hs->n; i++)
		by[i] = &hs->h[i];
	qsort(by, hs->n, sizeof(*by), rt_cmp_addr);
	for (i = 1; i < hs->n; i++) {
		if (strcmp(by[i]->addr, by[g]->addr)) {
			g = i;
			continue;
		}
		if (!dup || by[i] < dup) {
			dup = by[i];
			first = by[g];
		}
	}
	free(by);
	if (!dup)
		return 0;
	rt_where(hs, first, w2, sizeof(w2));
	return rt_fail(hs->err, hs->len, -EINVAL, "%s: duplicate host '%s': address %s is "
		       "also '%s' at %s; give each host once and the ranks per host with "
		       "--ranks-per-node", rt_where(hs, dup, w1, sizeof(w1)), dup->name,
		       dup->addr, first->name, w2);
}

/* A loopback address is a table for one machine only: others cannot reach it. */
static int rt_check_loopback(struct rt_hosts *hs)
{
	char w[PATH_MAX + 32];
	size_t i;

	for (i = 0; i < hs->n && hs->n > 1; i++)
		if (!strncmp(hs->h[i].addr, "127.", 4) || !strcmp(hs->h[i].addr, "::1"))
			return rt_fail(hs->err, hs->len, -EINVAL, "%s: host '%s' is %s, a loopback "
				       "address that the other hosts cannot reach (a name in "
				       "/etc/hosts as 127.0.1.1?): give its network address",
				       rt_where(hs, &hs->h[i], w, sizeof(w)), hs->h[i].name,
				       hs->h[i].addr);
	return 0;
}

/* A FILE if it names a regular file or a path; else a LIST. */
static int rt_hosts(struct rt_hosts *hs, const char *arg)
{
	struct stat st;
	size_t i;
	int ret;

	if (!arg)
		return rt_fail(hs->err, hs->len, -EINVAL, "--hosts is required: a comma-separated "
			       "list or a file of hosts, one per line");
	if (!strchr(arg, ',') && (strchr(arg, '/') || (!stat(arg, &st) && S_ISREG(st.st_mode)))) {
		hs->file = arg;
		ret = rt_read_file(hs);
	} else {
		ret = rt_read_list(hs, arg);
	}
	/* every host read before any is resolved: a typo is found without waiting for DNS */
	for (i = 0; !ret && i < hs->n; i++)
		ret = rt_resolve(hs, &hs->h[i]);
	if (!ret)
		ret = rt_check_dups(hs);
	return ret ? ret : rt_check_loopback(hs);
}

/* --servers-per-pod A,B,...: the pods' sizes into *@sizes (*@n of them). */
static int rt_pods(const char *arg, size_t nhosts, uint64_t **sizes, size_t *n, char *err,
		   size_t len)
{
	char item[32], why[96];
	const char *s = arg, *e;
	uint64_t sum = 0, *v;
	size_t k;

	*n = 1;
	for (e = arg; *e; e++)
		*n += *e == ',';
	v = calloc(*n, sizeof(*v));
	if (!v)
		return rt_fail(err, len, -ENOMEM, "out of memory for %zu super pods", *n);
	*sizes = v;
	for (k = 0; k < *n; k++, s = e + 1) {
		e = strchr(s, ',');
		snprintf(item, sizeof(item), "%.*s", (int)(e ? e - s : (long)strlen(s)), s);
		if (parse_ranged(item, 1, CC_RT_MAX_RANKS, &v[k], why, sizeof(why)))
			return rt_fail(err, len, -EINVAL, "--servers-per-pod %s: super pod %zu: %s "
				       "(servers in a pod)", arg, k, why);
		sum += v[k];
	}
	if (sum != nhosts)
		return rt_fail(err, len, -EINVAL, "--servers-per-pod %s sums to %llu servers; "
			       "--hosts gave %zu", arg, (unsigned long long)sum, nhosts);
	return 0;
}

static json_object *rt_num(unsigned long long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", v);
	return json_object_new_string(buf);
}

/* The table: all values strings, as HCCL writes them. */
static json_object *rt_json(const struct rt_hosts *hs, unsigned rpn, unsigned base,
			    const uint64_t *pods, size_t npods)
{
	json_object *root = json_object_new_object(), *sl = json_object_new_array();
	json_object *srv, *devs, *d, *pl, *p, *psl, *e;
	size_t i, k, next = 0;
	unsigned l;

	json_object_object_add(root, "status", json_object_new_string("completed"));
	json_object_object_add(root, "version", json_object_new_string(pods ? "1.2" : "1.0"));
	json_object_object_add(root, "server_count", rt_num(hs->n));
	json_object_object_add(root, "rank_count", rt_num(hs->n * rpn));
	for (i = 0; i < hs->n; i++) {
		srv = json_object_new_object();
		devs = json_object_new_array();
		json_object_object_add(srv, "server_id", json_object_new_string(hs->h[i].name));
		json_object_object_add(srv, "host_ip", json_object_new_string(hs->h[i].addr));
		for (l = 0; l < rpn; l++) {
			d = json_object_new_object();
			json_object_object_add(d, "device_id", rt_num(l));
			json_object_object_add(d, "device_ip", json_object_new_string(hs->h[i].addr));
			json_object_object_add(d, "device_port", rt_num(base + l));
			json_object_object_add(d, "rank_id", rt_num(i * rpn + l));
			json_object_array_add(devs, d);
		}
		json_object_object_add(srv, "device", devs);
		json_object_array_add(sl, srv);
	}
	json_object_object_add(root, "server_list", sl);
	if (!pods)
		return root;
	pl = json_object_new_array();
	for (k = 0; k < npods; k++) {
		p = json_object_new_object();
		psl = json_object_new_array();
		json_object_object_add(p, "super_pod_id", rt_num(k));
		for (i = 0; i < pods[k]; i++, next++) {
			e = json_object_new_object();
			json_object_object_add(e, "server_id",
					       json_object_new_string(hs->h[next].name));
			json_object_array_add(psl, e);
		}
		json_object_object_add(p, "server_list", psl);
		json_object_array_add(pl, p);
	}
	json_object_object_add(root, "super_pod_list", pl);
	return root;
}

int cc_rt_build(const struct cc_rt_opts *o, json_object **out, char *err, size_t len)
{
	struct rt_hosts hs = { .err = err, .len = len };
	uint64_t rpn = 1, base = COLL_DEFAULT_PORT, *pods = NULL;
	size_t npods = 0;
	char why[96];
	int ret;

	*out = NULL;
	/* the values first: they are quick to check and say more than a bad host */
	if (o->ranks_per_node && parse_ranged(o->ranks_per_node, 1, CC_RT_MAX_RPN, &rpn, why,
					       sizeof(why)))
		return rt_fail(err, len, -EINVAL, "--ranks-per-node %s (ranks per host)", why);
	if (o->base_port && parse_ranged(o->base_port, 1, 65535, &base, why, sizeof(why)))
		return rt_fail(err, len, -EINVAL, "--base-port %s", why);
	if (base + rpn - 1 > 65535)
		return rt_fail(err, len, -EINVAL, "--base-port %llu with --ranks-per-node %llu needs "
			       "device ports %llu..%llu, past 65535: expected a base port of at "
			       "most %llu", (unsigned long long)base, (unsigned long long)rpn,
			       (unsigned long long)base, (unsigned long long)(base + rpn - 1),
			       (unsigned long long)(65536 - rpn));
	ret = rt_hosts(&hs, o->hosts);
	if (!ret && hs.n * rpn > CC_RT_MAX_RANKS)
		ret = rt_fail(err, len, -EINVAL, "%zu hosts with --ranks-per-node %llu make %llu "
			      "ranks: a rank table holds at most %d", hs.n, (unsigned long long)rpn,
			      (unsigned long long)(hs.n * rpn), CC_RT_MAX_RANKS);
	if (!ret && o->servers_per_pod)
		ret = rt_pods(o->servers_per_pod, hs.n, &pods, &npods, err, len);
	if (!ret) {
		*out = rt_json(&hs, (unsigned)rpn, (unsigned)base, pods, npods);
		if (!*out)
			ret = rt_fail(err, len, -ENOMEM, "out of memory for the rank table");
	}
	free(pods);
	free(hs.h);
	return ret;
}

/* @text into @path by a new file renamed over it: readers see the old table or the new. */
static int rt_write(const char *path, const char *text, char *err, size_t len)
{
	char tmp[PATH_MAX];
	size_t n = strlen(text), off = 0;
	ssize_t w = 0;
	mode_t mask;
	int fd, ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return rt_fail(err, len, -ENAMETOOLONG, "--output %s: name too long", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		return rt_fail(err, len, -errno, "cannot write %s: %s", path, strerror(errno));
	/* every rank's user reads the table: the mode of a new file, not mkstemp's 0600 */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask))
		ret = -errno;
	while (!ret && off < n) {
		w = write(fd, text + off, n - off);
		if (w < 0 && errno != EINTR)
			ret = -errno;
		off += w > 0 ? (size_t)w : 0;
	}
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return rt_fail(err, len, ret, "cannot write %s: %s", path, strerror(-ret));
	}
	return 0;
}

int cc_ranktable_main(const char *prog, int argc, char **argv)
{
	/* -o is coll-perf's (nccl-tests') --op: --output is long only */
	enum { O_BASE_PORT = 256, O_OUTPUT };
	static const struct option lo[] = {
		{ "hosts", required_argument, NULL, 'H' },
		{ "ranks-per-node", required_argument, NULL, 'k' },
		{ "servers-per-pod", required_argument, NULL, 's' },
		{ "base-port", required_argument, NULL, O_BASE_PORT },
		{ "output", required_argument, NULL, O_OUTPUT },
		{ NULL, 0, NULL, 0 },
	};
	struct cc_rt_opts o = { 0 };
	const char *output = NULL, *text;
	json_object *rt;
	char err[PATH_MAX + 256];
	int opt, ret;

	optind = 0;	/* rescan: argv[0] is the command */
	while ((opt = getopt_long(argc, argv, "H:k:s:", lo, NULL)) != -1) {
		switch (opt) {
		case 'H': o.hosts = optarg; break;
		case 'k': o.ranks_per_node = optarg; break;
		case 's': o.servers_per_pod = optarg; break;
		case O_BASE_PORT: o.base_port = optarg; break;
		case O_OUTPUT: output = optarg; break;
		default:
			fprintf(stderr, "%s: usage: ranktable -H, --hosts FILE|LIST [-k, "
				"--ranks-per-node K] [-s, --servers-per-pod A,B,...] [--base-port P] "
				"[--output FILE]\n", prog);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: ranktable: unexpected '%s' (the hosts go in --hosts)\n", prog,
			argv[optind]);
		return 2;
	}
	ret = cc_rt_build(&o, &rt, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s: ranktable: %s\n", prog, err);
		return ret == -EINVAL ? 2 : 1;
	}
	text = json_object_to_json_string_ext(rt, JSON_C_TO_STRING_PRETTY |
					      JSON_C_TO_STRING_SPACED |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	if (output && strcmp(output, "-")) {
		char *doc = malloc(strlen(text) + 2);

		ret = doc ? 0 : -ENOMEM;
		if (doc) {
			sprintf(doc, "%s\n", text);
			ret = rt_write(output, doc, err, sizeof(err));
			free(doc);
		}
		if (ret)
			fprintf(stderr, "%s: ranktable: %s\n", prog,
				ret == -ENOMEM ? "out of memory" : err);
	} else {
		ret = printf("%s\n", text) < 0 || fflush(stdout) ? -EIO : 0;
		if (ret)
			fprintf(stderr, "%s: ranktable: cannot write the table to stdout: %s\n",
				prog, strerror(errno));
	}
	json_object_put(rt);
	return ret ? 1 : 0;
}
