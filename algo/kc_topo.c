// SPDX-License-Identifier: GPL-2.0
/*
 * Topology construction and the effective-level decomposition.
 */
#include "kc_topo.h"
#include "kc_algo.h"

void kc_topo_free(struct kc_topo *t)
{
	kc_free(t->server_of);
	kc_free(t->server_first);
	kc_free(t->pod_of);
	kc_free(t->pod_first);
	memset(t, 0, sizeof(*t));
}

/* Shell sort of labels, to find a label that names two separate runs. */
static bool kc_has_duplicate(u32 *a, u32 n)
{
	static const u32 gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };
	u32 gi, i, j;

	for (gi = 0; gi < ARRAY_SIZE(gaps); gi++) {
		u32 gap = gaps[gi];

		for (i = gap; i < n; i++) {
			u32 v = a[i];

			for (j = i; j >= gap && a[j - gap] > v; j -= gap)
				a[j] = a[j - gap];
			a[j] = v;
		}
	}
	for (i = 1; i < n; i++)
		if (a[i] == a[i - 1])
			return true;
	return false;
}

static void kc_topo_summarize(struct kc_topo *t)
{
	u32 s, q, k = kc_topo_server_size(t, 0), m = t->pod_first[1] - t->pod_first[0];
	u32 pr = t->server_first[t->pod_first[1]] - t->server_first[t->pod_first[0]];

	for (s = 1; s < t->nservers && k; s++)
		if (kc_topo_server_size(t, s) != k)
			k = 0;
	for (q = 1; q < t->npods; q++) {
		if (t->pod_first[q + 1] - t->pod_first[q] != m)
			m = 0;
		if (t->server_first[t->pod_first[q + 1]] - t->server_first[t->pod_first[q]] != pr)
			pr = 0;
	}
	t->server_size = k;
	t->pod_servers = m;
	t->pod_ranks = pr;
	kc_algo_topo_cache(t);
}

static int kc_topo_alloc(struct kc_topo *t, u32 nranks)
{
	memset(t, 0, sizeof(*t));
	t->nranks = nranks;
	t->server_of = kc_malloc((size_t)nranks * sizeof(u32));
	t->server_first = kc_malloc(((size_t)nranks + 1) * sizeof(u32));
	t->pod_of = kc_malloc((size_t)nranks * sizeof(u32));
	t->pod_first = kc_malloc(((size_t)nranks + 1) * sizeof(u32));
	if (!t->server_of || !t->server_first || !t->pod_of || !t->pod_first) {
		kc_topo_free(t);
		return -ENOMEM;
	}
	return 0;
}

int kc_topo_init(struct kc_topo *t, u32 nranks, const u32 *server_label,
		 const u32 *pod_label, char *err, u32 errlen)
{
	u32 *runs, r, s, nruns;
	int ret;

	if (!nranks) {
		if (err)
			kc_snprintf(err, errlen, "a communicator needs at least one rank");
		return -EINVAL;
	}
	ret = kc_topo_alloc(t, nranks);
	if (ret)
		return ret;
	runs = kc_malloc((size_t)nranks * sizeof(u32));
	if (!runs) {
		kc_topo_free(t);
		return -ENOMEM;
	}
	/* Servers: a new one starts wherever the label changes. */
	nruns = 0;
	for (r = 0; r < nranks; r++) {
		u32 lab = server_label ? server_label[r] : r;

		if (!r || lab != (server_label ? server_label[r - 1] : r - 1)) {
			t->server_first[nruns] = r;
			runs[nruns++] = lab;
		} else if (pod_label && pod_label[r] != pod_label[r - 1]) {
			if (err)
				kc_snprintf(err, errlen,
					    "server %u spans super-nodes %u and %u (ranks %u and %u)",
					    lab, pod_label[r - 1], pod_label[r], r - 1, r);
			ret = -EINVAL;
			goto out;
		}
		t->server_of[r] = nruns - 1;
	}
	t->nservers = nruns;
	t->server_first[nruns] = nranks;
	if (kc_has_duplicate(runs, nruns)) {
		if (err)
			kc_snprintf(err, errlen,
				    "the ranks of a server are not contiguous (a server id appears in two separate runs)");
		ret = -EINVAL;
		goto out;
	}
	/* Pods: a new one starts wherever the pod label changes between servers. */
	nruns = 0;
	for (s = 0; s < t->nservers; s++) {
		u32 r0 = t->server_first[s];
		u32 lab = pod_label ? pod_label[r0] : 0;

		if (!s || lab != (pod_label ? pod_label[t->server_first[s - 1]] : 0)) {
			t->pod_first[nruns] = s;
			runs[nruns++] = lab;
		}
		t->pod_of[s] = nruns - 1;
	}
	t->npods = nruns;
	t->pod_first[nruns] = t->nservers;
	if (kc_has_duplicate(runs, nruns)) {
		if (err)
			kc_snprintf(err, errlen,
				    "the servers of a super-node are not contiguous (a super-node id appears in two separate runs)");
		ret = -EINVAL;
		goto out;
	}
	kc_topo_summarize(t);
	ret = 0;
out:
	kc_free(runs);
	if (ret)
		kc_topo_free(t);
	return ret;
}

