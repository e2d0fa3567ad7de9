#!/usr/bin/env bash
# A real Kubernetes control plane (etcd + kube-apiserver, no kubelet, no
# controller-manager) for integration tests, on free loopback ports.
#
#   control-plane.sh start DIR            build if needed, start, print DIR/kubeconfig
#   control-plane.sh stop DIR             stop both, leave no process behind (idempotent)
#   control-plane.sh stop-apiserver DIR   stop only kube-apiserver (etcd keeps the data)
#   control-plane.sh start-apiserver DIR  start it again on the same port with the same certs
#   control-plane.sh sa-kubeconfig DIR NAMESPACE SA OUT
#                                         kubeconfig authenticating as that ServiceAccount
#   control-plane.sh create-namespace DIR NAMESPACE
#                                         namespace plus its "default" ServiceAccount
#
# start writes DIR/kubeconfig (admin, client cert in group system:masters, server
# verified against DIR/pki/ca.crt) and DIR/env: KEY=VALUE lines (KUBECONFIG,
# APISERVER_URL, APISERVER_PID, ETCD_URL, ETCD_PID, ...; `set -a; . DIR/env` exports them).
# If CONTROL_PLANE_OWNER_PID is set at start, a watchdog stops the control plane
# when that process exits, so a crashed test cannot leak servers.
# CONTROL_PLANE_READY_TIMEOUT (seconds, default 90) bounds kube-apiserver's start-up.
# APISERVER_ADDRESS (default 127.0.0.1) is the one address kube-apiserver binds to and
# advertises (the `kubernetes` Service's endpoint); tests/cluster sets its pod bridge's
# gateway so that pods reach it through that Service. Its serving certificate names it.
# DIR/audit.log (JSON lines) records every request made by a ServiceAccount.
# APISERVER_FEATURE_GATES (A=true,B=false) and APISERVER_RUNTIME_CONFIG (e.g.
# scheduling.k8s.io/v1alpha2=true), given at start, become kube-apiserver's
# --feature-gates and --runtime-config, kept in DIR/env for start-apiserver.
#
# Without kube-controller-manager nothing creates "default" ServiceAccounts, runs
# garbage collection (ownerReference cascades) or finalizes deleted namespaces.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KUBECTL="${KUBECTL:-kubectl}"
APISERVER_ADDRESS="${APISERVER_ADDRESS:-127.0.0.1}"
APISERVER_FEATURE_GATES="${APISERVER_FEATURE_GATES:-}"
APISERVER_RUNTIME_CONFIG="${APISERVER_RUNTIME_CONFIG:-}"
kubectl_in() { # dir args... — admin kubectl whose discovery cache stays inside DIR
  local dir="$1"; shift
  KUBECACHEDIR="$dir/kube-cache" "$KUBECTL" --kubeconfig "$dir/kubeconfig" "$@"
}

