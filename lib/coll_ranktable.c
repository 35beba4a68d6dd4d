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
 * for device entries, the rank.  The text is read strictly: json-c's
 * JSON_TOKENER_STRICT (no trailing comma, no single quotes), no key twice
 * in one object (json-c would keep the last silently), and a UTF-8 byte
 * order mark, which editors on Windows write, is skipped.  Every message
 * starts with file:line:col, as a compiler's does, so editors jump to it:
 * of the syntax error, of the duplicate key, of the faulty value, or of
 * the object that lacks a field.  json-c keeps no position of parsed
 * values, so a field's position is found again in the text from its JSON
 * path (rt_at()); the path is in the message too.
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
	const char *text;	/* the JSON text (after a byte order mark), for rt_at() */
	size_t len;
	char where[PATH_MAX + 48];	/* rt_at()'s result: file:line:col */
	struct coll_ranktable *rt;
	/* per parsed device, in file order */
	struct rt_dev {
		uint32_t rank, server;
		char path[64];
	} *devs;
	uint32_t ndevs;
};

static const char *rt_at(struct rt_ctx *x, const char *path, const char *key);

/* A string member; -ENOENT if absent (no message), -EINVAL if not a string. */
static int rt_str(struct rt_ctx *x, json_object *o, const char *key, const char *path,
		  const char **out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return -ENOENT;
	if (!json_object_is_type(v, json_type_string))
		return coll_seterr(-EINVAL, "%s: %s.%s must be a string (HCCL writes \"%s\"), "
				   "not %s", rt_at(x, path, key), path, key, json_object_to_json_string(v),
				   json_type_to_name(json_object_get_type(v)));
	*out = json_object_get_string(v);
	return 0;
}

static int rt_req_str(struct rt_ctx *x, json_object *o, const char *key, const char *path,
		      const char *what, const char **out)
{
	int ret = rt_str(x, o, key, path, out);

	if (ret == -ENOENT)
		return coll_seterr(-EINVAL, "%s: %s.%s is missing%s%s", rt_at(x, path, key), path, key,
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
				   "in %lu..%lu", rt_at(x, path, key), path, key, s, lo, hi);
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
			   "address", rt_at(x, path, key), path, key, s, rank);
}

/* The JSON path of the device parsed with rank @rank. */
static const char *rt_rank_path(const struct rt_ctx *x, uint32_t rank)
{
	uint32_t i;

	for (i = 0; i < x->ndevs && x->devs[i].rank != rank; i++)
		;
	return i < x->ndevs ? x->devs[i].path : "$";
}

