#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kcoll-vm stage 2: PID 1 of every node, started by stage1-init from the
# run directory (/kcvm/run, 9p read-write, shared with the host runner).
#
# Brings up eth0 and the soft-RoCE device rxe0, loads the module under test,
# reports ready, waits for the runner's "go", starts this node's ranks with
# their environment, carries out fault requests addressed to this node,
# writes each rank's exit status and powers the VM off once the runner says
# "finish".  Protocol files in /kcvm/run (all written atomically by rename):
#   config.sh            runner -> nodes: the cluster description
#   ready.N / setup-failed.N   node -> runner
#   go, finish           runner -> nodes
#   ctl.N.SEQ            runner -> node N: one fault action per file
#   out/rank.R.log       rank R's stdout+stderr, streamed by the runner
#   out/rank.R.rc        rank R's exit status
#   done.N, dmesg.N, rmmod.N   node -> runner, after its ranks exited
#   post.N, post.N.log   node -> runner: the --post command's status, output
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8
R=/kcvm/run
node=
for a in $(</proc/cmdline); do
	case $a in kcvm.node=*) node=${a#kcvm.node=} ;; esac
done

say() { echo "kcvm[node$node] $(cut -d' ' -f1 /proc/uptime): $*"; }

off() {
	sync
	/usr/bin/busybox poweroff -f
	sleep 10
}
put() { # put FILE TEXT: atomic write into the run directory
	printf '%s\n' "$2" >"$1.tmp.$node" && mv -f "$1.tmp.$node" "$1"
}
die() {
	say "setup failed: $*"
	dmesg | tail -n 30 >"$R/dmesg.$node" 2>/dev/null
	put "$R/setup-failed.$node" "$*"
	off
}
trap off EXIT

mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
mount -t configfs configfs /sys/kernel/config 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# What udev makes on a real system; bash's <(cmd) needs /dev/fd (dkms does).
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mkdir -p /var/tmp /var/lib /var/log /run/kcvm
ln -s /run /var/run
chmod 1777 /var/tmp

# Sleep without a fork: under TCG, exec'ing sleep(1) from the 9p-shared
# /usr takes the VM's one vCPU from the ranks under test.  read -t on a
# FIFO this shell holds both ends of never gets data and returns when the
# time is up.
if mkfifo /run/kcvm/nap && exec {nap_fd}<>/run/kcvm/nap; then
	nap() { read -rt "$1" -u "$nap_fd" || :; }
else
	nap() { sleep "$1"; }
fi

[ -n "$node" ] || die "no kcvm.node= on the kernel command line"
# shellcheck source=/dev/null
. "$R/config.sh" || die "cannot read $R/config.sh"
ip=${KCVM_IPS[node]}

hostname "node$node"
{
	echo "127.0.0.1 localhost"
	for ((i = 0; i < KCVM_NNODES; i++)); do
		echo "${KCVM_IPS[i]} node$i"
	done
} >/etc/hosts

say "stage 2 started"
ip link set lo up
ip link set eth0 mtu "$KCVM_MTU" || die "eth0: cannot set MTU $KCVM_MTU"
ip addr add "$ip/24" dev eth0 || die "eth0: cannot add $ip"
ip link set eth0 up || die "eth0 does not come up"

# A kernel built from source (kcoll-vm --kernel DIR): the host's /usr has
# no module tree of its release, the runner shares the tree's own.
if [ -n "${KCVM_MODTREE_TAG:-}" ]; then
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro,cache=loose "$KCVM_MODTREE_TAG" /usr/lib/modules ||
		die "cannot mount the kernel's module tree ($KCVM_MODTREE_TAG)"
fi

modprobe -a rdma_rxe ib_uverbs rdma_ucm || die "modprobe rdma_rxe ib_uverbs rdma_ucm failed"
say "rdma modules loaded"
rdma link add rxe0 type rxe netdev eth0 || die "rdma link add rxe0 failed"
for ((i = 0; i < 100; i++)); do
	rdma link show rxe0/1 2>/dev/null | grep -q 'state ACTIVE' && break
	sleep 0.1
done
rdma link show rxe0/1 | grep -q 'state ACTIVE' || die "rxe0 port 1 is not ACTIVE"

for s in "${KCVM_SHARES[@]}"; do # tag:mode:path
	tag=${s%%:*} rest=${s#*:}
	mode=${rest%%:*} path=${rest#*:}
	mkdir -p "$path"
	if [ "$mode" = ro ]; then
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro,cache=loose "$tag" "$path" ||
			die "cannot mount share $path"
	else
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,rw,cache=mmap "$tag" "$path" ||
			die "cannot mount share $path"
	fi
done

# The source tree under test: the kcvm_top share, at its host path.
top=
for s in "${KCVM_SHARES[@]}"; do
	case $s in kcvm_top:*) top=${s#kcvm_top:*:} ;; esac
done

# There is no udevd here: once kcoll.ko is loaded, do what the shipped
# rule (udev/60-kcoll.rules of the tree under test, the kcvm_top share at
# its host path) tells udev to do, reading MODE and GROUP from the rule
# itself so the tests check the rule that ships.  The group is created if
# missing, in this VM's /etc only (a tmpfs overlay of the host's).
udev_rule() {
	local rule=$top/udev/60-kcoll.rules what
	what=$("$top/tools/vm/udev-apply.sh" "$rule" 2>&1) || die "$what"
	say "/dev/kcoll: $what (from $rule)"
}

# Test hook (selftests/lib/vm_persist.sh): when the ranks get
# KCOLL_MODPROBE_CONF=FILE (-e), collctl config --persist keeps its
# settings in FILE, on a --share-rw directory of the host, where the next
# run (the next "boot") finds them.  This VM's /etc is a throwaway overlay:
# FILE is linked in as /etc/modprobe.d/kcoll.conf before the module load,
# so that the load reads it where it reads the real one, through
# `modprobe -c`.  A FILE that does not exist yet is skipped by modprobe.
for e in "${KCVM_ENV[@]}"; do
	case $e in
	KCOLL_MODPROBE_CONF=?*)
		ln -sfn "${e#*=}" /etc/modprobe.d/kcoll.conf ||
			die "cannot link ${e#*=} as /etc/modprobe.d/kcoll.conf" ;;
	esac
done

# The module as modprobe would load it, modprobe.d's options included
# (tools/vm/kcoll-load.sh, which a test may call again after rmmod).
if [ -n "$KCVM_MODULE" ]; then
	# shellcheck disable=SC2086 # module arguments are words
	out=$("$top/tools/vm/kcoll-load.sh" "$KCVM_MODULE" $KCVM_MODARGS 2>&1) || die "$out"
	say "$out"
	[ "$(basename "$KCVM_MODULE")" != kcoll.ko ] || udev_rule
fi

if [ -n "$KCVM_SETUP" ]; then
	bash -c "$KCVM_SETUP" || die "setup command failed: $KCVM_SETUP"
fi

put "$R/ready.$node" "$(cut -d' ' -f1 /proc/uptime) $(uname -r)"
say "ready: $ip rxe0 ($(uname -r))"
while [ ! -e "$R/go" ]; do nap 0.1; done

# Fault requests from the runner: ctl.N.1, ctl.N.2, ... one action each.
ctl_loop() {
	local seq=1 f a b c rc pid
	while [ ! -e "$R/finish" ]; do
		f=$R/ctl.$node.$seq
		if [ ! -e "$f" ]; then
			nap 0.2
			continue
		fi
		IFS=$'\t' read -r a b c <"$f"
		rc=0
		case $a in
		kill-rank) # kill-rank RANK SIGNAL: the rank's whole session
			pid=$(cat "/run/kcvm/rank.$b.pid" 2>/dev/null)
			say "fault: kill -$c rank $b (session $pid)"
			if [ -n "$pid" ]; then kill "-$c" -- "-$pid" || rc=$?; else rc=1; fi ;;
		kill-proc) # kill-proc SIGNAL PATTERN
			say "fault: pkill -$b -f '$c'"
			pkill "-$b" -f -- "$c" || rc=$? ;;
		rxe-del)
			say "fault: rdma link delete rxe0"
			rdma link delete rxe0 || rc=$? ;;
		exec) # output to ctl.N.SEQ.out, not the scanned console
			say "fault: exec $b"
			bash -c "$b" >"$f.out" 2>&1 </dev/null || rc=$? ;;
		*)
			say "fault: unknown action '$a'"
			rc=127 ;;
		esac
		put "$f.done" "$rc"
		seq=$((seq + 1))
	done
}
ctl_loop &

