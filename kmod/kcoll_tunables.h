/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tunables of kcoll.ko, each defined once.  kcoll_tunables.c includes
 * this table several times, with KCOLL_TUNABLE() defined to generate in
 * turn each tunable's descriptor (default, check, sysfs attribute), its
 * module parameter and description, and the copies into struct
 * kcoll_tunables; no other file includes it.  The order is the order
 * modinfo lists them.
 *
 *   KCOLL_TUNABLE(name, kind, field of struct kcoll_tunables, check,
 *                 default, description)
 *
 * name: the module parameter (0444) and the attribute of
 * /sys/class/misc/kcoll/ (0644).  kind: u32; gbit, a rate kept in Mbit/s
 * and given in Gbit/s with up to three decimals (its default in whole
 * Gbit/s); u64; str, the HCCL_ALGO string.  The description of a number
 * stops where "default N)" follows; a string's is whole.
 *
 * The link model (levelN_*) is what automatic selection ranks algorithms
 * on; its defaults and the window (slots) are algo/'s (KC_COST_DEF_* in
 * kc_cost.h), so that a module left at its defaults plans as coll-sim and
 * collctl do; kcoll_tunables_check_model() checks the conversion at load.
 *
 * history_keep_ms and history_max_bytes are, like user_max_bytes, no
 * defaults of new communicators: they bound the flight records of
 * destroyed ones (kcoll_history.c), read whenever those are pruned.
 */
KCOLL_TUNABLE(chunk_bytes, u32, chunk_bytes, kcoll_check_chunk, 65536,
	      "message size in bytes, multiple of 8, 4096..30 pages (122880 with 4 KiB pages; ");
KCOLL_TUNABLE(slots, u32, slots, kcoll_check_slots, KC_COST_DEF_WINDOW,
	      "receive slots per peer = send window, 1..64 (");
KCOLL_TUNABLE(timeout_ms, u32, timeout_ms, kcoll_check_timeout, 30000,
	      "operation timeout in ms, 10..3600000 (");
KCOLL_TUNABLE(connect_timeout_ms, u32, connect_timeout_ms, kcoll_check_timeout, 30000,
	      "connection set-up timeout in ms (");
KCOLL_TUNABLE(qp_timeout, u32, qp_timeout, kcoll_check_qp_timeout, 16,
	      "local ACK timeout of the RC QPs, 4.096 us * 2^x, 8..24; a send unacknowledged for (qp_retry_count + 1) such timeouts (1.6 s at the defaults) fails the operation with EHOSTUNREACH: how soon a dead node or cut network is noticed (communicators created later; ");
KCOLL_TUNABLE(qp_retry_count, u32, qp_retry_count, kcoll_check_qp_retry, 5,
	      "transport retries of the RC QPs before the peer counts as unreachable, 0..7, the connecting (higher) rank's applies to both ends; 7 is unlimited on soft-RoCE (rxe), so a dead peer is never noticed (communicators created later; ");
KCOLL_TUNABLE(listen_port, u32, listen_port, kcoll_check_port, 16667,
	      "rdma_cm port of the node's listener for rank-table ports 0 (coll_comm_init_oob()); new listeners only, 1..65535 (");
KCOLL_TUNABLE(level0_alpha_ns, u32, link[KCOLL_LEVEL0].alpha_ns, kcoll_check_alpha,
	      KC_COST_DEF_L0_ALPHA_NS,
	      "level-0 (in-server) latency in ns, 0..10000000 (");
KCOLL_TUNABLE(level0_gbps, gbit, link[KCOLL_LEVEL0].mbps, kcoll_check_mbps, KC_COST_DEF_L0_GBPS,
	      "level-0 link bandwidth in Gbit/s, 0.001..1000000, three decimals (");
KCOLL_TUNABLE(level0_reduce_gbps, gbit, link[KCOLL_LEVEL0].reduce_mbps, kcoll_check_mbps,
	      KC_COST_DEF_REDUCE_GBPS,
	      "level-0 reduction throughput in Gbit/s (");
