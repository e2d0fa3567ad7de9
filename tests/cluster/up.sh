#!/usr/bin/env bash
# A real one-machine Kubernetes cluster for tests:
#
#   up.sh DIR [--nodes N] [--capacity KEY=N]...
#                 build what is missing (cached, see build.sh), start the cluster, wait
#                 until its nodes are Ready and CoreDNS answers, print DIR/kubeconfig
#     --nodes N       N kubelet nodes (1..8, default 1), each with its own kubelet,
#                     containerd, bridge ddp3d<i> and pod subnet 10.88.<i>.0/24. One node is
#                     named ddp3d-node; N>1 are ddp3d-node-0..N-1 (node 0 holds the control
#                     plane's address 10.88.0.1). node.sh powers nodes off and on.
#     --capacity KEY=N  advertise extended resource KEY (e.g. example.com/gpu=2) on every
#                     node (node.sh DIR capacity NODE KEY=N for one node)
#
# Env: CLUSTER_OWNER_PID (a watchdog runs down.sh DIR when that process exits),
# CLUSTER_FEATURE_GATES (A=true,B=false: kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelets, kube-proxy), CLUSTER_RUNTIME_CONFIG (kube-apiserver
# --runtime-config), CLUSTER_NODE_MONITOR_GRACE_PERIOD (default 20s with N>1, the
# controller-manager's default with one node).
#
# Runs etcd + kube-apiserver (../testbin/control-plane.sh), kube-controller-manager,
# kube-scheduler, per node containerd 2 with runc and a kubelet, one kube-proxy
# (iptables), CNI bridge networking (one IP per pod, host-local IPAM) and CoreDNS for
# cluster.local on node 0's bridge address, which is every kubelet's clusterDNS.
# CoreDNS runs as a host process beside the kubelets (see README.md for why). Images
# come from local OCI archives imported into containerd; nothing is pulled.
#
# One cluster per machine (bridges and subnets are fixed). Needs root, runc and
# busybox-static (tools/setup.sh installs them). Logs: DIR/logs/*.log. State: DIR/cluster.env.
# down.sh DIR stops it and leaves no process, mount, netns, interface, route or rule behind.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