static int rt_device(struct rt_ctx *x, json_object *d, uint32_t server, const char *path)
{
	struct coll_ranktable *rt = x->rt;
	const char *s, *ip = NULL, *kaddr = NULL;
	uint32_t rank, port = COLL_DEFAULT_PORT, v;
	struct coll_rank_desc *r;
	int ret;

	if (!json_object_is_type(d, json_type_object))
		return coll_seterr(-EINVAL, "%s: %s must be an object", rt_at(x, path, NULL), path);
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
				   "every rank's address (or a kcoll_addr)", rt_at(x, path, NULL), path,
				   rank);
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
				   "has %u devices so rank ids must be 0..%u", rt_at(x, path, "rank_id"), path,
				   rank, rt->nranks, rt->nranks - 1);
	r = &rt->ranks[rank];
	if (r->port)
		return coll_seterr(-EINVAL, "%s: %s.rank_id is \"%u\": duplicate, also at %s",
				   rt_at(x, path, "rank_id"), path, rank, rt_rank_path(x, rank));
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
		return coll_seterr(-EINVAL, "%s: super_pod_list must be an array",
				   rt_at(x, "$", "super_pod_list"));
	np = json_object_array_length(list);
	if (!np)
		return coll_seterr(-EINVAL, "%s: super_pod_list is empty",
				   rt_at(x, "$", "super_pod_list"));
	free(rt->pod_names);
	rt->pod_names = calloc(np, sizeof(*rt->pod_names));
	if (!rt->pod_names)
		return coll_seterr(-ENOMEM, "%s: out of memory", x->file);
	rt->npods = (uint32_t)np;
	for (i = 0; i < np; i++) {
		p = json_object_array_get_idx(list, i);
		snprintf(path, sizeof(path), "super_pod_list[%zu]", i);
		if (!json_object_is_type(p, json_type_object))
			return coll_seterr(-EINVAL, "%s: %s must be an object", rt_at(x, path, NULL),
					   path);
		ret = rt_req_str(x, p, "super_pod_id", path, NULL, &s);
		if (ret)
			return ret;
		if (!*s || strlen(s) > RT_NAME_MAX)
			return coll_seterr(-EINVAL, "%s: %s.super_pod_id is \"%.80s\": expected 1..%d "
					   "characters", rt_at(x, path, "super_pod_id"), path, s,
					   RT_NAME_MAX);
		for (j = 0; j < i; j++)
			if (!strcmp(rt->pod_names[j], s))
				return coll_seterr(-EINVAL, "%s: %s.super_pod_id is \"%s\": duplicate "
						   "of super_pod_list[%zu]", rt_at(x, path, "super_pod_id"),
						   path, s, j);
		snprintf(rt->pod_names[i], sizeof(rt->pod_names[i]), "%s", s);
		if (!json_object_object_get_ex(p, "server_list", &sl) ||
		    !json_object_is_type(sl, json_type_array) || !json_object_array_length(sl))
			return coll_seterr(-EINVAL, "%s: %s.server_list is missing or not a "
					   "non-empty array", rt_at(x, path, "server_list"), path);
		ns = json_object_array_length(sl);
		for (j = 0; j < ns; j++) {
			e = json_object_array_get_idx(sl, j);
			snprintf(epath, sizeof(epath), "%s.server_list[%zu]", path, j);
			if (!json_object_is_type(e, json_type_object))
				return coll_seterr(-EINVAL, "%s: %s must be an object",
						   rt_at(x, epath, NULL), epath);
			ret = rt_req_str(x, e, "server_id", epath, NULL, &s);
			if (ret)
				return ret;
			for (k = 0; k < rt->nservers && strcmp(rt->server_names[k], s); k++)
				;
			if (k == rt->nservers)
				return coll_seterr(-EINVAL, "%s: %s.server_id is \"%.80s\": no such "
						   "server in server_list", rt_at(x, epath, "server_id"),
						   epath, s);
			if (server_pod[k] != UINT32_MAX)
				return coll_seterr(-EINVAL, "%s: %s.server_id is \"%s\": that server "
						   "is already in super pod \"%s\"",
						   rt_at(x, epath, "server_id"), epath,
						   s, rt->pod_names[server_pod[k]]);
			server_pod[k] = (uint32_t)i;
		}
	}
	for (k = 0; k < rt->nservers; k++)
		if (server_pod[k] == UINT32_MAX) {
			snprintf(path, sizeof(path), "server_list[%u]", k);
			return coll_seterr(-EINVAL, "%s: %s (server_id \"%s\") is in no super pod "
					   "of super_pod_list", rt_at(x, path, "server_id"), path,
					   rt->server_names[k]);
		}
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
		return coll_seterr(-EINVAL, "%s: the rank table must be a JSON object",
				   rt_at(x, "$", NULL));
	ret = rt_str(x, root, "status", "$", &s);
	if (ret == 0 && strcmp(s, "completed"))
		return coll_seterr(-EINVAL, "%s: $.status is \"%.40s\": expected \"completed\" "
				   "(the table is not ready)", rt_at(x, "$", "status"), s);
	if (ret && ret != -ENOENT)
		return ret;
	ret = rt_str(x, root, "version", "$", &s);
	if (ret == -ENOENT)
		s = "1.0";
	else if (ret)
		return ret;
	if (strcmp(s, "1.0") && strcmp(s, "1.2"))
		return coll_seterr(-EINVAL, "%s: $.version is \"%.40s\": kcoll reads rank tables "
				   "of version 1.0 and 1.2", rt_at(x, "$", "version"), s);
	snprintf(rt->version, sizeof(rt->version), "%s", s);
	if (!json_object_object_get_ex(root, "server_list", &sl))
		return coll_seterr(-EINVAL, "%s: $.server_list is missing", rt_at(x, "$", NULL));
	if (!json_object_is_type(sl, json_type_array) || !json_object_array_length(sl))
		return coll_seterr(-EINVAL, "%s: $.server_list must be a non-empty array",
				   rt_at(x, "$", "server_list"));
	nservers = (uint32_t)json_object_array_length(sl);
	ret = rt_str(x, root, "server_count", "$", &s);
	if (ret == 0) {
		ret = rt_num(x, s, "$", "server_count", 1, RT_MAX_RANKS, &v);
		if (ret)
			return ret;
		if (v != nservers)
			return coll_seterr(-EINVAL, "%s: $.server_count is \"%u\" but server_list "
					   "has %u servers", rt_at(x, "$", "server_count"), v, nservers);
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
			return coll_seterr(-EINVAL, "%s: %s must be an object", rt_at(x, path, NULL),
					   path);
		ret = rt_req_str(x, srv, "server_id", path, NULL, &s);
		if (ret)
			return ret;
		if (!*s || strlen(s) > RT_NAME_MAX)
			return coll_seterr(-EINVAL, "%s: %s.server_id is \"%.80s\": expected 1..%d "
					   "characters", rt_at(x, path, "server_id"), path, s, RT_NAME_MAX);
		for (j = 0; j < i; j++)
			if (!strcmp(rt->server_names[j], s))
				return coll_seterr(-EINVAL, "%s: %s.server_id is \"%s\": duplicate of "
						   "server_list[%u]", rt_at(x, path, "server_id"), path, s, j);
		snprintf(rt->server_names[i], sizeof(rt->server_names[i]), "%s", s);
		if (!json_object_object_get_ex(srv, "device", &devs) ||
		    !json_object_is_type(devs, json_type_array) || !json_object_array_length(devs))
			return coll_seterr(-EINVAL, "%s: %s.device is missing or not a non-empty "
					   "array (server \"%s\")", rt_at(x, path, "device"), path, s);
		ndev += (uint32_t)json_object_array_length(devs);
		if (ndev > RT_MAX_RANKS)
			return coll_seterr(-EINVAL, "%s: more than %d devices", rt_at(x, path, "device"),
					   RT_MAX_RANKS);
	}
	ret = rt_str(x, root, "rank_count", "$", &s);
	if (ret == 0) {
		ret = rt_num(x, s, "$", "rank_count", 1, RT_MAX_RANKS, &v);
		if (ret)
			return ret;
		if (v != ndev)
			return coll_seterr(-EINVAL, "%s: $.rank_count is \"%u\" but server_list has "
					   "%u devices", rt_at(x, "$", "rank_count"), v, ndev);
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
						  "ranks of a server to be consecutive)",
						  rt_at(x, rt_rank_path(x, i), "rank_id"),
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
						  "(server \"%s\") in it again",
						  rt_at(x, rt_rank_path(x, i), "rank_id"),
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
						  "values", rt_at(x, rt_rank_path(x, i), "device_port"),
						  j, i, rt->ranks[i].addr,
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

/* Line and column (1-based) of byte @off of @s. */
static void rt_where(const char *s, size_t off, size_t *line, size_t *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off; i++) {
		*col = s[i] == '\n' ? 1 : *col + 1;
		*line += s[i] == '\n';
	}
}

