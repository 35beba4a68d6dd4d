// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcoll: HCCL rank tables, parsed with json-c.
 *
 *   v1.0: { status, version "1.0", server_count,
 *           server_list: [ { server_id, host_ip?, device: [
 *               { device_id?, device_ip, device_port?, rank_id } ] } ] }
 *   v1.2: the same plus super_pod_list: [ { super_pod_id,
 *           server_list: [ { server_id } ] } ]
 *
 * All values are strings as HCCL writes them.  Optional fields read here
 * besides: top-level rank_count (checked), per-device "kcoll_addr" (the
 * address kcoll uses instead of device_ip) and "kcoll_port" (instead of
 * device_port, default COLL_DEFAULT_PORT).  Other fields (host_port,
 * super_device_id, backup_*) are accepted and ignored.
 *
 * Every message names the file, the field (as a JSON path), the value and,
 * for device entries, the rank.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

#define RT_MAX_RANKS	65536
#define RT_NAME_MAX	64

struct rt_ctx {
	const char *file;
	struct coll_ranktable *rt;
	/* per parsed device, in file order */
	struct rt_dev {
		uint32_t rank, server;
		char path[64];
	} *devs;
	uint32_t ndevs;
};

/* A string member; -ENOENT if absent (no message), -EINVAL if not a string. */
static int rt_str(struct rt_ctx *x, json_object *o, const char *key, const char *path,
		  const char **out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return -ENOENT;
	if (!json_object_is_type(v, json_type_string))
		return coll_seterr(-EINVAL, "%s: %s.%s must be a string (HCCL writes \"%s\"), "
				   "not %s", x->file, path, key, json_object_to_json_string(v),
				   json_type_to_name(json_object_get_type(v)));
	*out = json_object_get_string(v);
	return 0;
}

static int rt_req_str(struct rt_ctx *x, json_object *o, const char *key, const char *path,
		      const char *what, const char **out)
{
	int ret = rt_str(x, o, key, path, out);

	if (ret == -ENOENT)
		return coll_seterr(-EINVAL, "%s: %s.%s is missing%s%s", x->file, path, key,
				   what ? ": " : "", what ? what : "");
	return ret;
}

/* A decimal string in [lo, hi]. */
static int rt_num(struct rt_ctx *x, const char *s, const char *path, const char *key,
		  unsigned long lo, unsigned long hi, uint32_t *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || s[0] == '+' || s[0] == ' ' || v < lo ||
	    v > hi)
		return coll_seterr(-EINVAL, "%s: %s.%s is \"%s\": expected a decimal integer "
				   "in %lu..%lu", x->file, path, key, s, lo, hi);
	*out = (uint32_t)v;
	return 0;
}

static int rt_addr(struct rt_ctx *x, const char *s, const char *path, const char *key,
		   uint32_t rank)
{
	unsigned char buf[16];

	if (strlen(s) < 64 && (inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1))
		return 0;
	return coll_seterr(-EINVAL, "%s: %s.%s is \"%.80s\" (rank %u): not an IPv4 or IPv6 "
			   "address", x->file, path, key, s, rank);
}