usage="usage: $0 DIR [--nodes N] [--capacity KEY=N]..."
dir="" NODE_COUNT=1 capacity=()
while (($#)); do
  case "$1" in
  --nodes)
    [[ $# -ge 2 ]] || die "--nodes takes a number of nodes (1..$MAX_NODES)"
    [[ "$2" =~ ^[0-9]+$ ]] || die "--nodes $2: not a number (1..$MAX_NODES)"
    (( 10#$2 >= 1 && 10#$2 <= MAX_NODES )) ||
      die "--nodes $2: out of range 1..$MAX_NODES (each node is a kubelet and a containerd on this machine, with subnet 10.88.<i>.0/24)"
    NODE_COUNT=$((10#$2)); shift 2 ;;
  --capacity)
    [[ $# -ge 2 ]] || die "--capacity takes KEY=N (an extended resource, e.g. example.com/gpu=2)"
    if [[ "$2" == *- ]] || ! valid_capacity_spec "$2"; then
      die "--capacity $2: want KEY=N with KEY an extended resource name outside kubernetes.io (e.g. example.com/gpu=2)"
    fi
    capacity+=("$2"); shift 2 ;;
  -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  -*) die "unknown option $1; $usage" ;;
  *) [[ -z "$dir" ]] || die "one DIR only; $usage"; dir="$1"; shift ;;
  esac
done
[[ -n "$dir" ]] || die "$usage"
if [[ -n "${CLUSTER_FEATURE_GATES:-}" ]]; then
  [[ "$CLUSTER_FEATURE_GATES" =~ ^[A-Za-z0-9]+=(true|false)(,[A-Za-z0-9]+=(true|false))*$ ]] ||
    die "CLUSTER_FEATURE_GATES=$CLUSTER_FEATURE_GATES: want Name=true|false[,Name=true|false...]"
fi
NODE_MONITOR_PERIOD="" NODE_MONITOR_GRACE_PERIOD="${CLUSTER_NODE_MONITOR_GRACE_PERIOD:-}"
if ((NODE_COUNT > 1)); then
  NODE_MONITOR_PERIOD=2s NODE_MONITOR_GRACE_PERIOD="${NODE_MONITOR_GRACE_PERIOD:-20s}"
elif [[ -n "$NODE_MONITOR_GRACE_PERIOD" ]]; then
  NODE_MONITOR_PERIOD=2s
fi
[[ -z "$NODE_MONITOR_GRACE_PERIOD" || "$NODE_MONITOR_GRACE_PERIOD" =~ ^[0-9]+s$ ]] ||
  die "CLUSTER_NODE_MONITOR_GRACE_PERIOD=$NODE_MONITOR_GRACE_PERIOD: want seconds, e.g. 20s"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
cluster_paths "$dir"
for ((i = 0; i < NODE_COUNT; i++)); do node_init "$i"; done

preflight() {
  [[ $EUID -eq 0 ]] || die "must run as root (containerd, runc, network namespaces, mounts)"
  command -v runc >/dev/null || die "runc not found: apt-get install runc"
  command -v "$KUBECTL" >/dev/null || die "kubectl not found"
  command -v iptables >/dev/null || die "iptables not found: apt-get install iptables"
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
    die "the kernel has no overlay filesystem (containerd's snapshotter needs it)"
  # A cluster left behind by an owner killed with all it started (nothing runs; its
  # bridges, routes and mounts remain) would refuse this machine to every later cluster:
  # take it down first. One that something still works with is refused below, by name.
  local owner
  owner="$(cat "$MACHINE_OWNER" 2>/dev/null || true)"
  if [[ -n "$owner" && -d "$owner" && "$owner" != "$dir" ]] && ! cluster_in_use "$owner"; then
    log "the cluster in $owner has no process left: taking down what it left (down.sh $owner)"
    bash "$here/down.sh" "$owner" >&2 || die "down.sh $owner failed: see above; run it by hand"
  elif [[ "$owner" == "$dir" && -z "$(owned_pids "$dir")" ]]; then
    log "an earlier cluster in $dir has no process left: taking down what it left"
    bash "$here/down.sh" "$dir" >&2 || die "down.sh $dir failed: see above; run it by hand"
  fi
  [[ -z "$(owned_pids "$dir")" ]] ||
    die "processes of a cluster in $dir still run (down.sh it first): $(owned_pids "$dir" | tr '\n' ' ')"
  [[ -z "$(owned_mounts "$dir")" ]] ||
    die "mounts of an earlier cluster remain under $dir or $RUN: run down.sh $dir"
  local br
  for br in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '{ print $2 }' | grep -E '^ddp3d[0-9]+$' || true); do
    die "bridge $br exists: another cluster is up on this machine ($(cat "$MACHINE_OWNER" 2>/dev/null || echo 'unknown DIR')); run down.sh on it"
  done
  [[ -z "$(ip -4 route show "$CLUSTER_CIDR" 2>/dev/null)" ]] ||
    die "a route for $CLUSTER_CIDR exists ($(ip -4 route show "$CLUSTER_CIDR" | head -1)): another cluster holds it, or down.sh did not finish"
  ! iptables -w -S "$GUARD_CHAIN" >/dev/null 2>&1 ||
    die "iptables chain $GUARD_CHAIN exists: another cluster holds it, or down.sh did not finish"
  # The runtime state of an earlier cluster in DIR (containers, pods, addresses) would be
  # recovered as stale pods; only the certificates are kept (images are imported anew).
  rm -rf "$dir/containerd" "$dir/kubelet" "$dir/cni" "$dir/coredns" "$dir/logs" "$dir/nodes" "$RUN"
}

# This machine's settings that the cluster changes, saved once for down.sh.
save_sysctls() {
  [[ -f "$dir/sysctl.saved" ]] && return 0
  local k
  for k in "${SAVED_SYSCTLS[@]}"; do
    [[ -f "/proc/sys/$k" ]] && echo "$k=$(cat "/proc/sys/$k")"
  done >"$dir/sysctl.saved.tmp"
  mv -f "$dir/sysctl.saved.tmp" "$dir/sysctl.saved"
}

# The bridges exist before anything else starts: kube-apiserver binds to node 0's address
# (pods reach it there, through the `kubernetes` Service), a kubelet's node IP is its
# bridge's address (a node IP may not be loopback) and CoreDNS binds to node 0's.
# Network safety: no packet to or from a pod may leave this machine. A blackhole route
# for all of 10.88.0.0/16 catches what no bridge's /24 claims (a powered-off node's
# subnet: without it such packets would follow the default route out), and the guard
# chain drops forwarded traffic between a pod bridge and any other interface.
create_network() {
  echo "$dir" >"$MACHINE_OWNER"
  ip route add blackhole "$CLUSTER_CIDR" metric "$BLACKHOLE_METRIC"
  iptables -w -N "$GUARD_CHAIN"
  iptables -w -A "$GUARD_CHAIN" -i 'ddp3d+' -o 'ddp3d+' -j RETURN
  iptables -w -A "$GUARD_CHAIN" -i 'ddp3d+' -j DROP
  iptables -w -A "$GUARD_CHAIN" -o 'ddp3d+' -j DROP
  iptables -w -I FORWARD 1 -j "$GUARD_CHAIN"
  local i
  for ((i = 0; i < NODE_COUNT; i++)); do node_bridge_up "$i"; done
  # Pods on one bridge reach the others through this machine (the CNI bridge plugin
  # would turn this on at the first pod anyway); down.sh restores the saved value.
  echo 1 >/proc/sys/net/ipv4/ip_forward
}

start_controllers() {
  issue_cert kube-controller-manager "/CN=system:kube-controller-manager" "$client_ext"
  issue_cert kube-scheduler "/CN=system:kube-scheduler" "$client_ext"
  write_kubeconfig "$dir/kube-controller-manager.kubeconfig" kube-controller-manager
  write_kubeconfig "$dir/kube-scheduler.kubeconfig" kube-scheduler
  KCM_PORT=$(free_port) SCHEDULER_PORT=$(free_port)
  local kcm_extra=() gates=()
  [[ -n "${CLUSTER_FEATURE_GATES:-}" ]] && gates=(--feature-gates "$CLUSTER_FEATURE_GATES")
  # Node-loss detection: the node lifecycle controller marks a node Ready=Unknown once its
  # kubelet has not renewed its Lease nor posted status for the grace period (default 50 s).
  [[ -n "$NODE_MONITOR_GRACE_PERIOD" ]] &&
    kcm_extra=(--node-monitor-period "$NODE_MONITOR_PERIOD" --node-monitor-grace-period "$NODE_MONITOR_GRACE_PERIOD")
  start_bg KCM_PID kube-controller-manager "$CACHE/bin/kube-controller-manager" \
    --kubeconfig "$dir/kube-controller-manager.kubeconfig" \
    --authentication-kubeconfig "$dir/kube-controller-manager.kubeconfig" \
    --authorization-kubeconfig "$dir/kube-controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$KCM_PORT" \
    --cert-dir "$dir/pki/kube-controller-manager" \
    --service-account-private-key-file "$dir/pki/sa.key" --root-ca-file "$dir/pki/ca.crt" \
    --use-service-account-credentials \
    --cluster-signing-cert-file "$dir/pki/ca.crt" --cluster-signing-key-file "$dir/pki/ca.key" \
    --leader-elect=false --profiling=false "${kcm_extra[@]}" "${gates[@]}"
  start_bg SCHEDULER_PID kube-scheduler "$CACHE/bin/kube-scheduler" \
    --kubeconfig "$dir/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig "$dir/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig "$dir/kube-scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" \
    --leader-elect=false --profiling=false "${gates[@]}"
}

# kube-proxy in iptables mode: ClusterIP Services route (the `kubernetes` Service to
# kube-apiserver on the gateway address, which pods in a Deployment such as the
# operator's use). One for the machine, whatever the node count: every node shares this
# host's network namespace, so per-node kube-proxies would write the same rules into the
# same tables. It leaves this machine's conntrack settings alone; down.sh removes its
# rules.
start_kube_proxy() {
  command -v iptables-restore >/dev/null || die "iptables not found: apt-get install iptables"
  issue_cert kube-proxy "/CN=system:kube-proxy" "$client_ext"
  write_kubeconfig "$dir/kube-proxy.kubeconfig" kube-proxy
  KUBE_PROXY_HEALTHZ_PORT=$(free_port) KUBE_PROXY_METRICS_PORT=$(free_port)
  mkdir -p "$dir/kube-proxy"
  cat >"$dir/kube-proxy/config.yaml" <<EOF
# kube-proxy for the ddp3d test cluster (written by tests/cluster/up.sh).
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $dir/kube-proxy.kubeconfig}
hostnameOverride: $(nv 0 NAME)
mode: iptables
clusterCIDR: $( ((NODE_COUNT == 1)) && echo "$POD_SUBNET" || echo "$CLUSTER_CIDR")
healthzBindAddress: 127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$KUBE_PROXY_METRICS_PORT
# 0: keep the machine's conntrack table size and timeouts.
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
# NodePorts on 127.0.0.1 would need route_localnet on every interface.
iptables: {localhostNodePorts: false}
EOF
  [[ -n "${CLUSTER_FEATURE_GATES:-}" ]] && echo "featureGates: $(feature_gates_yaml)" >>"$dir/kube-proxy/config.yaml"
  start_bg KUBE_PROXY_PID kube-proxy "$CACHE/bin/kube-proxy" --config "$dir/kube-proxy/config.yaml" -v 1
}
# Ready once it has written the rules for the `kubernetes` Service.
kube_proxy_ready() {
  curl -fsS --max-time 2 "http://127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT/healthz" &&
    iptables -t nat -S KUBE-SERVICES 2>/dev/null | grep -q 'default/kubernetes:https'
}

start_coredns() {
  issue_cert coredns "/CN=system:coredns" "$client_ext"
  write_kubeconfig "$dir/coredns.kubeconfig" coredns
  # The permissions upstream's CoreDNS deployment grants it.
  kubectl_admin apply -f - >/dev/null <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:coredns"}
EOF
  COREDNS_HEALTH_PORT=$(free_port) COREDNS_READY_PORT=$(free_port)
  mkdir -p "$dir/coredns"
  cat >"$dir/coredns/Corefile" <<EOF
# CoreDNS for the ddp3d test cluster (written by tests/cluster/up.sh).
.:53 {
    bind $GATEWAY
    errors
    log
    health 127.0.0.1:$COREDNS_HEALTH_PORT
    ready 127.0.0.1:$COREDNS_READY_PORT
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $dir/coredns.kubeconfig ddp3d-test
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
EOF
  start_bg COREDNS_PID coredns "$CACHE/bin/coredns" -conf "$dir/coredns/Corefile"
}

coredns_ready() { curl -fsS --max-time 2 "http://127.0.0.1:$COREDNS_READY_PORT/ready"; }

abort_up() {
  log "start failed; stopping what was started (logs in $dir/logs)"
  bash "$here/down.sh" "$dir" >&2 || true
}

main() {
  preflight
  local t0=$SECONDS i
  CACHE="$(bash "$here/build.sh")"
  mkdir -p "$dir/logs"
  log "binaries ready in $((SECONDS - t0))s ($CACHE)"
  trap abort_up EXIT
  trap 'exit 130' INT TERM
  KCM_PID="" SCHEDULER_PID="" COREDNS_PID="" KUBE_PROXY_PID=""
  write_cluster_env
  save_sysctls
  create_network
  # etcd + kube-apiserver: testbin's, with its certificates and admin kubeconfig, on node
  # 0's bridge address. It took 88 s to get ready here under a load of 12.
  APISERVER_ADDRESS="$GATEWAY" CONTROL_PLANE_READY_TIMEOUT=300 \
    APISERVER_FEATURE_GATES="${CLUSTER_FEATURE_GATES:-}" APISERVER_RUNTIME_CONFIG="${CLUSTER_RUNTIME_CONFIG:-}" \
    bash "$here/../testbin/control-plane.sh" start "$dir" >/dev/null 2>>"$dir/logs/control-plane.log" ||
    { tail -n 20 "$dir/logs/control-plane.log" >&2; die "control-plane.sh start failed"; }
  ln -sf ../etcd.log ../kube-apiserver.log "$dir/logs/"
  load_control_plane_env
  for ((i = 0; i < NODE_COUNT; i++)); do
    write_node_containerd_config "$i"
    start_node_containerd "$i"
    import_images "$i"
  done
  start_controllers
  for ((i = 0; i < NODE_COUNT; i++)); do
    node_cgroup_up "$i"
    write_node_kubelet_config "$i"
    set_nv "$i" CAPACITY "$(merge_capacity "" "${capacity[@]}")"
    start_node_kubelet "$i"
  done
  start_kube_proxy
  start_coredns
  for ((i = 0; i < NODE_COUNT; i++)); do
    wait_for "node $(nv "$i" NAME) Ready" 180 "$(nv "$i" KUBELET_PID)" "$(nv "$i" LOGS)/kubelet.log" node_ready "$i"
    ((${#capacity[@]})) && apply_capacity "$i" "${capacity[@]}"
  done
  wait_for "CoreDNS ready" 60 "$COREDNS_PID" "$dir/logs/coredns.log" coredns_ready
  wait_for "kube-proxy rules for Service default/kubernetes" 120 "$KUBE_PROXY_PID" \
    "$dir/logs/kube-proxy.log" kube_proxy_ready
  # Pods need their namespace's "default" ServiceAccount, which the controller-manager makes.
  wait_for "ServiceAccount default/default" 60 "$KCM_PID" "$dir/logs/kube-controller-manager.log" \
    kubectl_admin -n default get serviceaccount default
  if [[ -n "${CLUSTER_OWNER_PID:-}" ]]; then
    # A test that dies (a ctest timeout kills it) must not leave the cluster running:
    # this watchdog runs down.sh once the owner is gone. down.sh stops it first otherwise.
    # shellcheck disable=SC2016
    setsid bash -c 'while kill -0 "$1" 2>/dev/null && [ -f "$3/cluster.env" ]; do sleep 1; done
      [ -f "$3/cluster.env" ] && exec bash "$2" "$3" >>"$3/logs/watchdog.log" 2>&1' \
      ddp3d-cluster-watchdog "$CLUSTER_OWNER_PID" "$here/down.sh" "$dir" </dev/null >/dev/null 2>&1 &
    WATCHDOG_PID=$!
    write_cluster_env
  fi
  trap - EXIT INT TERM
  log "cluster up in $((SECONDS - t0))s: $NODE_COUNT node(s) Ready ($(node_names | paste -sd' ' -)), DNS $GATEWAY (cluster.local)"
  echo "$dir/kubeconfig"
}

main