/* The end of the JSON string starting at @s[@i] (the quote), after its closing quote. */
static size_t rt_skip_string(const char *s, size_t len, size_t i)
{
	for (i++; i < len && s[i] != '"'; i++)
		if (s[i] == '\\')
			i++;
	return i + 1;
}

/*
 * Finding a field again in the text.  json-c keeps no positions, so a
 * field named by its JSON path is looked up in the text, which is valid
 * JSON with no key twice by the time a field is checked: walk from the
 * root, member by member and element by element, skipping the values in
 * between.  Keys are compared as written (an escaped key is not found and
 * the message points at its object instead).
 */
static size_t rt_ws(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'))
		i++;
	return i;
}

/* The end of the value starting at @s[@i]. */
static size_t rt_skip_value(const char *s, size_t len, size_t i)
{
	unsigned depth = 0;

	while (i < len) {
		if (s[i] == '"') {
			i = rt_skip_string(s, len, i);
			if (!depth)
				return i;
			continue;
		}
		if (s[i] == '{' || s[i] == '[') {
			depth++;
		} else if (s[i] == '}' || s[i] == ']') {
			if (!depth)
				return i;	/* a number or literal ends here */
			if (!--depth)
				return i + 1;
		} else if (!depth && (s[i] == ',' || rt_ws(s, len, i) > i)) {
			return i;
		}
		i++;
	}
	return i;
}

