#!/usr/bin/env bash
# Kueue on the one-machine test cluster: installs Kueue's CRDs, RBAC and webhooks into the
# cluster that up.sh DIR started and runs Kueue's controller manager as a host process
# beside the other components (down.sh DIR stops it with the rest).
#
#   kueue.sh DIR [--wait-for-pods-ready TIMEOUT]   install and start; wait until ready
#   kueue.sh DIR --stop                            stop it and remove its webhook configurations
#
# Env: KUEUE_WAIT_FOR_PODS_READY (a duration such as 5m turns Kueue's waitForPodsReady on
# with that timeout; empty or "off", the default, leaves it off), KUEUE_READY_TIMEOUT (s,
# default 180), KUEUE_FEATURE_GATES (extra Kueue gates, A=true,B=false).
#
# What it does (README.md, "Kueue"):
# - CRDs of the same module version as the binary (build.sh copies them from the module
#   source), applied server-side, with upstream's conversion webhooks (v1beta1 <-> v1beta2)
#   pointed at the process;
# - a client certificate CN=system:kueue-controller-manager from the cluster's CA, bound to
#   Kueue's own roles (upstream's manager-role as kueue-manager-role, manager-secrets-role
#   in kueue-system, metrics-auth-role), not cluster-admin;
# - webhooks served over TLS by the kueue process on 127.0.0.1 with a serving certificate
#   from the cluster's CA (internalCertManagement off), and upstream's
#   Validating/MutatingWebhookConfigurations rewritten to clientConfig.url + caBundle, kept
#   to Kueue's own kinds and the enabled framework (batch/job), so kube-apiserver calls
#   the real webhooks;
# - Configuration: integrations.frameworks [batch/job] (Kueue's default; an empty list
#   means it), externalFrameworks [TrainingJob.v1alpha1.ddp3d.io] (Kind.version.group),
#   manageJobsWithoutQueueName false, waitForPodsReady as asked, leader election off.
# Idempotent: a second run with the same configuration finds Kueue ready, re-applies the
# same objects (no change) and keeps the process; a changed configuration restarts it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

usage="usage: $0 DIR [--wait-for-pods-ready TIMEOUT] | $0 DIR --stop"
dir="" stop=0 pods_ready="${KUEUE_WAIT_FOR_PODS_READY:-}"
while (($#)); do
  case "$1" in
  --stop) stop=1; shift ;;
  --wait-for-pods-ready)
    [[ $# -ge 2 ]] || die "--wait-for-pods-ready takes a duration (e.g. 5m) or off"
    pods_ready="$2"; shift 2 ;;
  -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  -*) die "unknown option $1; $usage" ;;
  *) [[ -z "$dir" ]] || die "one DIR only; $usage"; dir="$1"; shift ;;
  esac
done
[[ -n "$dir" ]] || die "$usage"
[[ "$pods_ready" == off ]] && pods_ready=""
[[ -z "$pods_ready" || "$pods_ready" =~ ^[0-9]+(ms|s|m|h)$ ]] ||
  die "waitForPodsReady timeout $pods_ready: want a duration such as 300s or 5m, or off"
if [[ -n "${KUEUE_FEATURE_GATES:-}" ]]; then
  [[ "$KUEUE_FEATURE_GATES" =~ ^[A-Za-z0-9]+=(true|false)(,[A-Za-z0-9]+=(true|false))*$ ]] ||
    die "KUEUE_FEATURE_GATES=$KUEUE_FEATURE_GATES: want Name=true|false[,Name=true|false...]"
fi
attach_cluster "$dir"

klog() { echo "kueue: $*" >&2; }
kdir="$dir/kueue"
# The names of what this installs in the cluster.
USER_NAME=system:kueue-controller-manager
NAMESPACE=kueue-system
MWC=kueue-mutating-webhook-configuration
VWC=kueue-validating-webhook-configuration

# shellcheck source=../lib/process.sh
source "$here/../lib/process.sh"

kueue_running() { [[ -n "${KUEUE_PID:-}" ]] && owns "$KUEUE_PID" "$dir"; }

