#!/usr/bin/env bash
# Stops the cluster that up.sh DIR started (every node, powered on or off) and leaves no
# process, mount, network namespace, interface, route, iptables rule, cgroup or changed
# sysctl of it behind; exits non-zero, naming them, if any remain.
# Idempotent: safe on a DIR whose cluster is half started, already down, or never was.
#
#   down.sh DIR
#
# Order: Kueue (kueue.sh), the Prometheus Operator (prometheus_operator.sh) and the
# controllers first (nothing recreates or schedules pods), then the pods are deleted
# while the kubelet still runs, so that it stops their sandboxes through CRI and CNI DEL
# releases their addresses and veths; then the kubelets, CoreDNS, the containerds, their
# shims, whatever still runs in the pods' cgroups, the control plane, the mounts, the
# bridges, the blackhole route and the guard chain. DIR keeps its logs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

dir="${1:-}"
[[ -n "$dir" && $# -eq 1 ]] || die "usage: $0 DIR"
[[ -d "$dir" ]] || { log "$dir does not exist: nothing to stop"; exit 0; }
dir="$(cd "$dir" && pwd)"
cluster_paths "$dir"
CACHE="" CONTAINERD_PID="" KCM_PID="" SCHEDULER_PID="" KUBELET_PID="" COREDNS_PID="" WATCHDOG_PID=""
KUBE_PROXY_PID="" KUEUE_PID="" PROMETHEUS_OPERATOR_PID="" NODE_COUNT=1
if [[ -f "$dir/cluster.env" ]]; then
  # A node.sh poweron under way would start processes behind this stop's back.
  exec 9>>"$dir/.node.lock"
  flock -w 120 9 || log "a node.sh on $dir still runs after 120 s; stopping anyway"
  load_cluster_env
else
  node_init 0
fi

# shellcheck source=../lib/process.sh
source "$here/../lib/process.sh"
stop_pid() { stop_owned "$1" "$dir" "$2" || true; }

watchdog_of_dir() { # pid
  local cmd
  cmd=" $({ tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null)"
  [[ "$cmd" == *" ddp3d-cluster-watchdog "* && "$cmd" == *" $dir " ]]
}

alive() { owns "$1" "$dir"; }

# Running tasks in every node's containerd that still runs.
containerd_tasks() {
  local i
  for ((i = 0; i < NODE_COUNT; i++)); do
    alive "$(nv "$i" CONTAINERD_PID)" && ctr_node "$i" tasks ls -q 2>/dev/null
  done
  return 0
}
# containerd removes a pod's netns mount only after CNI DEL released its address and veth.
pod_netns() { findmnt -rn -t nsfs -o TARGET 2>/dev/null | grep -F "$RUN/" || true; }

delete_pods() {
  local i any=0
  for ((i = 0; i < NODE_COUNT; i++)); do
    alive "$(nv "$i" KUBELET_PID)" && alive "$(nv "$i" CONTAINERD_PID)" && any=1
  done
  ((any)) && [[ -f "$dir/env" ]] || return 0
  kubectl_admin delete pods --all --all-namespaces --grace-period=0 --force --wait=false \
    >/dev/null 2>&1 || true
  # The kubelet kills each container and stops its sandbox (CNI DEL) once it sees the
  # pod gone; done when containerd runs no task and holds no pod network namespace.
  local deadline=$((SECONDS + 90))
  while ((SECONDS < deadline)); do
    [[ -z "$(containerd_tasks)" && -z "$(pod_netns)" ]] && return 0
    sleep 0.5
  done
  log "after 90s, pods' tasks still running: $(containerd_tasks | tr '\n' ' ') netns: $(pod_netns | tr '\n' ' ')"
}

kill_tasks() { # what the kubelets did not stop
  local i t
  for ((i = 0; i < NODE_COUNT; i++)); do
    alive "$(nv "$i" CONTAINERD_PID)" || continue
    for t in $(ctr_node "$i" tasks ls -q 2>/dev/null); do
      ctr_node "$i" tasks kill --all --signal SIGKILL "$t" >/dev/null 2>&1 || true
    done
  done
}

# Pod processes live in the kubelets' cgroups (cgroupfs driver: /kubepods/... for node 0,
# /NODE/kubepods/... for node i>0, whose cgroup root itself goes too). Anything left there
# once the shims are gone is killed, then the cgroups are removed.
kubepods_cgroups() {
  local h i
  for h in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [[ -d "$h" ]] && find "$h" -depth -type d
  done
  for ((i = 1; i < NODE_COUNT; i++)); do node_cgroups "$i"; done
  # Node roots of a cluster whose cluster.env is gone: this DIR holds the machine's cluster.
  if [[ "$(cat "$MACHINE_OWNER" 2>/dev/null)" == "$dir" ]]; then
    for h in /sys/fs/cgroup/*/ddp3d-node-*; do
      [[ -d "$h" ]] && find "$h" -depth -type d
    done
  fi
  return 0
}
clean_cgroups() {
  local cg i pids
  for ((i = 0; i < 50; i++)); do
    pids="$(for cg in $(kubepods_cgroups); do cat "$cg/cgroup.procs" 2>/dev/null; done | sort -u)"
    [[ -z "$pids" ]] && break
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    sleep 0.1
  done
  for cg in $(kubepods_cgroups | sort -u | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2-); do
    rmdir "$cg" 2>/dev/null || true
  done
}

unmount_all() {
  local m
  for m in $(owned_mounts "$dir"); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"
  done
}

cluster_bridges() {
  ip -o link show type bridge 2>/dev/null | awk -F': ' '{ print $2 }' | grep -E '^ddp3d[0-9]+$' || true
}
remove_links() {
  # Only the cluster that holds the bridges removes them (one cluster per machine).
  [[ "$(cat "$MACHINE_OWNER" 2>/dev/null)" == "$dir" ]] || return 0
  local l br
  for br in $(cluster_bridges); do
    for l in $(ip -o link show master "$br" 2>/dev/null | awk -F': ' '{ print $2 }' | cut -d@ -f1); do
      ip link del "$l" 2>/dev/null || true
    done
    ip link del "$br" 2>/dev/null || true
  done
}

# The blackhole route for the cluster's 10.88.0.0/16 and the guard chain (up.sh's
# create_network), once no bridge routes pod traffic any more.
cluster_routes() { ip -4 route show 2>/dev/null | grep -E '(^| )10\.88\.' || true; }
guard_rules() {
  iptables-save -t filter 2>/dev/null | grep -c -e "^:$GUARD_CHAIN " -e "-j $GUARD_CHAIN\$" -e "^-A $GUARD_CHAIN " || true
}
remove_network_guards() {
  [[ "$(cat "$MACHINE_OWNER" 2>/dev/null)" == "$dir" ]] || return 0
  while ip -4 route del blackhole "$CLUSTER_CIDR" 2>/dev/null; do :; done
  while iptables -w -D FORWARD -j "$GUARD_CHAIN" 2>/dev/null; do :; done
  iptables -w -F "$GUARD_CHAIN" 2>/dev/null || true
  iptables -w -X "$GUARD_CHAIN" 2>/dev/null || true
}

# The KUBE-* chains of kube-proxy (Service rules) and of the kubelet (KUBE-FIREWALL,
# KUBE-KUBELET-CANARY, ...), IPv4 and IPv6: only the cluster that holds the bridge (one per
# machine) wrote them. Jumps to them from the built-in chains go first, then the chains.
kube_rules() {
  local c
  for c in iptables ip6tables; do
    command -v "$c-save" >/dev/null && "$c-save" 2>/dev/null
  done | grep -c -e '^-A KUBE-' -e '^:KUBE-' -e '-j KUBE-' || true
}
remove_kube_rules() {
  [[ "$(cat "$MACHINE_OWNER" 2>/dev/null)" == "$dir" ]] || return 0
  local c t rule chain
  for c in iptables ip6tables; do
    command -v "$c-save" >/dev/null || continue
    for t in filter nat mangle raw; do
      while IFS= read -r rule; do
        # The saved rule, quotes included, as arguments: -A CHAIN ... becomes -D CHAIN ...
        eval "$c -w -t $t -D ${rule#-A }" 2>/dev/null || log "cannot delete $c -t $t rule: $rule"
      done < <("$c-save" -t "$t" 2>/dev/null | grep -E '^-A [A-Z]+ .*-j KUBE-' || true)
      for chain in $("$c-save" -t "$t" 2>/dev/null | sed -n 's/^:\(KUBE-[^ ]*\) .*/\1/p'); do
        "$c" -w -t "$t" -F "$chain" 2>/dev/null || true
      done
      for chain in $("$c-save" -t "$t" 2>/dev/null | sed -n 's/^:\(KUBE-[^ ]*\) .*/\1/p'); do
        "$c" -w -t "$t" -X "$chain" 2>/dev/null || log "cannot delete $c -t $t chain $chain"
      done
    done
  done
}

restore_sysctls() {
  [[ -f "$dir/sysctl.saved" ]] || return 0
  local kv
  while IFS= read -r kv; do
    echo "${kv#*=}" >"/proc/sys/${kv%%=*}" 2>/dev/null || log "cannot restore ${kv%%=*}"
  done <"$dir/sysctl.saved"
  rm -f "$dir/sysctl.saved"
}

main() {
  # The owner watchdog goes first so that it cannot race this stop (when it is the one
  # running this stop, it has become this process).
  if [[ -n "$WATCHDOG_PID" && "$WATCHDOG_PID" != "$$" ]] && watchdog_of_dir "$WATCHDOG_PID"; then
    kill -TERM "$WATCHDOG_PID" 2>/dev/null || true
  fi
  # Kueue (kueue.sh) and the Prometheus Operator (prometheus_operator.sh) first: they act
  # on the API objects the others manage. Kueue's webhook configurations stay in etcd,
  # which goes with the control plane.
  stop_pid "$KUEUE_PID" kueue
  stop_pid "$PROMETHEUS_OPERATOR_PID" prometheus-operator
  remove_kueue_metrics_certs "$dir"
  stop_pid "$KCM_PID" kube-controller-manager
  stop_pid "$SCHEDULER_PID" kube-scheduler
  [[ -n "$CACHE" ]] && delete_pods
  local i
  for ((i = 0; i < NODE_COUNT; i++)); do stop_pid "$(nv "$i" KUBELET_PID)" "kubelet of $(nv "$i" NAME)"; done
  stop_pid "$COREDNS_PID" coredns
  stop_pid "$KUBE_PROXY_PID" kube-proxy
  local held=0
  [[ "$(cat "$MACHINE_OWNER" 2>/dev/null)" == "$dir" ]] && held=1
  remove_kube_rules
  [[ -n "$CACHE" ]] && kill_tasks
  for ((i = 0; i < NODE_COUNT; i++)); do stop_pid "$(nv "$i" CONTAINERD_PID)" "containerd of $(nv "$i" NAME)"; done
  # Shims outlive containerd by design; theirs name RUN on their command lines.
  local p
  for p in $(owned_pids "$dir"); do
    [[ "$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null)" == *containerd-shim* ]] && { kill -KILL "$p" 2>/dev/null || true; }
  done
  clean_cgroups
  bash "$here/../testbin/control-plane.sh" stop "$dir" >/dev/null 2>&1 || true
  unmount_all
  remove_links
  remove_network_guards
  ((held)) && rm -f "$MACHINE_OWNER"
  rm -rf "$RUN"
  # What the kubelet, the shims and libcni keep at fixed paths: links to container logs
  # that point here, this network's cached CNI results (left only if a sandbox was never
  # torn down), and the folders they made, if empty now.
  find /var/log/containers -maxdepth 1 -lname "$dir/*" -delete 2>/dev/null || true
  local stale
  stale="$({ find /var/lib/cni/results -maxdepth 1 -name 'ddp3d-*' 2>/dev/null || true; } | wc -l)"
  ((stale == 0)) || log "removing $stale cached CNI results of sandboxes that were not torn down"
  rm -f /var/lib/cni/results/ddp3d-* /var/lib/kubelet/device-plugins/kubelet.sock
  clean_stale_shim_sockets
  rmdir /var/lib/cni/results /var/lib/cni /var/lib/kubelet/device-plugins /var/lib/kubelet \
    /run/containerd/runc/k8s.io /run/containerd/runc /run/containerd/fifo /run/containerd/s \
    /run/containerd /var/log/containers 2>/dev/null || true
  # Last: the CNI bridge plugin turns IPv4 forwarding on at each pod it adds.
  restore_sysctls
  rm -f "$dir/cluster.env"

  # Verify, so that a leak fails loudly here rather than in the next test.
  local left=()
  for p in $(owned_pids "$dir"); do left+=("process $p: $({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | cut -c1-120)"); done
  for p in $(owned_mounts "$dir"); do left+=("mount $p"); done
  for p in $(kubepods_cgroups); do
    if [[ -n "$(cat "$p/cgroup.procs" 2>/dev/null)" ]]; then
      left+=("processes in cgroup $p")
    elif [[ "$p" == /sys/fs/cgroup/*/ddp3d-node-* ]]; then
      left+=("cgroup $p")
    fi
  done
  if ((held)); then
    for p in $(cluster_bridges); do left+=("bridge $p"); done
    [[ "$(kube_rules)" != 0 ]] && left+=("$(kube_rules) iptables rules/chains named KUBE-*")
    [[ "$(guard_rules)" != 0 ]] && left+=("$(guard_rules) iptables rules/chains of $GUARD_CHAIN")
    while IFS= read -r p; do [[ -n "$p" ]] && left+=("route $p"); done < <(cluster_routes)
  fi
  [[ -f "$dir/sysctl.saved" ]] && left+=("sysctls not restored ($dir/sysctl.saved)")
  [[ "$(cat "$KUEUE_METRICS_CERT_DIR/ddp3d-cluster.dir" 2>/dev/null)" == "$dir" ]] &&
    left+=("kueue metrics certificate in $KUEUE_METRICS_CERT_DIR")
  if ((${#left[@]})); then
    printf 'cluster: left behind: %s\n' "${left[@]}" >&2
    exit 1
  fi
  log "stopped; no process, mount, netns, interface, route or rule left"
}

main