subst() { # replace {rank} {nranks} ... in one argument
	local s=$1
	s=${s//\{rank\}/$rank}
	s=${s//\{nranks\}/$KCVM_NRANKS}
	s=${s//\{local_rank\}/$l}
	s=${s//\{node\}/$node}
	s=${s//\{nnodes\}/$KCVM_NNODES}
	s=${s//\{ip\}/$ip}
	s=${s//\{port\}/$port}
	s=${s//\{ranktable\}/$R/ranktable.json}
	printf '%s' "$s"
}

mkdir -p "$R/out"
pids=()
for ((l = 0; l < KCVM_RPN; l++)); do
	rank=$((node * KCVM_RPN + l))
	port=$((KCVM_BASE_PORT + l))
	args=()
	for a in "${KCVM_CMD[@]}"; do args+=("$(subst "$a")"); done
	mkdir -p "$R/out/rank.$rank"
	(
		# shellcheck disable=SC2016 # $1 and $@ belong to the inner shell
		env "${KCVM_ENV[@]}" \
			KCOLL_VM=1 KCOLL_RANK="$rank" KCOLL_NRANKS="$KCVM_NRANKS" \
			KCOLL_LOCAL_RANK="$l" KCOLL_RANKS_PER_NODE="$KCVM_RPN" \
			KCOLL_NODE="$node" KCOLL_NNODES="$KCVM_NNODES" \
			KCOLL_SUPER_NODE="${KCVM_PODS[node]}" \
			KCOLL_RANKTABLE=$R/ranktable.json KCOLL_IP="$ip" KCOLL_PORT=$port \
			KCOLL_NODE_IPS="${KCVM_IPS[*]}" KCOLL_RDMA_DEV=rxe0 KCOLL_NETDEV=eth0 \
			KCOLL_OUTDIR="$R/out/rank.$rank" KCOLL_FAULT_REQ="$R/fault-requests" \
			setsid bash -c 'cd "$1" || exit 127; shift; exec "$@"' kcvm-rank "$KCVM_CWD" "${args[@]}" \
			>"$R/out/rank.$rank.log" 2>&1 </dev/null &
		echo $! >"/run/kcvm/rank.$rank.pid"
		wait $! 2>/dev/null # no job status message when a fault kills it
		put "$R/out/rank.$rank.rc" "$?"
	) &
	pids+=($!)
done
wait "${pids[@]}"
say "all ranks of this node exited"

if [ -n "$KCVM_MODULE" ] && [ "$KCVM_RMMOD" = 1 ]; then
	m=$(basename "${KCVM_MODULE%.ko}")
	if out=$(rmmod "$m" 2>&1); then put "$R/rmmod.$node" "0"; else put "$R/rmmod.$node" "1 $out"; fi
fi
if [ -n "${KCVM_POST_CMD:-}" ]; then
	say "running the --post command"
	(cd "$KCVM_CWD" && bash -c "$KCVM_POST_CMD") >"$R/post.$node.log" 2>&1 </dev/null
	put "$R/post.$node" "$?"
fi
dmesg >"$R/dmesg.$node.tmp" 2>&1 && mv -f "$R/dmesg.$node.tmp" "$R/dmesg.$node"
put "$R/done.$node" "$(cut -d' ' -f1 /proc/uptime)"
while [ ! -e "$R/finish" ]; do nap 0.2; done