stop_kueue() {
  # Without the process the webhooks would fail every request for Kueue's kinds and
  # batch Jobs (failurePolicy Fail): they go first.
  kubectl_admin delete mutatingwebhookconfiguration "$MWC" --ignore-not-found >/dev/null
  kubectl_admin delete validatingwebhookconfiguration "$VWC" --ignore-not-found >/dev/null
  if kueue_running; then
    stop_owned "$KUEUE_PID" "$dir" kueue || die "kueue (pid $KUEUE_PID) did not stop"
    klog "stopped kueue (pid $KUEUE_PID)"
  else
    klog "kueue was not running"
  fi
  KUEUE_PID=""
  write_cluster_env
  remove_kueue_metrics_certs "$dir"
}

if ((stop)); then
  stop_kueue
  exit 0
fi

bin="$CACHE/kueue/kueue-$KUEUE_VERSION"
manifests="$CACHE/kueue/manifests-$KUEUE_VERSION"
if [[ ! -x "$bin" || ! -d "$manifests" ]]; then
  klog "building kueue $KUEUE_VERSION (cached in $CACHE/kueue)"
  bash "$here/build.sh" kueue >/dev/null
fi

# --- certificates: a client identity for the API server, a serving certificate for the
# webhooks (the API server dials https://127.0.0.1:PORT and checks it against the CA).
certs() {
  issue_cert kueue "/CN=$USER_NAME" "$client_ext"
  issue_cert kueue-serving "/CN=kueue-webhook" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost"
  write_kubeconfig "$dir/kueue.kubeconfig" kueue
  mkdir -p "$kdir/webhook-certs"
  install -m 0644 "$dir/pki/kueue-serving.crt" "$kdir/webhook-certs/tls.crt"
  install -m 0600 "$dir/pki/kueue-serving.key" "$kdir/webhook-certs/tls.key"
  # With internalCertManagement off, Kueue's metrics server reads its certificate from
  # the fixed path /etc/kueue/metrics/certs (cmd/kueue/main.go; a Secret volume in its
  # Deployment): written there, and down.sh removes it.
  mkdir -p "$KUEUE_METRICS_CERT_DIR"
  install -m 0644 "$dir/pki/kueue-serving.crt" "$KUEUE_METRICS_CERT_DIR/tls.crt"
  install -m 0600 "$dir/pki/kueue-serving.key" "$KUEUE_METRICS_CERT_DIR/tls.key"
  echo "$dir" >"$KUEUE_METRICS_CERT_DIR/ddp3d-cluster.dir"
}

# --- Kueue's Configuration (config.kueue.x-k8s.io/v1beta2).
write_config() {
  mkdir -p "$kdir"
  {
    cat <<EOF
# Kueue of the ddp3d test cluster (written by tests/cluster/kueue.sh).
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: $NAMESPACE
health:
  healthProbeBindAddress: 127.0.0.1:$KUEUE_HEALTH_PORT
metrics:
  bindAddress: 127.0.0.1:$KUEUE_METRICS_PORT
webhook:
  host: 127.0.0.1
  port: $KUEUE_WEBHOOK_PORT
  certDir: $kdir/webhook-certs
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
# Only workloads whose job names a queue (label kueue.x-k8s.io/queue-name) are Kueue's.
manageJobsWithoutQueueName: false
integrations:
  # Kueue's default (an empty list means it); no other built-in integration is enabled.
  frameworks: ["batch/job"]
  # Kind.version.group: the ddp3d operator creates the Workloads of its TrainingJobs.
  externalFrameworks: ["TrainingJob.v1alpha1.ddp3d.io"]
EOF
    if [[ -n "$pods_ready" ]]; then
      cat <<EOF
waitForPodsReady:
  timeout: $pods_ready
EOF
    fi
  } >"$kdir/config.yaml.tmp"
  mv -f "$kdir/config.yaml.tmp" "$kdir/config.yaml"
}

# --- cluster objects: namespace, CRDs (with conversion webhooks), RBAC.
apply_ssa() { kubectl_admin apply --server-side --force-conflicts --field-manager ddp3d-kueue-sh -f - >/dev/null; }