static int rt_device(struct rt_ctx *x, json_object *d, uint32_t server, const char *path)
{
	struct coll_ranktable *rt = x->rt;
	const char *s, *ip = NULL, *kaddr = NULL;
	uint32_t rank, port = COLL_DEFAULT_PORT, v;
	struct coll_rank_desc *r;
	int ret;

	if (!json_object_is_type(d, json_type_object))
		return coll_seterr(-EINVAL, "%s: %s must be an object", x->file, path);
	ret = rt_req_str(x, d, "rank_id", path, "every device needs its rank", &s);
	if (ret)
		return ret;
	ret = rt_num(x, s, path, "rank_id", 0, RT_MAX_RANKS - 1, &rank);
	if (ret)
		return ret;
	ret = rt_str(x, d, "device_id", path, &s);
	if (ret == 0)
		ret = rt_num(x, s, path, "device_id", 0, UINT32_MAX, &v);
	if (ret && ret != -ENOENT)
		return ret;
	ret = rt_str(x, d, "kcoll_addr", path, &kaddr);
	if (ret == 0)
		ret = rt_addr(x, kaddr, path, "kcoll_addr", rank);
	if (ret && ret != -ENOENT)
		return ret;
	ret = rt_str(x, d, "device_ip", path, &ip);
	if (ret == -ENOENT && !kaddr)
		return coll_seterr(-EINVAL, "%s: %s.device_ip is missing (rank %u): kcoll needs "
				   "every rank's address (or a kcoll_addr)", x->file, path, rank);
	if (ret == 0)
		ret = rt_addr(x, ip, path, "device_ip", rank);
	if (ret && ret != -ENOENT)
		return ret;
	ret = rt_str(x, d, "device_port", path, &s);
	if (ret == 0)
		ret = rt_num(x, s, path, "device_port", 1, 65535, &port);
	if (ret && ret != -ENOENT)
		return ret;
	ret = rt_str(x, d, "kcoll_port", path, &s);
	if (ret == 0)
		ret = rt_num(x, s, path, "kcoll_port", 1, 65535, &port);
	if (ret && ret != -ENOENT)
		return ret;

	if (rank >= rt->nranks)
		return coll_seterr(-EINVAL, "%s: %s.rank_id is \"%u\": out of range, the table "
				   "has %u devices so rank ids must be 0..%u", x->file, path,
				   rank, rt->nranks, rt->nranks - 1);
	r = &rt->ranks[rank];
	if (r->port) {
		uint32_t i;

		for (i = 0; i < x->ndevs && x->devs[i].rank != rank; i++)
			;
		return coll_seterr(-EINVAL, "%s: %s.rank_id is \"%u\": duplicate, also at %s",
				   x->file, path, rank, i < x->ndevs ? x->devs[i].path : "?");
	}
	snprintf(r->addr, sizeof(r->addr), "%s", kaddr ? kaddr : ip);
	r->port = port;
	r->server_id = server;
	x->devs[x->ndevs].rank = rank;
	x->devs[x->ndevs].server = server;
	snprintf(x->devs[x->ndevs].path, sizeof(x->devs[0].path), "%s", path);
	x->ndevs++;
	return 0;
}

/* super_pod_list: assign pod ids to servers. */
static int rt_pods(struct rt_ctx *x, json_object *list, uint32_t *server_pod)
{
	struct coll_ranktable *rt = x->rt;
	json_object *p, *sl, *e;
	char path[96], epath[128];
	const char *s;
	size_t np, ns, i, j;
	uint32_t k;
	int ret;

	if (!json_object_is_type(list, json_type_array))
		return coll_seterr(-EINVAL, "%s: super_pod_list must be an array", x->file);
	np = json_object_array_length(list);
	if (!np)
		return coll_seterr(-EINVAL, "%s: super_pod_list is empty", x->file);
	free(rt->pod_names);
	rt->pod_names = calloc(np, sizeof(*rt->pod_names));
	if (!rt->pod_names)
		return coll_seterr(-ENOMEM, "%s: out of memory", x->file);
	rt->npods = (uint32_t)np;
	for (i = 0; i < np; i++) {
		p = json_object_array_get_idx(list, i);
		snprintf(path, sizeof(path), "super_pod_list[%zu]", i);
		if (!json_object_is_type(p, json_type_object))
			return coll_seterr(-EINVAL, "%s: %s must be an object", x->file, path);
		ret = rt_req_str(x, p, "super_pod_id", path, NULL, &s);
		if (ret)
			return ret;
		if (!*s || strlen(s) > RT_NAME_MAX)
			return coll_seterr(-EINVAL, "%s: %s.super_pod_id is \"%.80s\": expected 1..%d "
					   "characters", x->file, path, s, RT_NAME_MAX);
		for (j = 0; j < i; j++)
			if (!strcmp(rt->pod_names[j], s))
				return coll_seterr(-EINVAL, "%s: %s.super_pod_id is \"%s\": duplicate "
						   "of super_pod_list[%zu]", x->file, path, s, j);
		snprintf(rt->pod_names[i], sizeof(rt->pod_names[i]), "%s", s);
		if (!json_object_object_get_ex(p, "server_list", &sl) ||
		    !json_object_is_type(sl, json_type_array) || !json_object_array_length(sl))
			return coll_seterr(-EINVAL, "%s: %s.server_list is missing or not a "
					   "non-empty array", x->file, path);
		ns = json_object_array_length(sl);
		for (j = 0; j < ns; j++) {
			e = json_object_array_get_idx(sl, j);
			snprintf(epath, sizeof(epath), "%s.server_list[%zu]", path, j);
			if (!json_object_is_type(e, json_type_object))
				return coll_seterr(-EINVAL, "%s: %s must be an object", x->file, epath);
			ret = rt_req_str(x, e, "server_id", epath, NULL, &s);
			if (ret)
				return ret;
			for (k = 0; k < rt->nservers && strcmp(rt->server_names[k], s); k++)
				;
			if (k == rt->nservers)
				return coll_seterr(-EINVAL, "%s: %s.server_id is \"%.80s\": no such "
						   "server in server_list", x->file, epath, s);
			if (server_pod[k] != UINT32_MAX)
				return coll_seterr(-EINVAL, "%s: %s.server_id is \"%s\": that server "
						   "is already in super pod \"%s\"", x->file, epath,
						   s, rt->pod_names[server_pod[k]]);
			server_pod[k] = (uint32_t)i;
		}
	}
	for (k = 0; k < rt->nservers; k++)
		if (server_pod[k] == UINT32_MAX)
			return coll_seterr(-EINVAL, "%s: server_list[%u] (server_id \"%s\") is in "
					   "no super pod of super_pod_list", x->file, k,
					   rt->server_names[k]);
	return 0;
}