KCOLL_TUNABLE(level1_alpha_ns, u32, link[KCOLL_LEVEL1].alpha_ns, kcoll_check_alpha,
	      KC_COST_DEF_L12_ALPHA_NS,
	      "level-1 (between servers) latency in ns (");
KCOLL_TUNABLE(level1_gbps, gbit, link[KCOLL_LEVEL1].mbps, kcoll_check_mbps, KC_COST_DEF_L12_GBPS,
	      "level-1 link bandwidth in Gbit/s (");
KCOLL_TUNABLE(level1_reduce_gbps, gbit, link[KCOLL_LEVEL1].reduce_mbps, kcoll_check_mbps,
	      KC_COST_DEF_REDUCE_GBPS,
	      "level-1 reduction throughput in Gbit/s (");
KCOLL_TUNABLE(level2_alpha_ns, u32, link[KCOLL_LEVEL2].alpha_ns, kcoll_check_alpha,
	      KC_COST_DEF_L12_ALPHA_NS,
	      "level-2 (between super pods) latency in ns (");
KCOLL_TUNABLE(level2_gbps, gbit, link[KCOLL_LEVEL2].mbps, kcoll_check_mbps, KC_COST_DEF_L12_GBPS,
	      "level-2 link bandwidth in Gbit/s (");
KCOLL_TUNABLE(level2_reduce_gbps, gbit, link[KCOLL_LEVEL2].reduce_mbps, kcoll_check_mbps,
	      KC_COST_DEF_REDUCE_GBPS,
	      "level-2 reduction throughput in Gbit/s (");
KCOLL_TUNABLE(level1_auto_mesh, u32, link[KCOLL_LEVEL1].auto_mesh, kcoll_check_bool, 0,
	      "1: automatic selection may run Mesh between servers, set where measured to pay (");
KCOLL_TUNABLE(level2_auto_mesh, u32, link[KCOLL_LEVEL2].auto_mesh, kcoll_check_bool, 0,
	      "1: automatic selection may run Mesh between super pods (");
KCOLL_TUNABLE(level2_conv_pct, u32, conv_pct, kcoll_check_conv, KC_COST_DEF_CONV_PCT,
	      "level-2 convergence ratio C in percent, 100..100000 (");
KCOLL_TUNABLE(user_max_bytes, u64, user_max_bytes, NULL, 1073741824,
	      "kernel memory in bytes one user's communicators may take together, worst case; 0: no limit (");
KCOLL_TUNABLE(algo, str, algo, NULL, "",
	      "default HCCL_ALGO string (default: automatic on every level)");
KCOLL_TUNABLE(history_ops, u32, history_ops, kcoll_check_history_ops, 64,
	      "operations a communicator's flight record keeps (collctl history), 0..4096, taken at creation (");
KCOLL_TUNABLE(stall_ms, u32, stall_ms, kcoll_check_stall, 3000,
	      "ms without progress after which an operation counts as stalled: the peers are probed and the rank to blame named (collctl why), 0..3600000, 0: off (communicators created later; ");
KCOLL_TUNABLE(fingerprint, u32, fingerprint, kcoll_check_bool, 1,
	      "1: the first message of every operation to each peer carries what its caller asked, and a rank that asked otherwise fails the operation on every rank with EPROTO; 0: no fingerprint, a disagreement goes unnoticed (only to measure its cost; every rank must agree: a peer that differs is refused at connection) (communicators created later; ");
KCOLL_TUNABLE(connect_on_need, u32, connect_on_need, kcoll_check_bool, 0,
	      "1: a communicator connects to a peer when an operation first needs it (the first submission that needs a peer waits for its handshake), so that a Ring holds 2 connections, not nranks - 1; 0: to every peer at creation.  Every rank of a communicator must agree (communicators created later; ");
KCOLL_TUNABLE(history_keep_ms, u32, history_keep_ms, kcoll_check_history_keep, 600000,
	      "ms a destroyed communicator's flight record is kept (");
KCOLL_TUNABLE(history_max_bytes, u64, history_max_bytes, NULL, 4194304,
	      "bytes the flight records of destroyed communicators may take together, oldest dropped first; 0: keep none (");