# Upstream's CRDs, with the conversion webhook patch of config/components/crd/kustomization.yaml
# (the CRDs whose webhook_in_<plural>.yaml it lists) pointed at this process.
crds_json() {
  python3 - "$manifests" "https://127.0.0.1:$KUEUE_WEBHOOK_PORT/convert" "$dir/pki/ca.crt" <<'EOF'
import base64, glob, json, os, re, sys, yaml
src, url, ca = sys.argv[1:]
caBundle = base64.b64encode(open(ca, "rb").read()).decode()
with open(os.path.join(src, "crd-kustomization.yaml")) as f:
    converted = set(re.findall(r"^- path: patches/webhook_in_([a-z]+)\.yaml", f.read(), re.M))
items = []
for path in sorted(glob.glob(os.path.join(src, "crd", "*.yaml"))):
    with open(path) as f:
        crd = yaml.safe_load(f)
    if crd["spec"]["names"]["plural"] in converted:
        crd["spec"]["conversion"] = {"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": url, "caBundle": caBundle},
            "conversionReviewVersions": ["v1"]}}
    items.append(crd)
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout)
EOF
}

install_api() {
  kubectl_admin create namespace "$NAMESPACE" --dry-run=client -o yaml | apply_ssa
  crds_json | apply_ssa
  # Upstream's roles for the manager (config/components/rbac), named as its kustomization
  # names them (kueue- prefix, namespace kueue-system), bound to the user of Kueue's client
  # certificate: manager-role (everything Kueue reconciles), manager-secrets-role (Secrets
  # in its namespace: MultiKueue kubeconfigs), metrics-auth-role (token and access reviews
  # for its metrics endpoint).
  python3 - "$manifests" "$NAMESPACE" "$USER_NAME" <<'EOF' | apply_ssa
import json, os, sys, yaml
src, ns, user = sys.argv[1:]
items = []
for f in ("role.yaml", "manager_secrets_role.yaml", "metrics_auth_role.yaml"):
    role = yaml.safe_load(open(os.path.join(src, f)))
    name = "kueue-" + role["metadata"]["name"]
    role["metadata"] = {"name": name}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "metadata": {"name": name},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role["kind"], "name": name},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}
    if role["kind"] == "Role":
        role["metadata"]["namespace"] = binding["metadata"]["namespace"] = ns
        binding["kind"] = "RoleBinding"
    else:
        assert role["kind"] == "ClusterRole", role["kind"]
        binding["kind"] = "ClusterRoleBinding"
    items += [role, binding]
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout)
EOF
  local crds
  mapfile -t crds < <(python3 -c 'import glob,os,sys,yaml
for p in sorted(glob.glob(os.path.join(sys.argv[1], "crd", "*.yaml"))):
    print("crd/" + yaml.safe_load(open(p))["metadata"]["name"])' "$manifests")
  # `wait` fails at once ("accessor error") on a CRD read before its first condition is
  # written: try again a few times before the last, reported, attempt.
  local _
  for _ in 1 2 3 4 5; do
    kubectl_admin wait --for condition=Established --timeout=60s "${crds[@]}" >/dev/null 2>&1 && return
    sleep 1
  done
  kubectl_admin wait --for condition=Established --timeout=60s "${crds[@]}" >/dev/null
}

# Upstream's webhook configurations (config/components/webhook/manifests.yaml), kept to
# the webhooks of Kueue's own API group and of the enabled framework batch/job, renamed as
# upstream's kustomization does (kueue- prefix) and pointed at https://127.0.0.1:PORT.
# The disabled integrations' webhooks (pods, deployments, ...) are left out: Kueue answers
# them with a no-op, but while it is stopped they would fail every pod create.
webhooks_json() {
  python3 - "$manifests/webhooks.yaml" "https://127.0.0.1:$KUEUE_WEBHOOK_PORT" "$dir/pki/ca.crt" <<'EOF'
import base64, json, sys, yaml
src, base, ca = sys.argv[1:]
caBundle = base64.b64encode(open(ca, "rb").read()).decode()
keep_groups = {"kueue.x-k8s.io"}
keep_resources = {("batch", "jobs")}
items = []
for doc in yaml.safe_load_all(open(src)):
    if not doc:
        continue
    kept = []
    for wh in doc["webhooks"]:
        rules = wh.get("rules", [])
        if not any(g in keep_groups or any((g, r) in keep_resources for r in rule["resources"])
                   for rule in rules for g in rule["apiGroups"]):
            continue
        path = wh["clientConfig"]["service"]["path"]
        wh["clientConfig"] = {"url": base + path, "caBundle": caBundle}
        kept.append(wh)
    doc["metadata"] = {"name": "kueue-" + doc["metadata"]["name"]}
    doc["webhooks"] = kept
    items.append(doc)
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout)
EOF
}

