// SPDX-License-Identifier: GPL-2.0
/*
 * Topology from an HCCL rank table (spec 4.2): v1.0 server_list[].device[]
 * with rank_id, and v1.2's super_pod_list grouping servers into pods.
 * Only what the simulator needs is read: which server and which pod each
 * rank belongs to.  (libcoll has the full loader for real communicators.)
 */
#include <stdio.h>
#include <json-c/json.h>
#include "ranktable.h"

static const char *rt_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return NULL;
	return json_object_get_string(v);
}

static struct json_object *rt_array(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
		return NULL;
	return v;
}

/* Pod index of server id @sid, from super_pod_list (0 without one). */
static int rt_pod_of(struct json_object *pods, const char *sid)
{
	size_t i, j;

	if (!pods)
		return 0;
	for (i = 0; i < json_object_array_length(pods); i++) {
		struct json_object *srv = rt_array(json_object_array_get_idx(pods, i),
						   "server_list");

		for (j = 0; srv && j < json_object_array_length(srv); j++) {
			const char *id = rt_str(json_object_array_get_idx(srv, j), "server_id");

			if (id && !strcmp(id, sid))
				return (int)i;
		}
	}
	return -1;
}

int rt_load(const char *path, struct kc_topo *t, char *err, u32 errlen)
{
	struct json_object *root = json_object_from_file(path), *servers, *pods;
	u32 *srv_of = NULL, *pod_of = NULL, n = 0, s;
	int ret = -EINVAL;

	if (!root) {
		snprintf(err, errlen, "%s: cannot read JSON: %s", path, json_util_get_last_err());
		return -EINVAL;
	}
	servers = rt_array(root, "server_list");
	pods = rt_array(root, "super_pod_list");
	if (!servers) {
		snprintf(err, errlen, "%s: no server_list array (rank table v1.0/1.2 expected)",
			 path);
		goto out;
	}
	for (s = 0; s < json_object_array_length(servers); s++) {
		struct json_object *dev = rt_array(json_object_array_get_idx(servers, s), "device");

		n += dev ? (u32)json_object_array_length(dev) : 0;
	}
	srv_of = calloc(n ? n : 1, sizeof(u32));
	pod_of = calloc(n ? n : 1, sizeof(u32));
	if (!srv_of || !pod_of) {
		ret = -ENOMEM;
		goto out;
	}
	for (s = 0; s < n; s++)
		srv_of[s] = U32_MAX;
	for (s = 0; s < json_object_array_length(servers); s++) {
		struct json_object *so = json_object_array_get_idx(servers, s);
		struct json_object *dev = rt_array(so, "device");
		const char *sid = rt_str(so, "server_id");
		int pod = rt_pod_of(pods, sid ? sid : "");
		size_t d;

		if (pod < 0) {
			snprintf(err, errlen, "%s: server '%s' is in no super_pod_list entry", path,
				 sid ? sid : "?");
			goto out;
		}
		for (d = 0; dev && d < json_object_array_length(dev); d++) {
			const char *rid = rt_str(json_object_array_get_idx(dev, d), "rank_id");
			char *end;
			unsigned long r = rid ? strtoul(rid, &end, 10) : 0;

			if (!rid || *end || r >= n || srv_of[r] != U32_MAX) {
				snprintf(err, errlen,
					 "%s: server %u device %zu: rank_id '%s' missing, repeated or not in 0..%u",
					 path, s, d, rid ? rid : "", n - 1);
				goto out;
			}
			srv_of[r] = s;
			pod_of[r] = (u32)pod;
		}
	}
	ret = kc_topo_init(t, n, srv_of, pod_of, err, errlen);
out:
	free(srv_of);
	free(pod_of);
	json_object_put(root);
	return ret;
}