static int rt_parse(struct rt_ctx *x, json_object *root)
{
	struct coll_ranktable *rt = x->rt;
	json_object *sl, *srv, *devs, *pods;
	uint32_t *server_pod = NULL, v, i, j, nservers, ndev = 0;
	char path[64];
	const char *s;
	int ret;

	if (!json_object_is_type(root, json_type_object))
		return coll_seterr(-EINVAL, "%s: the rank table must be a JSON object", x->file);
	ret = rt_str(x, root, "status", "$", &s);
	if (ret == 0 && strcmp(s, "completed"))
		return coll_seterr(-EINVAL, "%s: $.status is \"%.40s\": expected \"completed\" "
				   "(the table is not ready)", x->file, s);
	if (ret && ret != -ENOENT)
		return ret;
	ret = rt_str(x, root, "version", "$", &s);
	if (ret == -ENOENT)
		s = "1.0";
	else if (ret)
		return ret;
	if (strcmp(s, "1.0") && strcmp(s, "1.2"))
		return coll_seterr(-EINVAL, "%s: $.version is \"%.40s\": kcoll reads rank tables "
				   "of version 1.0 and 1.2", x->file, s);
	snprintf(rt->version, sizeof(rt->version), "%s", s);
	if (!json_object_object_get_ex(root, "server_list", &sl))
		return coll_seterr(-EINVAL, "%s: $.server_list is missing", x->file);
	if (!json_object_is_type(sl, json_type_array) || !json_object_array_length(sl))
		return coll_seterr(-EINVAL, "%s: $.server_list must be a non-empty array",
				   x->file);
	nservers = (uint32_t)json_object_array_length(sl);
	ret = rt_str(x, root, "server_count", "$", &s);
	if (ret == 0) {
		ret = rt_num(x, s, "$", "server_count", 1, RT_MAX_RANKS, &v);
		if (ret)
			return ret;
		if (v != nservers)
			return coll_seterr(-EINVAL, "%s: $.server_count is \"%u\" but server_list "
					   "has %u servers", x->file, v, nservers);
	} else if (ret != -ENOENT) {
		return ret;
	}
	/* First pass: servers and device counts. */
	rt->server_names = calloc(nservers, sizeof(*rt->server_names));
	if (!rt->server_names)
		return coll_seterr(-ENOMEM, "%s: out of memory", x->file);
	rt->nservers = nservers;
	for (i = 0; i < nservers; i++) {
		srv = json_object_array_get_idx(sl, i);
		snprintf(path, sizeof(path), "server_list[%u]", i);
		if (!json_object_is_type(srv, json_type_object))
			return coll_seterr(-EINVAL, "%s: %s must be an object", x->file, path);
		ret = rt_req_str(x, srv, "server_id", path, NULL, &s);
		if (ret)
			return ret;
		if (!*s || strlen(s) > RT_NAME_MAX)
			return coll_seterr(-EINVAL, "%s: %s.server_id is \"%.80s\": expected 1..%d "
					   "characters", x->file, path, s, RT_NAME_MAX);
		for (j = 0; j < i; j++)
			if (!strcmp(rt->server_names[j], s))
				return coll_seterr(-EINVAL, "%s: %s.server_id is \"%s\": duplicate of "
						   "server_list[%u]", x->file, path, s, j);
		snprintf(rt->server_names[i], sizeof(rt->server_names[i]), "%s", s);
		if (!json_object_object_get_ex(srv, "device", &devs) ||
		    !json_object_is_type(devs, json_type_array) || !json_object_array_length(devs))
			return coll_seterr(-EINVAL, "%s: %s.device is missing or not a non-empty "
					   "array (server \"%s\")", x->file, path, s);
		ndev += (uint32_t)json_object_array_length(devs);
		if (ndev > RT_MAX_RANKS)
			return coll_seterr(-EINVAL, "%s: more than %d devices", x->file, RT_MAX_RANKS);
	}
	ret = rt_str(x, root, "rank_count", "$", &s);
	if (ret == 0) {
		ret = rt_num(x, s, "$", "rank_count", 1, RT_MAX_RANKS, &v);
		if (ret)
			return ret;
		if (v != ndev)
			return coll_seterr(-EINVAL, "%s: $.rank_count is \"%u\" but server_list has "
					   "%u devices", x->file, v, ndev);
	} else if (ret != -ENOENT) {
		return ret;
	}
	rt->nranks = ndev;
	rt->ranks = calloc(ndev, sizeof(*rt->ranks));
	x->devs = calloc(ndev, sizeof(*x->devs));
	server_pod = malloc(nservers * sizeof(*server_pod));
	if (!rt->ranks || !x->devs || !server_pod) {
		ret = coll_seterr(-ENOMEM, "%s: out of memory for %u ranks", x->file, ndev);
		goto out;
	}
	/* Second pass: devices. */
	for (i = 0; i < nservers; i++) {
		json_object_object_get_ex(json_object_array_get_idx(sl, i), "device", &devs);
		for (j = 0; j < json_object_array_length(devs); j++) {
			snprintf(path, sizeof(path), "server_list[%u].device[%u]", i, j);
			ret = rt_device(x, json_object_array_get_idx(devs, j), i, path);
			if (ret)
				goto out;
		}
	}
	/* Duplicate rank ids among N devices leave some id unused; caught above. */
	/* Ranks of one server contiguous; servers of one super pod contiguous. */
	for (i = 1; i < ndev; i++) {
		uint32_t a = rt->ranks[i - 1].server_id, b = rt->ranks[i].server_id;

		if (a == b)
			continue;
		for (j = 0; j + 1 < i; j++)
			if (rt->ranks[j].server_id == b) {
				ret = coll_seterr(-EINVAL, "%s: ranks of server \"%s\" are not "
						  "contiguous: rank %u is on it, rank %u on \"%s\", "
						  "then rank %u on \"%s\" again (HCCL requires "
						  "ranks of a server to be consecutive)", x->file,
						  rt->server_names[b], j, i - 1,
						  rt->server_names[a], i, rt->server_names[b]);
				goto out;
			}
	}
	for (i = 0; i < nservers; i++)
		server_pod[i] = json_object_object_get_ex(root, "super_pod_list", &pods) ?
				UINT32_MAX : 0;
	rt->npods = 1;
	if (json_object_object_get_ex(root, "super_pod_list", &pods)) {
		ret = rt_pods(x, pods, server_pod);
		if (ret)
			goto out;
	}
	for (i = 0; i < ndev; i++)
		rt->ranks[i].pod_id = server_pod[rt->ranks[i].server_id];
	for (i = 1; i < ndev; i++) {
		uint32_t a = rt->ranks[i - 1].pod_id, b = rt->ranks[i].pod_id;

		if (a == b)
			continue;
		for (j = 0; j + 1 < i; j++)
			if (rt->ranks[j].pod_id == b) {
				ret = coll_seterr(-EINVAL, "%s: servers of super pod \"%s\" are not "
						  "contiguous: rank %u (server \"%s\") is in it, "
						  "rank %u (server \"%s\") in \"%s\", rank %u "
						  "(server \"%s\") in it again", x->file,
						  rt->pod_names[b], j,
						  rt->server_names[rt->ranks[j].server_id], i - 1,
						  rt->server_names[rt->ranks[i - 1].server_id],
						  rt->pod_names[a], i,
						  rt->server_names[rt->ranks[i].server_id]);
				goto out;
			}
	}
	/* Two ranks on one address and port cannot both listen. */
	for (i = 0; i < ndev && ndev <= 4096; i++)
		for (j = 0; j < i; j++)
			if (rt->ranks[i].port == rt->ranks[j].port &&
			    !strcmp(rt->ranks[i].addr, rt->ranks[j].addr)) {
				ret = coll_seterr(-EINVAL, "%s: rank %u and rank %u both use address "
						  "%s port %u: give them distinct device_port "
						  "values", x->file, j, i, rt->ranks[i].addr,
						  rt->ranks[i].port);
				goto out;
			}
	ret = 0;
out:
	free(server_pod);
	return ret;
}