int kc_topo_init_pods(struct kc_topo *t, u32 npods, const u32 *servers_per_pod, u32 per_server)
{
	u32 q, s, r = 0, srv = 0, nranks = 0;
	int ret;

	if (!npods || !per_server)
		return -EINVAL;
	for (q = 0; q < npods; q++) {
		if (!servers_per_pod[q])
			return -EINVAL;
		nranks += servers_per_pod[q] * per_server;
	}
	ret = kc_topo_alloc(t, nranks);
	if (ret)
		return ret;
	for (q = 0; q < npods; q++) {
		t->pod_first[q] = srv;
		for (s = 0; s < servers_per_pod[q]; s++, srv++) {
			u32 i;

			t->server_first[srv] = r;
			t->pod_of[srv] = q;
			for (i = 0; i < per_server; i++)
				t->server_of[r++] = srv;
		}
	}
	t->nservers = srv;
	t->npods = npods;
	t->server_first[srv] = nranks;
	t->pod_first[npods] = srv;
	kc_topo_summarize(t);
	return 0;
}

int kc_topo_init_sizes(struct kc_topo *t, u32 nranks, u32 nservers, const u32 *sizes,
		       char *err, u32 errlen)
{
	u64 sum = 0;
	u32 s, r = 0;
	int ret;

	for (s = 0; s < nservers; s++) {
		if (!sizes[s]) {
			if (err)
				kc_snprintf(err, errlen, "server %u has no ranks", s);
			return -EINVAL;
		}
		sum += sizes[s];
	}
	if (!nservers || sum != nranks) {
		if (err)
			kc_snprintf(err, errlen, "the servers cover %llu of %u ranks",
				    (unsigned long long)sum, nranks);
		return -EINVAL;
	}
	ret = kc_topo_alloc(t, nranks);
	if (ret)
		return ret;
	for (s = 0; s < nservers; s++) {
		u32 i;

		t->server_first[s] = r;
		t->pod_of[s] = 0;
		for (i = 0; i < sizes[s]; i++)
			t->server_of[r++] = s;
	}
	t->nservers = nservers;
	t->npods = 1;
	t->server_first[nservers] = nranks;
	t->pod_first[0] = 0;
	t->pod_first[1] = nservers;
	kc_topo_summarize(t);
	return 0;
}

int kc_topo_init_regular(struct kc_topo *t, u32 npods, u32 servers_per_pod, u32 per_server)
{
	u32 *spp, q;
	int ret;

	if (!npods)
		return -EINVAL;
	spp = kc_malloc((size_t)npods * sizeof(u32));
	if (!spp)
		return -ENOMEM;
	for (q = 0; q < npods; q++)
		spp[q] = servers_per_pod;
	ret = kc_topo_init_pods(t, npods, spp, per_server);
	kc_free(spp);
	return ret;
}

static void kc_level_set(struct kc_level *l, u32 cfg, u32 levels, u32 span, u32 size, u32 me,
			 u32 base, u32 stride)
{
	l->cfg_level = cfg;
	l->levels = levels | KC_LEVEL_BIT(cfg);
	l->span = span;
	l->g.size = size;
	l->g.me = me;
	l->g.ranks = NULL;
	l->g.base = base;
	l->g.stride = stride;
}

u32 kc_topo_levels(const struct kc_topo *t, u32 rank, struct kc_level *lv)
{
	u32 n = 0, s = t->server_of[rank], q = t->pod_of[s];
	u32 k = t->server_size;

	if (k > 1) {
		/* level0: my server; upper levels: same local index, stride k */
		u32 local = rank - t->server_first[s];
		u32 sp = s - t->pod_first[q];
		u32 m = t->pod_first[q + 1] - t->pod_first[q];

		kc_level_set(&lv[n++], KCOLL_LEVEL0, 0, 1, k, local, t->server_first[s], 1);
		if (t->npods > 1 && t->pod_servers) {
			if (m > 1)
				kc_level_set(&lv[n++], KCOLL_LEVEL1, 0, k, m, sp,
					     t->pod_first[q] * k + local, k);
			kc_level_set(&lv[n++], KCOLL_LEVEL2, 0, m * k, t->npods, q, sp * k + local,
				     m * k);
		} else if (t->nservers > 1) {
			/* one pod, or pods of different sizes merged into level1 */
			u32 up = t->npods > 1 ? KC_LEVEL_BIT(KCOLL_LEVEL2) : 0;

			kc_level_set(&lv[n++], KCOLL_LEVEL1, up, k, t->nservers, s, local, k);
		}
	} else {
		/* servers of one rank, or of different sizes: a pod is a group */
		u32 p0 = t->server_first[t->pod_first[q]];
		u32 pn = t->server_first[t->pod_first[q + 1]] - p0;
		u32 lvl0 = t->nservers == t->npods ? KCOLL_LEVEL0 : KCOLL_LEVEL1;
		/* servers of different sizes merge level0 into the level above */
		u32 in = k ? 0 : KC_LEVEL_BIT(KCOLL_LEVEL0);
		u32 up = t->npods > 1 ? KC_LEVEL_BIT(KCOLL_LEVEL2) : 0;

		if (t->npods > 1 && t->pod_ranks) {
			if (pn > 1)
				kc_level_set(&lv[n++], lvl0, in, 1, pn, rank - p0, p0, 1);
			kc_level_set(&lv[n++], KCOLL_LEVEL2, 0, pn, t->npods, q, rank - p0, pn);
		} else if (t->nranks > 1) {
			kc_level_set(&lv[n++], t->npods > 1 ? KCOLL_LEVEL1 : lvl0, in | up, 1,
				     t->nranks, rank, 0, 1);
		}
	}
	return n;
}
