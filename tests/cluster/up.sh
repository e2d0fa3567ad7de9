#!/usr/bin/env bash
# A real one-machine Kubernetes cluster for tests:
#
#   up.sh DIR     build what is missing (cached, see build.sh), start the cluster, wait
#                 until its node is Ready and CoreDNS answers, print DIR/kubeconfig
#
# If CLUSTER_OWNER_PID is set, a watchdog runs down.sh DIR when that process exits.
#
# Runs etcd + kube-apiserver (../testbin/control-plane.sh), kube-controller-manager,
# kube-scheduler, containerd 2 with runc, a kubelet, kube-proxy (iptables), CNI bridge networking (bridge
# "ddp3d0", pods in 10.88.0.0/24, one IP each, host-local IPAM) and CoreDNS for
# cluster.local on the bridge's gateway address, which is the kubelet's clusterDNS.
# CoreDNS runs as a host process beside the kubelet (see README.md for why). Images
# come from local OCI archives imported into containerd; nothing is pulled.
#
# One cluster per machine (the bridge and its subnet are fixed). Needs root, runc and
# busybox-static (tools/setup.sh installs them). Logs: DIR/logs/*.log. State: DIR/cluster.env.
# down.sh DIR stops it and leaves no process, mount, netns or interface behind.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

dir="${1:-}"
[[ -n "$dir" && $# -eq 1 ]] || die "usage: $0 DIR"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
cluster_paths "$dir"

preflight() {
  [[ $EUID -eq 0 ]] || die "must run as root (containerd, runc, network namespaces, mounts)"
  command -v runc >/dev/null || die "runc not found: apt-get install runc"
  command -v "$KUBECTL" >/dev/null || die "kubectl not found"
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
    die "the kernel has no overlay filesystem (containerd's snapshotter needs it)"
  [[ -z "$(owned_pids "$dir")" ]] ||
    die "processes of a cluster in $dir still run (down.sh it first): $(owned_pids "$dir" | tr '\n' ' ')"
  [[ -z "$(owned_mounts "$dir")" ]] ||
    die "mounts of an earlier cluster remain under $dir or $RUN: run down.sh $dir"
  # The runtime state of an earlier cluster in DIR (containers, pods, addresses) would be
  # recovered as stale pods; only the certificates are kept (images are imported anew).
  rm -rf "$dir/containerd" "$dir/kubelet" "$dir/cni" "$dir/coredns" "$dir/logs" "$RUN"
  if ip link show "$BRIDGE" >/dev/null 2>&1; then
    die "bridge $BRIDGE exists: another cluster is up on this machine ($(cat "$MACHINE_OWNER" 2>/dev/null || echo 'unknown DIR')); run down.sh on it"
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Client and serving certificates from the control plane's CA (ECDSA, as testbin's).
issue_cert() { # name subject extensions
  local pki="$dir/pki" ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1)
  [[ -f "$pki/$1.crt" ]] && return 0
  openssl req "${ec[@]}" -nodes -keyout "$pki/$1.key" -out "$pki/$1.csr" -subj "$2" 2>/dev/null
  printf '%s\n' "$3" >"$pki/$1.ext"
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -out "$pki/$1.crt" -days 30 -extfile "$pki/$1.ext" 2>/dev/null
  rm -f "$pki/$1.csr" "$pki/$1.ext"
  chmod 600 "$pki/$1.key"
}
client_ext="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"

write_kubeconfig() { # out cert-name
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: ddp3d-test
  cluster:
    server: $APISERVER_URL
    certificate-authority: $dir/pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $dir/pki/$2.crt
    client-key: $dir/pki/$2.key
contexts:
- name: ddp3d-test
  context:
    cluster: ddp3d-test
    user: $2
current-context: ddp3d-test
EOF
  chmod 600 "$1"
}

start_bg() { # var name command... — setsid'd, logging to DIR/logs/NAME.log
  local var="$1" name="$2"; shift 2
  setsid "$@" </dev/null >>"$dir/logs/$name.log" 2>&1 &
  printf -v "$var" '%s' "$!"
  write_cluster_env
}

wait_for() { # what timeout-s pid log command... — poll COMMAND until it succeeds
  local what="$1" timeout="$2" pid="$3" logf="$4"; shift 4
  local deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$logf" >&2
      die "$what: process $pid exited (log: $logf)"
    fi
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  tail -n 30 "$logf" >&2
  die "$what not reached after ${timeout}s (log: $logf)"
}

# The bridge exists before anything else starts: kube-apiserver binds to its gateway
# address (pods reach it there, through the `kubernetes` Service), the kubelet's node IP
# is that address (a node IP may not be loopback) and CoreDNS binds to it.
create_bridge() {
  ip link add "$BRIDGE" type bridge
  echo "$dir" >"$MACHINE_OWNER"
  ip addr add "$GATEWAY/${POD_SUBNET#*/}" dev "$BRIDGE"
  ip link set "$BRIDGE" up
}

start_containerd() {
  mkdir -p "$dir/containerd" "$RUN" "$dir/cni/net.d" "$dir/cni/ipam"
  cat >"$dir/containerd/config.toml" <<EOF
# containerd for the ddp3d test cluster (written by tests/cluster/up.sh).
version = 3
root = "$dir/containerd/root"
state = "$RUN/state"
[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$RUN/containerd.sock.ttrpc"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = "$PAUSE_IMAGE"
[plugins.'io.containerd.cri.v1.runtime']
  # Pod network namespaces live under the state dir, not /var/run/netns, so that
  # down.sh knows which are this cluster's.
  netns_mounts_under_state_dir = true
  # This machine withholds CAP_SYS_RESOURCE even from root, so runc cannot lower a
  # process's oom_score_adj below containerd's (the kubelet asks -998 for sandboxes).
  restrict_oom_score_adj = true
[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dirs = ["$CACHE/cni"]
  conf_dir = "$dir/cni/net.d"
  max_conf_num = 1
[plugins.'io.containerd.cri.v1.runtime'.containerd]
  default_runtime_name = "runc"
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
  BinaryName = "$(command -v runc)"
  # cgroupfs: there is no systemd here to delegate cgroups to; the kubelet asks
  # containerd for this driver over CRI.
  SystemdCgroup = false
EOF
  # The CNI network: one bridge, one address per pod from host-local, loopback in each pod.
  cat >"$dir/cni/net.d/10-ddp3d.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "ddp3d",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$dir/cni/ipam",
        "ranges": [[{"subnet": "$POD_SUBNET", "gateway": "$GATEWAY"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
EOF
  # containerd-shim-runc-v2 and runc are found on PATH.
  start_bg CONTAINERD_PID containerd env PATH="$CACHE/bin:$PATH" \
    "$CACHE/bin/containerd" --config "$dir/containerd/config.toml"
  wait_for "containerd socket" 60 "$CONTAINERD_PID" "$dir/logs/containerd.log" \
    ctr_ version
  local img
  for img in pause busybox; do
    ctr_ images import --local "$CACHE/images/$img.tar" >>"$dir/logs/images.log" 2>&1 ||
      die "ctr images import $CACHE/images/$img.tar failed (log: $dir/logs/images.log)"
  done
}

start_controllers() {
  issue_cert kube-controller-manager "/CN=system:kube-controller-manager" "$client_ext"
  issue_cert kube-scheduler "/CN=system:kube-scheduler" "$client_ext"
  write_kubeconfig "$dir/kube-controller-manager.kubeconfig" kube-controller-manager
  write_kubeconfig "$dir/kube-scheduler.kubeconfig" kube-scheduler
  KCM_PORT=$(free_port) SCHEDULER_PORT=$(free_port)
  start_bg KCM_PID kube-controller-manager "$CACHE/bin/kube-controller-manager" \
    --kubeconfig "$dir/kube-controller-manager.kubeconfig" \
    --authentication-kubeconfig "$dir/kube-controller-manager.kubeconfig" \
    --authorization-kubeconfig "$dir/kube-controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$KCM_PORT" \
    --cert-dir "$dir/pki/kube-controller-manager" \
    --service-account-private-key-file "$dir/pki/sa.key" --root-ca-file "$dir/pki/ca.crt" \
    --use-service-account-credentials \
    --cluster-signing-cert-file "$dir/pki/ca.crt" --cluster-signing-key-file "$dir/pki/ca.key" \
    --leader-elect=false --profiling=false
  start_bg SCHEDULER_PID kube-scheduler "$CACHE/bin/kube-scheduler" \
    --kubeconfig "$dir/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig "$dir/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig "$dir/kube-scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" \
    --leader-elect=false --profiling=false
}

start_kubelet() {
  issue_cert kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" "$client_ext"
  issue_cert kubelet-serving "/CN=system:node:$NODE_NAME" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:$GATEWAY,IP:127.0.0.1,DNS:$NODE_NAME"
  write_kubeconfig "$dir/kubelet.kubeconfig" kubelet
  KUBELET_PORT=$(free_port) KUBELET_HEALTHZ_PORT=$(free_port)
  mkdir -p "$dir/kubelet"
  cat >"$dir/kubelet/config.yaml" <<EOF
# kubelet for the ddp3d test cluster (written by tests/cluster/up.sh).
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine has cgroups v1, which kubelet 1.35+ refuses unless told otherwise.
failCgroupV1: false
failSwapOn: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
address: $GATEWAY
port: $KUBELET_PORT
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
readOnlyPort: 0
tlsCertFile: $dir/pki/kubelet-serving.crt
tlsPrivateKeyFile: $dir/pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $dir/pki/ca.crt}
authorization:
  mode: Webhook
clusterDomain: cluster.local
clusterDNS: [$GATEWAY]
resolvConf: $dir/kubelet/resolv.conf
# A shared build machine: evict only when the disk is nearly full.
evictionHard: {memory.available: "100Mi", nodefs.available: "2%", imagefs.available: "2%", nodefs.inodesFree: "2%"}
imageGCHighThresholdPercent: 100
serializeImagePulls: false
volumePluginDir: $dir/kubelet/volume-plugins
podLogsDir: $dir/kubelet/pod-logs
EOF
  if [[ ! -f "$dir/sysctl.saved" ]]; then
    local k
    for k in "${KUBELET_SYSCTLS[@]}"; do
      [[ -f "/proc/sys/$k" ]] && echo "$k=$(cat "/proc/sys/$k")"
    done >"$dir/sysctl.saved.tmp"
    mv -f "$dir/sysctl.saved.tmp" "$dir/sysctl.saved"
  fi
  # Upstream resolvers for dnsPolicy: Default pods: none is reachable from pods here.
  : >"$dir/kubelet/resolv.conf"
  start_bg KUBELET_PID kubelet "$CACHE/bin/kubelet" \
    --config "$dir/kubelet/config.yaml" --kubeconfig "$dir/kubelet.kubeconfig" \
    --root-dir "$dir/kubelet" --hostname-override "$NODE_NAME" --node-ip "$GATEWAY" -v 1
}

# kube-proxy in iptables mode: ClusterIP Services route (the `kubernetes` Service to
# kube-apiserver on the gateway address, which pods in a Deployment such as the
# operator's use). It leaves this machine's conntrack settings alone; down.sh removes
# its rules with kube-proxy --cleanup.
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
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: $POD_SUBNET
healthzBindAddress: 127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$KUBE_PROXY_METRICS_PORT
# 0: keep the machine's conntrack table size and timeouts.
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
# NodePorts on 127.0.0.1 would need route_localnet on every interface.
iptables: {localhostNodePorts: false}
EOF
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

node_ready() {
  [[ "$(kubectl_admin get node "$NODE_NAME" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}
coredns_ready() { curl -fsS --max-time 2 "http://127.0.0.1:$COREDNS_READY_PORT/ready"; }

abort_up() {
  log "start failed; stopping what was started (logs in $dir/logs)"
  bash "$here/down.sh" "$dir" >&2 || true
}

main() {
  preflight
  local t0=$SECONDS
  CACHE="$(bash "$here/build.sh")"
  mkdir -p "$dir/logs"
  log "binaries ready in $((SECONDS - t0))s ($CACHE)"
  trap abort_up EXIT
  trap 'exit 130' INT TERM
  CONTAINERD_PID="" KCM_PID="" SCHEDULER_PID="" KUBELET_PID="" COREDNS_PID="" KUBE_PROXY_PID=""
  write_cluster_env
  create_bridge
  # etcd + kube-apiserver: testbin's, with its certificates and admin kubeconfig, on the
  # bridge's gateway address. It took 88 s to get ready here under a load of 12.
  APISERVER_ADDRESS="$GATEWAY" CONTROL_PLANE_READY_TIMEOUT=300 \
    bash "$here/../testbin/control-plane.sh" start "$dir" >/dev/null 2>>"$dir/logs/control-plane.log" ||
    { tail -n 20 "$dir/logs/control-plane.log" >&2; die "control-plane.sh start failed"; }
  ln -sf ../etcd.log ../kube-apiserver.log "$dir/logs/"
  load_control_plane_env
  start_containerd
  start_controllers
  start_kubelet
  start_kube_proxy
  start_coredns
  wait_for "node $NODE_NAME Ready" 180 "$KUBELET_PID" "$dir/logs/kubelet.log" node_ready
  wait_for "CoreDNS ready" 60 "$COREDNS_PID" "$dir/logs/coredns.log" coredns_ready
  wait_for "kube-proxy rules for Service default/kubernetes" 120 "$KUBE_PROXY_PID" \
    "$dir/logs/kube-proxy.log" kube_proxy_ready
  # Pods need their namespace's "default" ServiceAccount, which the controller-manager makes.
  wait_for "ServiceAccount default/default" 60 "$KCM_PID" "$dir/logs/kube-controller-manager.log" \
    kubectl_admin -n default get serviceaccount default
  if [[ -n "${CLUSTER_OWNER_PID:-}" ]]; then
    # A test that dies (a ctest timeout kills it) must not leave the cluster running:
    # this watchdog runs down.sh once the owner is gone. down.sh stops it first otherwise.
    setsid bash -c 'while kill -0 "$1" 2>/dev/null && [ -f "$3/cluster.env" ]; do sleep 1; done
      [ -f "$3/cluster.env" ] && exec bash "$2" "$3" >>"$3/logs/watchdog.log" 2>&1' \
      ddp3d-cluster-watchdog "$CLUSTER_OWNER_PID" "$here/down.sh" "$dir" </dev/null >/dev/null 2>&1 &
    WATCHDOG_PID=$!
    write_cluster_env
  fi
  trap - EXIT INT TERM
  log "cluster up in $((SECONDS - t0))s: node $NODE_NAME Ready, DNS $GATEWAY (cluster.local)"
  echo "$dir/kubeconfig"
}

main