void coll_ranktable_free(struct coll_ranktable *rt)
{
	if (!rt)
		return;
	free(rt->ranks);
	free(rt->server_names);
	free(rt->pod_names);
	free(rt);
}

int coll_ranktable_parse(const char *json, size_t len, const char *name,
			 struct coll_ranktable **out)
{
	struct json_tokener *tok;
	struct rt_ctx x = { .file = name ? name : "(rank table)" };
	enum json_tokener_error jerr;
	json_object *root;
	size_t off, line = 1, i;
	int ret;

	coll_clearerr();
	if (!out)
		return coll_seterr(-EINVAL, "coll_ranktable_parse: result pointer is NULL");
	*out = NULL;
	if (!json)
		return coll_seterr(-EINVAL, "coll_ranktable_parse: no text");
	if (len > INT_MAX)
		return coll_seterr(-EINVAL, "%s: too large", x.file);
	tok = json_tokener_new();
	if (!tok)
		return coll_seterr(-ENOMEM, "%s: out of memory", x.file);
	root = json_tokener_parse_ex(tok, json, (int)len);
	jerr = json_tokener_get_error(tok);
	if (jerr == json_tokener_continue) {
		json_object_put(root);
		root = NULL;
		jerr = json_tokener_error_parse_eof;
	}
	off = json_tokener_get_parse_end(tok);
	if (!root || jerr != json_tokener_success) {
		for (i = 0; i < off && i < len; i++)
			line += json[i] == '\n';
		ret = coll_seterr(-EINVAL, "%s: line %zu: invalid JSON: %s", x.file, line,
				  json_tokener_error_desc(jerr));
		json_tokener_free(tok);
		json_object_put(root);
		return ret;
	}
	for (; off < len; off++)
		if (json[off] != ' ' && json[off] != '\n' && json[off] != '\t' &&
		    json[off] != '\r' && json[off] != '\0') {
			for (i = 0; i < off; i++)
				line += json[i] == '\n';
			json_tokener_free(tok);
			json_object_put(root);
			return coll_seterr(-EINVAL, "%s: line %zu: text after the JSON object",
					   x.file, line);
		}
	json_tokener_free(tok);
	x.rt = calloc(1, sizeof(*x.rt));
	if (!x.rt) {
		json_object_put(root);
		return coll_seterr(-ENOMEM, "%s: out of memory", x.file);
	}
	ret = rt_parse(&x, root);
	json_object_put(root);
	free(x.devs);
	if (ret) {
		coll_ranktable_free(x.rt);
		return ret;
	}
	if (!x.rt->pod_names) {
		x.rt->pod_names = calloc(1, sizeof(*x.rt->pod_names));
		if (!x.rt->pod_names) {
			coll_ranktable_free(x.rt);
			return coll_seterr(-ENOMEM, "%s: out of memory", x.file);
		}
		snprintf(x.rt->pod_names[0], sizeof(x.rt->pod_names[0]), "0");
	}
	*out = x.rt;
	/* cppcheck-suppress memleak ; the table now belongs to the caller */
	return 0;
}

int coll_ranktable_load(const char *path, struct coll_ranktable **out)
{
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f;
	int ret;

	coll_clearerr();
	if (!out)
		return coll_seterr(-EINVAL, "coll_ranktable_load: result pointer is NULL");
	*out = NULL;
	if (!path)
		return coll_seterr(-EINVAL, "coll_ranktable_load: no path");
	f = fopen(path, "re");
	if (!f)
		return coll_seterr(-errno, "cannot open rank table %s: %s", path, strerror(errno));
	do {
		if (len + 4096 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 65536;
			if (cap > (64u << 20)) {
				fclose(f);
				free(buf);
				return coll_seterr(-EFBIG, "%s: larger than 64 MiB", path);
			}
			nb = realloc(buf, cap);
			if (!nb) {
				fclose(f);
				free(buf);
				return coll_seterr(-ENOMEM, "%s: out of memory", path);
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		ret = coll_seterr(-EIO, "%s: read error", path);
		fclose(f);
		free(buf);
		return ret;
	}
	fclose(f);
	ret = coll_ranktable_parse(buf ? buf : "", len, path, out);
	free(buf);
	return ret;
}
