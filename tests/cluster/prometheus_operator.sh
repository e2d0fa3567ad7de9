#!/usr/bin/env bash
# The Prometheus Operator on the one-machine test cluster: installs its CRDs and RBAC into
# the cluster that up.sh DIR started and runs the operator as a host process beside the
# other components (down.sh DIR stops it with the rest).
#
#   prometheus_operator.sh DIR          install and start; wait until healthy
#   prometheus_operator.sh DIR --stop   stop it (the CRDs and the objects stay)
#
# Env: PROMETHEUS_OPERATOR_READY_TIMEOUT (s, default 120).
#
# What it does (README.md, "Prometheus Operator"):
# - CRDs of the same module version as the binary (build.sh copies them from the module
#   source, example/prometheus-operator-crd), applied server-side;
# - a client certificate CN=system:prometheus-operator from the cluster's CA, bound to
#   upstream's ClusterRole prometheus-operator (example/rbac/prometheus-operator), not
#   cluster-admin; upstream's ClusterRole prometheus (example/rbac/prometheus), for the
#   ServiceAccount of a Prometheus the operator runs, is installed unbound;
# - the operator with --prometheus-config-reloader=PROMETHEUS_CONFIG_RELOADER_IMAGE (the
#   image build.sh packs and up.sh imports), no kubelet Service (--kubelet-service unset),
#   no admission webhook, its web server (/healthz, /metrics) on 127.0.0.1.
# A Prometheus CR names its image itself: spec.image PROMETHEUS_IMAGE (versions.sh).
# Idempotent: a second run finds the operator healthy and keeps it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

usage="usage: $0 DIR | $0 DIR --stop"
dir="" stop=0
while (($#)); do
  case "$1" in
  --stop) stop=1; shift ;;
  -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  -*) die "unknown option $1; $usage" ;;
  *) [[ -z "$dir" ]] || die "one DIR only; $usage"; dir="$1"; shift ;;
  esac
done
[[ -n "$dir" ]] || die "$usage"
attach_cluster "$dir"

plog() { echo "prometheus-operator: $*" >&2; }
USER_NAME=system:prometheus-operator
V="$PROMETHEUS_OPERATOR_VERSION"

# shellcheck source=../lib/process.sh
source "$here/../lib/process.sh"

running_op() { [[ -n "${PROMETHEUS_OPERATOR_PID:-}" ]] && owns "$PROMETHEUS_OPERATOR_PID" "$dir"; }
healthy() { [[ -n "${PROMETHEUS_OPERATOR_PORT:-}" ]] && curl -fsS --max-time 2 "http://127.0.0.1:$PROMETHEUS_OPERATOR_PORT/healthz" >/dev/null; }

stop_op() {
  if running_op; then
    stop_owned "$PROMETHEUS_OPERATOR_PID" "$dir" prometheus-operator ||
      die "prometheus-operator (pid $PROMETHEUS_OPERATOR_PID) did not stop"
    plog "stopped prometheus-operator (pid $PROMETHEUS_OPERATOR_PID)"
  else
    plog "prometheus-operator was not running"
  fi
  PROMETHEUS_OPERATOR_PID="" PROMETHEUS_OPERATOR_PORT=""
  write_cluster_env
}

if ((stop)); then
  stop_op
  exit 0
fi

d="$CACHE/prometheus-operator"
bin="$d/operator-$V"
manifests="$d/manifests-$V"
if [[ ! -x "$bin" || ! -d "$manifests" ]]; then
  plog "building the prometheus operator $V (cached in $d)"
  bash "$here/build.sh" prometheus-operator >/dev/null
fi

apply_ssa() { kubectl_admin apply --server-side --force-conflicts --field-manager ddp3d-prometheus-operator-sh -f - >/dev/null; }

install_api() {
  # The CRDs are too big for client-side apply's last-applied annotation. (PyYAML cannot
  # read them: they hold the YAML 1.1 value key `=`.)
  local crds
  mapfile -t crds < <(kubectl_admin apply --server-side --force-conflicts \
    --field-manager ddp3d-prometheus-operator-sh -f "$manifests/crd" -o name)
  ((${#crds[@]} == $(find "$manifests/crd" -name '*.yaml' | wc -l))) || die "applied ${#crds[@]} CRDs: ${crds[*]}"
  # `wait` fails at once ("accessor error") on a CRD read before its first condition is
  # written (as in kueue.sh): a few tries before the last, reported, one.
  local try
  for try in 1 2 3 4 5; do
    kubectl_admin wait --for condition=Established --timeout=60s "${crds[@]}" >/dev/null 2>&1 && break
    sleep 1
  done
  ((try < 5)) || kubectl_admin wait --for condition=Established --timeout=60s "${crds[@]}" >/dev/null
  # Upstream's ClusterRoles as upstream names them; the operator's bound to its user.
  python3 - "$manifests" "$USER_NAME" <<'EOF' | apply_ssa
import json, os, sys, yaml
src, user = sys.argv[1:]
items = []
for f in ("operator-cluster-role.yaml", "prometheus-cluster-role.yaml"):
    role = yaml.safe_load(open(os.path.join(src, f)))
    assert role["kind"] == "ClusterRole", role["kind"]
    role["metadata"] = {"name": role["metadata"]["name"]}
    items.append(role)
items.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
              "metadata": {"name": "prometheus-operator"},
              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                          "name": "prometheus-operator"},
              "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout)
EOF
}

main() {
  local t0=$SECONDS
  issue_cert prometheus-operator "/CN=$USER_NAME" "$client_ext"
  install_api
  plog "applied CRDs ($(find "$manifests/crd" -name '*.yaml' | wc -l)), ClusterRoles prometheus-operator (bound to user $USER_NAME) and prometheus"
  if running_op && healthy; then
    plog "prometheus-operator $V already running (pid $PROMETHEUS_OPERATOR_PID), healthy: kept it ($((SECONDS - t0))s)"
    return 0
  elif running_op; then
    plog "prometheus-operator (pid $PROMETHEUS_OPERATOR_PID) runs but is not healthy: restarting it"
    stop_op
  fi
  PROMETHEUS_OPERATOR_PORT=$(free_port)
  # --apiserver with the client certificate's files (not a kubeconfig): the paths under
  # DIR on its command line, each an argument of its own (not --flag=PATH), are how
  # down.sh (owns) knows the process is this cluster's.
  start_bg PROMETHEUS_OPERATOR_PID prometheus-operator env -u KUBECONFIG "$bin" \
    --apiserver="$APISERVER_URL" --ca-file "$dir/pki/ca.crt" \
    --cert-file "$dir/pki/prometheus-operator.crt" --key-file "$dir/pki/prometheus-operator.key" \
    --prometheus-config-reloader="$PROMETHEUS_CONFIG_RELOADER_IMAGE" \
    --web.listen-address="127.0.0.1:$PROMETHEUS_OPERATOR_PORT" --log-level=info
  wait_for "prometheus-operator healthz" "${PROMETHEUS_OPERATOR_READY_TIMEOUT:-120}" "$PROMETHEUS_OPERATOR_PID" \
    "$dir/logs/prometheus-operator.log" healthy
  plog "prometheus-operator $V ready in $((SECONDS - t0))s: pid $PROMETHEUS_OPERATOR_PID, http://127.0.0.1:$PROMETHEUS_OPERATOR_PORT (healthz, metrics), reloader $PROMETHEUS_CONFIG_RELOADER_IMAGE (log: $dir/logs/prometheus-operator.log)"
}
main