die() { echo "control-plane: $*" >&2; exit 1; }
log() { echo "control-plane: $*" >&2; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# True when PID is alive and is one of ours (an argument is DIR or lies under it), so
# a recycled PID, or a control plane in DIR2 = DIR + suffix, is never signalled.
owns() { # pid dir
  [[ -n "$1" && -r "/proc/$1/cmdline" ]] || return 1
  local cmd
  cmd=" $(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)"
  [[ "$cmd" == *" $2/"* || "$cmd" == *" $2 "* ]]
}

# shellcheck source=../lib/process.sh
source "$here/../lib/process.sh"
stop_pid() { stop_owned "$1" "$2" "$3" || die "$3 (pid $1) did not exit"; }

# ECDSA P-256 throughout: key generation is instant where RSA costs seconds on a
# loaded machine, and kube-apiserver, kubectl and OpenSSL clients all accept it.
gen_certs() { # pki
  local pki="$1" ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1)
  mkdir -p "$pki"
  (
    cd "$pki"
    openssl req -x509 "${ec[@]}" -nodes -keyout ca.key -out ca.crt -days 30 \
      -subj "/CN=ddp3d-test-ca" \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
    issue() { # name subject extensions
      openssl req "${ec[@]}" -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
      printf '%s\n' "$3" >"$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
        -out "$1.crt" -days 30 -extfile "$1.ext" 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    issue apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:$APISERVER_ADDRESS,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
    issue admin "/O=system:masters/CN=ddp3d-admin" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
    # What kube-apiserver presents to kubelets (logs, exec, port-forward): only
    # tests/cluster runs one, and without this those calls are refused as anonymous.
    issue apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out sa.key 2>/dev/null
    openssl pkey -in sa.key -pubout -out sa.pub 2>/dev/null
    chmod 600 ./*.key
  )
}

b64() { base64 -w0 <"$1"; }

write_env() { # dir (uses globals)
  local dir="$1"
  cat >"$dir/env.tmp" <<EOF
CONTROL_PLANE_DIR=$dir
KUBECONFIG=$dir/kubeconfig
APISERVER_URL=https://$APISERVER_ADDRESS:$APISERVER_PORT
APISERVER_ADDRESS=$APISERVER_ADDRESS
APISERVER_FEATURE_GATES=$APISERVER_FEATURE_GATES
APISERVER_RUNTIME_CONFIG=$APISERVER_RUNTIME_CONFIG
APISERVER_PORT=$APISERVER_PORT
APISERVER_PID=$APISERVER_PID
ETCD_URL=http://127.0.0.1:$ETCD_PORT
ETCD_PORT=$ETCD_PORT
ETCD_PEER_PORT=$ETCD_PEER_PORT
ETCD_PID=$ETCD_PID
WATCHDOG_PID=${WATCHDOG_PID:-}
CA_CERT=$dir/pki/ca.crt
ADMIN_CERT=$dir/pki/admin.crt
ADMIN_KEY=$dir/pki/admin.key
TESTBIN=$TESTBIN
EOF
  mv -f "$dir/env.tmp" "$dir/env"
}

load_env() { # dir
  [[ -f "$1/env" ]] || die "$1/env not found: was the control plane started in $1?"
  # shellcheck disable=SC1091
  source "$1/env"
}

wait_ready() { # dir pid name url-path timeout-s
  local dir="$1" pid="$2" name="$3" url="$4" timeout="$5"
  # A deadline in seconds, not a count of tries: each curl may itself take up to 2 s.
  local deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    # kill -0, not owns: while the child is between fork and exec its /proc cmdline can read
    # empty, and owns would call a starting server dead (then a retry raced the live one).
    kill -0 "$pid" 2>/dev/null || { tail -n 30 "$dir/$name.log" >&2; die "$name exited during start-up (log: $dir/$name.log)"; }
    if curl -fsS --max-time 2 --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" \
      --key "$dir/pki/admin.key" "$url" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.1
  done
  tail -n 30 "$dir/$name.log" >&2
  die "$name not ready after ${timeout}s (log: $dir/$name.log)"
}

launch_etcd() { # dir
  local dir="$1"
  setsid "$TESTBIN/etcd" --name ddp3d --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "ddp3d=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync --log-level warn \
    </dev/null >>"$dir/etcd.log" 2>&1 &
  ETCD_PID=$!
}

# Every request made by a ServiceAccount, at Metadata level (verb, resource, namespace,
# response code): the operator tests read it to prove the chart's role is exactly what
# the operator asks for. Requests by the admin certificate (the tests themselves) are
# left out.
write_audit_policy() { # dir
  cat >"$1/audit-policy.yaml" <<'EOF_POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts"]
- level: None
EOF_POLICY
}

launch_apiserver() { # dir
  local dir="$1" pki="$1/pki" kubelet_client=() extra=()
  write_audit_policy "$dir"
  [[ -n "${APISERVER_FEATURE_GATES:-}" ]] && extra+=(--feature-gates "$APISERVER_FEATURE_GATES")
  [[ -n "${APISERVER_RUNTIME_CONFIG:-}" ]] && extra+=(--runtime-config "$APISERVER_RUNTIME_CONFIG")
  # A DIR whose certificates predate the kubelet client certificate still starts.
  [[ -f "$pki/apiserver-kubelet-client.crt" ]] &&
    kubelet_client=(--kubelet-client-certificate "$pki/apiserver-kubelet-client.crt"
      --kubelet-client-key "$pki/apiserver-kubelet-client.key"
      --kubelet-preferred-address-types InternalIP)  # node names do not resolve here
  setsid "$TESTBIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address "$APISERVER_ADDRESS" --advertise-address "$APISERVER_ADDRESS" --secure-port "$APISERVER_PORT" \
    --cert-dir "$pki" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" \
    --authorization-mode Node,RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" \
    --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range 10.0.0.0/24 \
    --allow-privileged=true \
    --profiling=false \
    --enable-admission-plugins OwnerReferencesPermissionEnforcement \
    --audit-policy-file "$dir/audit-policy.yaml" --audit-log-path "$dir/audit.log" \
    --audit-log-format json --audit-log-maxbackup 1 --audit-log-maxsize 200 \
    "${kubelet_client[@]}" "${extra[@]}" \
    </dev/null >>"$dir/kube-apiserver.log" 2>&1 &
  APISERVER_PID=$!
}

abort_start() {
  stop_pid "$APISERVER_PID" "$START_DIR" kube-apiserver
  stop_pid "$ETCD_PID" "$START_DIR" etcd
  rm -f "$START_DIR/env"
}

# Ports are free when probed but may be taken before the server binds them (other
# tests run concurrently), so a lost race is retried with fresh ports.
cmd_start() {
  local dir="$1"
  [[ -n "$dir" ]] || die "usage: $0 start DIR"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  local address="$APISERVER_ADDRESS" gates="$APISERVER_FEATURE_GATES" runtime_config="$APISERVER_RUNTIME_CONFIG"
  if [[ -f "$dir/env" ]]; then
    load_env "$dir"
    owns "${APISERVER_PID:-}" "$dir" && die "a control plane is already running in $dir (stop it first)"
  fi
  # the caller's, not an earlier start's
  APISERVER_ADDRESS="$address" APISERVER_FEATURE_GATES="$gates" APISERVER_RUNTIME_CONFIG="$runtime_config"
  local t0=$SECONDS
  TESTBIN="$(bash "$here/build.sh")"
  [[ -f "$dir/pki/ca.crt" ]] || gen_certs "$dir/pki"
  openssl x509 -noout -ext subjectAltName -in "$dir/pki/apiserver.crt" 2>/dev/null |
    grep -q "IP Address:$APISERVER_ADDRESS\b" ||
    die "$dir/pki/apiserver.crt does not name $APISERVER_ADDRESS (made for another APISERVER_ADDRESS): remove $dir/pki"

  # An interrupted or failed start must not leave servers behind.
  ETCD_PID="" APISERVER_PID="" START_DIR="$dir"
  trap abort_start EXIT
  trap 'exit 130' INT TERM
  local attempt
  for attempt in 1 2 3; do
    rm -rf "$dir/etcd"
    ETCD_PORT=$(free_port) ETCD_PEER_PORT=$(free_port) APISERVER_PORT=$(free_port)
    WATCHDOG_PID=""
    launch_etcd "$dir"
    if ! (wait_ready "$dir" "$ETCD_PID" etcd "http://127.0.0.1:$ETCD_PORT/health" 30); then
      stop_pid "$ETCD_PID" "$dir" etcd
      # Whatever it is by now, the process we started must be gone before the next attempt
      # reuses the data dir (a live one holds its lock and the next etcd never gets ready).
      kill -KILL "$ETCD_PID" 2>/dev/null || true
      wait "$ETCD_PID" 2>/dev/null || true
      [[ $attempt -lt 3 ]] && { log "etcd failed to start, retrying with new ports"; continue; }
      tail -n 20 "$dir/etcd.log" >&2
      die "etcd did not start (log: $dir/etcd.log)"
    fi
    launch_apiserver "$dir"
    write_env "$dir"
    if (wait_ready "$dir" "$APISERVER_PID" kube-apiserver "https://$APISERVER_ADDRESS:$APISERVER_PORT/readyz" "${CONTROL_PLANE_READY_TIMEOUT:-90}"); then
      break
    fi
    stop_pid "$APISERVER_PID" "$dir" kube-apiserver
    stop_pid "$ETCD_PID" "$dir" etcd
    kill -KILL "$APISERVER_PID" "$ETCD_PID" 2>/dev/null || true
    wait "$APISERVER_PID" "$ETCD_PID" 2>/dev/null || true
    grep -q 'address already in use' "$dir/kube-apiserver.log" && [[ $attempt -lt 3 ]] &&
      { log "port taken, retrying with new ports"; continue; }
    die "kube-apiserver did not start (log: $dir/kube-apiserver.log)"
  done

  cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: ddp3d-test
  cluster:
    server: https://$APISERVER_ADDRESS:$APISERVER_PORT
    certificate-authority-data: $(b64 "$dir/pki/ca.crt")
users:
- name: ddp3d-admin
  user:
    client-certificate-data: $(b64 "$dir/pki/admin.crt")
    client-key-data: $(b64 "$dir/pki/admin.key")
contexts:
- name: ddp3d-test
  context:
    cluster: ddp3d-test
    user: ddp3d-admin
current-context: ddp3d-test
EOF
  chmod 600 "$dir/kubeconfig"

  if [[ -n "${CONTROL_PLANE_OWNER_PID:-}" ]]; then
    local owner="$CONTROL_PLANE_OWNER_PID"
    # The watchdog's command line names DIR so that `owns` recognises it.
    setsid bash -c 'while kill -0 "$1" 2>/dev/null && [ -f "$3/env" ]; do sleep 1; done
      [ -f "$3/env" ] && exec bash "$2" stop "$3" >>"$3/watchdog.log" 2>&1' \
      watchdog "$owner" "$here/control-plane.sh" "$dir" </dev/null >/dev/null 2>&1 &
    WATCHDOG_PID=$!
  fi
  write_env "$dir"
  trap - EXIT INT TERM
  kubectl_in "$dir" -n default create serviceaccount default >/dev/null 2>&1 || true
  log "ready in $((SECONDS - t0))s: https://127.0.0.1:$APISERVER_PORT (etcd pid $ETCD_PID, kube-apiserver pid $APISERVER_PID)"
  echo "$dir/kubeconfig"
}

cmd_stop() {
  local dir="${1:?usage: $0 stop DIR}"
  # Idempotent, so that cleanup handlers may call it unconditionally.
  if [[ ! -f "$dir/env" ]]; then
    log "no control plane running in $dir"
    return 0
  fi
  dir="$(cd "$dir" && pwd)"
  load_env "$dir"
  # The watchdog goes first so it cannot race this stop.
  # (When the watchdog itself runs this stop, it must not signal itself.)
  if [[ -n "${WATCHDOG_PID:-}" && "$WATCHDOG_PID" != "$$" ]] && owns "$WATCHDOG_PID" "$dir"; then
    kill -TERM "$WATCHDOG_PID" 2>/dev/null || true
  fi
  stop_pid "$APISERVER_PID" "$dir" kube-apiserver
  stop_pid "$ETCD_PID" "$dir" etcd
  rm -f "$dir/env"
  log "stopped"
}

cmd_stop_apiserver() {
  local dir="${1:?usage: $0 stop-apiserver DIR}"
  dir="$(cd "$dir" && pwd)"
  load_env "$dir"
  stop_pid "$APISERVER_PID" "$dir" kube-apiserver
  log "kube-apiserver stopped (etcd still running)"
}

cmd_start_apiserver() {
  local dir="${1:?usage: $0 start-apiserver DIR}"
  dir="$(cd "$dir" && pwd)"
  load_env "$dir"
  owns "$APISERVER_PID" "$dir" && die "kube-apiserver already running (pid $APISERVER_PID)"
  owns "$ETCD_PID" "$dir" || die "etcd is not running; use start"
  local t0=$SECONDS
  launch_apiserver "$dir"
  write_env "$dir"
  wait_ready "$dir" "$APISERVER_PID" kube-apiserver "https://$APISERVER_ADDRESS:$APISERVER_PORT/readyz" "${CONTROL_PLANE_READY_TIMEOUT:-90}"
  log "kube-apiserver ready again in $((SECONDS - t0))s on port $APISERVER_PORT (pid $APISERVER_PID)"
}

cmd_sa_kubeconfig() {
  [[ $# -eq 4 ]] || die "usage: $0 sa-kubeconfig DIR NAMESPACE SA OUT"
  local dir ns="$2" sa="$3" out="$4" token
  dir="$(cd "$1" && pwd)"
  load_env "$dir"
  token="$(kubectl_in "$dir" -n "$ns" create token "$sa" --duration=24h)" ||
    die "cannot create a token for ServiceAccount $ns/$sa"
  cat >"$out" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: ddp3d-test
  cluster:
    server: https://$APISERVER_ADDRESS:$APISERVER_PORT
    certificate-authority-data: $(b64 "$dir/pki/ca.crt")
users:
- name: $ns-$sa
  user:
    token: $token
contexts:
- name: ddp3d-test
  context:
    cluster: ddp3d-test
    user: $ns-$sa
    namespace: $ns
current-context: ddp3d-test
EOF
  chmod 600 "$out"
  echo "$out"
}

cmd_create_namespace() {
  [[ $# -eq 2 ]] || die "usage: $0 create-namespace DIR NAMESPACE"
  local dir ns="$2"
  dir="$(cd "$1" && pwd)"
  load_env "$dir"
  kubectl_in "$dir" create namespace "$ns" >/dev/null
  # Pods need their ServiceAccount to exist (ServiceAccount admission), and no
  # controller-manager is here to create "default".
  kubectl_in "$dir" -n "$ns" create serviceaccount default >/dev/null
  echo "$ns"
}

case "${1:-}" in
start) shift; cmd_start "${1:-}" ;;
stop) shift; cmd_stop "$@" ;;
stop-apiserver) shift; cmd_stop_apiserver "$@" ;;
start-apiserver) shift; cmd_start_apiserver "$@" ;;
sa-kubeconfig) shift; cmd_sa_kubeconfig "$@" ;;
create-namespace) shift; cmd_create_namespace "$@" ;;
*) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