healthy() { curl -fsS --max-time 2 "http://127.0.0.1:$KUEUE_HEALTH_PORT/$1" >/dev/null; }

# The API server reaches the webhook: a ClusterQueue that passes the CRD's schema but
# not Kueue's own validation (a negative nominalQuota) is refused by the webhook
# vclusterqueue.kb.io, with Kueue's message.
webhook_answers() {
  local out
  out="$(kubectl_admin create --dry-run=server -f - 2>&1 <<'EOF' || true
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: ddp3d-kueue-sh-webhook-probe}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: probe
      resources:
      - {name: cpu, nominalQuota: "-1"}
EOF
)"
  [[ "$out" == *'admission webhook "vclusterqueue.kb.io" denied the request'*'must be greater than or equal to 0'* ]] ||
    { echo "$out"; return 1; }
}

config_stamp() { cat "$kdir/config.yaml" "$bin.stamp" "$manifests.stamp" 2>/dev/null | sha256sum | cut -d' ' -f1; }

main() {
  local t0=$SECONDS keep=0
  if kueue_running && [[ -f "$kdir/config.yaml" ]] && healthy readyz; then
    local old
    old="$(config_stamp)"
    write_config
    if [[ "$old" == "$(config_stamp)" ]]; then
      keep=1
    else
      klog "configuration changed: restarting kueue (pid $KUEUE_PID)"
      stop_kueue
    fi
  elif kueue_running; then
    klog "kueue (pid $KUEUE_PID) runs but is not ready: restarting it"
    stop_kueue
  fi
  if ((!keep)); then
    KUEUE_HEALTH_PORT=$(free_port) KUEUE_METRICS_PORT=$(free_port) KUEUE_WEBHOOK_PORT=$(free_port)
    write_config
  fi
  certs
  # Server-side apply: a second run re-applies the same objects and changes nothing.
  install_api
  klog "applied CRDs ($(find "$manifests/crd" -name '*.yaml' | wc -l)), namespace $NAMESPACE, roles kueue-manager-role, kueue-manager-secrets-role ($NAMESPACE), kueue-metrics-auth-role bound to user $USER_NAME"
  if ((keep)); then
    webhooks_json | apply_ssa
    wait_for "kueue webhook answering kube-apiserver" 60 "$KUEUE_PID" "$dir/logs/kueue.log" webhook_answers
    klog "kueue $KUEUE_VERSION already running (pid $KUEUE_PID), ready, same configuration: kept it ($((SECONDS - t0))s)"
    echo "$kdir/config.yaml"
    return 0
  fi
  local gates=VisibilityOnDemand=false
  # The visibility API server (on by default) would bind a fixed port and need an
  # APIService; nothing here uses it.
  [[ -n "${KUEUE_FEATURE_GATES:-}" ]] && gates="$gates,$KUEUE_FEATURE_GATES"
  start_bg KUEUE_PID kueue "$bin" --config "$kdir/config.yaml" --kubeconfig "$dir/kueue.kubeconfig" \
    --feature-gates "$gates" --zap-log-level=2
  wait_for "kueue healthz/readyz" "${KUEUE_READY_TIMEOUT:-180}" "$KUEUE_PID" "$dir/logs/kueue.log" \
    bash -c "curl -fsS --max-time 2 http://127.0.0.1:$KUEUE_HEALTH_PORT/healthz && curl -fsS --max-time 2 http://127.0.0.1:$KUEUE_HEALTH_PORT/readyz"
  # The webhook configurations once the process serves them: until then every request
  # for Kueue's kinds would fail.
  webhooks_json | apply_ssa
  wait_for "kueue webhook answering kube-apiserver" 60 "$KUEUE_PID" "$dir/logs/kueue.log" webhook_answers
  klog "kueue $KUEUE_VERSION ready in $((SECONDS - t0))s: pid $KUEUE_PID, webhooks https://127.0.0.1:$KUEUE_WEBHOOK_PORT ($MWC, $VWC), healthz http://127.0.0.1:$KUEUE_HEALTH_PORT, metrics https://127.0.0.1:$KUEUE_METRICS_PORT, waitForPodsReady ${pods_ready:-off}, frameworks batch/job, externalFrameworks TrainingJob.v1alpha1.ddp3d.io (log: $dir/logs/kueue.log)"
  echo "$kdir/config.yaml"
}
main