/* The offset of member @key's value (@n bytes) of the object at @o, or SIZE_MAX. */
static size_t rt_member(const char *s, size_t len, size_t o, const char *key, size_t n)
{
	size_t i = rt_ws(s, len, o + 1), e;
	bool hit;

	while (i < len && s[i] == '"') {
		e = rt_skip_string(s, len, i);
		hit = e - i == n + 2 && !memcmp(s + i + 1, key, n);
		i = rt_ws(s, len, rt_ws(s, len, e) + 1);	/* past the ':' */
		if (hit)
			return i;
		i = rt_ws(s, len, rt_skip_value(s, len, i));
		if (i < len && s[i] == ',')
			i = rt_ws(s, len, i + 1);
	}
	return SIZE_MAX;
}

/* The offset of element @idx of the array at @o, or SIZE_MAX. */
static size_t rt_element(const char *s, size_t len, size_t o, unsigned long idx)
{
	size_t i = rt_ws(s, len, o + 1);

	for (; i < len && s[i] != ']'; idx--) {
		if (!idx)
			return i;
		i = rt_ws(s, len, rt_skip_value(s, len, i));
		if (i < len && s[i] == ',')
			i = rt_ws(s, len, i + 1);
	}
	return SIZE_MAX;
}

/*
 * "file:line:col" of the value of @key in the object at @path ("$",
 * "server_list[1].device[0]"), of that object if it lacks @key (the
 * position for "is missing"), or of the value at @path if @key is NULL.
 * Just "file" if the path is not found.  The result lives in @x until
 * the next call: one call per message.
 */
static const char *rt_at(struct rt_ctx *x, const char *path, const char *key)
{
	const char *s = x->text, *p = path;
	size_t len = x->len, o = rt_ws(s, len, 0), m, n, line, col;
	char *end;

	p += *p == '$';
	while (*p && o < len) {
		if (*p == '.')
			p++;
		if (*p == '[' && s[o] == '[') {
			o = rt_element(s, len, o, strtoul(p + 1, &end, 10));
			p = end + (*end == ']');
		} else if (*p != '[' && s[o] == '{') {
			n = strcspn(p, ".[");
			o = rt_member(s, len, o, p, n);
			p += n;
		} else {
			o = SIZE_MAX;
		}
	}
	if (o >= len) {
		snprintf(x->where, sizeof(x->where), "%s", x->file);
		return x->where;
	}
	if (key && s[o] == '{') {
		m = rt_member(s, len, o, key, strlen(key));
		o = m < len ? m : o;
	}
	rt_where(s, o, &line, &col);
	snprintf(x->where, sizeof(x->where), "%s:%zu:%zu", x->file, line, col);
	return x->where;
}

/*
 * json-c keeps the last of two equal keys without a word, so a second
 * pass over the text (valid JSON by now) compares each key with the keys
 * before it in the same object.  Keys are compared as written: "a" and
 * "\u0061" count as different, which no rank table writer produces.
 */
static int rt_dup_keys(struct rt_ctx *x, const char *s, size_t len)
{
	struct { size_t off, len; unsigned depth; } *keys = NULL;
	size_t nkeys = 0, cap = 0, i, j, k, line, col;
	unsigned depth = 0, obj = 0;	/* obj: bit d set if depth d is an object */
	bool want_key = false;
	int ret = 0;

	for (i = 0; i < len && !ret; i++) {
		switch (s[i]) {
		case '{': case '[':
			if (++depth >= 64)
				goto out;	/* json-c's own depth limit is 32 */
			obj = s[i] == '{' ? obj | 1u << depth : obj & ~(1u << depth);
			want_key = s[i] == '{';
			break;
		case '}': case ']':
			while (nkeys && keys[nkeys - 1].depth >= depth)
				nkeys--;
			depth--;
			break;
		case ',':
			want_key = obj >> depth & 1;
			break;
		case '"':
			j = rt_skip_string(s, len, i);
			if (want_key) {
				for (k = nkeys; k-- && keys[k].depth == depth;)
					if (keys[k].len == j - i && !memcmp(s + keys[k].off, s + i, j - i)) {
						rt_where(s, i, &line, &col);
						ret = coll_seterr(-EINVAL, "%s:%zu:%zu: key %.*s given twice "
								  "in one object (JSON keeps only one)",
								  x->file, line, col, (int)(j - i < 80 ? j - i : 80),
								  s + i);
						goto out;
					}
				if (nkeys == cap) {
					void *n = realloc(keys, (cap = cap ? 2 * cap : 64) * sizeof(*keys));

					if (!n) {
						ret = coll_seterr(-ENOMEM, "%s: out of memory", x->file);
						goto out;
					}
					keys = n;
				}
				keys[nkeys].off = i;
				keys[nkeys].len = j - i;
				keys[nkeys++].depth = depth;
				want_key = false;
			}
			i = j - 1;
			break;
		}
	}
out:
	free(keys);
	return ret;
}

int coll_ranktable_parse(const char *json, size_t len, const char *name,
			 struct coll_ranktable **out)
{
	struct json_tokener *tok;
	struct rt_ctx x = { .file = name ? name : "(rank table)" };
	enum json_tokener_error jerr;
	json_object *root;
	size_t off, line, col;
	int ret;

	coll_clearerr();
	if (!out)
		return coll_seterr(-EINVAL, "coll_ranktable_parse: result pointer is NULL");
	*out = NULL;
	if (!json)
		return coll_seterr(-EINVAL, "coll_ranktable_parse: no text");
	if (len > INT_MAX)
		return coll_seterr(-EINVAL, "%s: too large", x.file);
	if (len >= 3 && !memcmp(json, "\xef\xbb\xbf", 3)) {
		/* a UTF-8 byte order mark: skipped; columns count from after it */
		json += 3;
		len -= 3;
	}
	tok = json_tokener_new();
	if (!tok)
		return coll_seterr(-ENOMEM, "%s: out of memory", x.file);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, json, (int)len);
	jerr = json_tokener_get_error(tok);
	if (jerr == json_tokener_continue) {
		json_object_put(root);
		root = NULL;
		jerr = json_tokener_error_parse_eof;
	}
	off = json_tokener_get_parse_end(tok);
	if (!root || jerr != json_tokener_success) {
		rt_where(json, off < len ? off : len, &line, &col);
		if (off < len && json[off] == '\xef')
			ret = coll_seterr(-EINVAL, "%s:%zu:%zu: invalid JSON: a UTF-8 byte order "
					  "mark inside the text", x.file, line, col);
		else if (off < len && json[off] > ' ' && json[off] < 0x7f)
			ret = coll_seterr(-EINVAL, "%s:%zu:%zu: invalid JSON: %s '%c'%s", x.file,
					  line, col, json_tokener_error_desc(jerr), json[off],
					  json[off] == '}' || json[off] == ']' ?
					  " (a trailing comma before it?)" : "");
		else
			ret = coll_seterr(-EINVAL, "%s:%zu:%zu: invalid JSON: %s", x.file, line,
					  col, json_tokener_error_desc(jerr));
		json_tokener_free(tok);
		json_object_put(root);
		return ret;
	}
	for (; off < len; off++)
		if (json[off] != ' ' && json[off] != '\n' && json[off] != '\t' &&
		    json[off] != '\r' && json[off] != '\0') {
			rt_where(json, off, &line, &col);
			json_tokener_free(tok);
			json_object_put(root);
			return coll_seterr(-EINVAL, "%s:%zu:%zu: text after the JSON object",
					   x.file, line, col);
		}
	json_tokener_free(tok);
	ret = rt_dup_keys(&x, json, len);
	if (ret) {
		json_object_put(root);
		return ret;
	}
	x.text = json;
	x.len = len;
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
