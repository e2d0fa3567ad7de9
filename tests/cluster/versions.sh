# Pinned versions of the one-machine test cluster. Kubernetes and etcd come from
# ../testbin/versions.sh (kube-apiserver and etcd are testbin's binaries); the go.mod of
# each folder here decides what is built, and build.sh checks it against these pins.
# shellcheck source=../testbin/versions.sh
source "$(dirname "${BASH_SOURCE[0]}")/../testbin/versions.sh"
CONTAINERD_VERSION=v2.2.9
CNI_PLUGINS_VERSION=v1.10.0
COREDNS_VERSION=v1.14.2
# Prometheus v3.x is published as Go module versions v0.3xx.y (v3.16.0 = v0.316.0).
PROMETHEUS_VERSION=v3.16.0
PROMETHEUS_MODULE_VERSION=v0.316.0
# Kueue's controller manager (kueue.sh runs it on the host); kueue/go.mod builds it.
KUEUE_VERSION=v0.17.0
# The Prometheus Operator (prometheus_operator.sh runs it on the host) and its config
# reloader; prometheus-operator/go.mod builds both.
PROMETHEUS_OPERATOR_VERSION=v0.85.0
# Locally built images (build.sh packs them; up.sh imports them into containerd). The
# registry part names no real registry: nothing is ever pulled.
PAUSE_IMAGE=ddp3d.local/pause:1
BUSYBOX_IMAGE=ddp3d.local/busybox:1
# What the Prometheus Operator runs in the Prometheus pods it makes: upstream's server
# (build.sh's prometheus binary) and the operator's config reloader.
PROMETHEUS_IMAGE=ddp3d.local/prometheus:$PROMETHEUS_VERSION
PROMETHEUS_CONFIG_RELOADER_IMAGE=ddp3d.local/prometheus-config-reloader:$PROMETHEUS_OPERATOR_VERSION
# kubectl alone, for the chart's `helm test` pod (tests.image; registry.k8s.io/kubectl elsewhere).
KUBECTL_IMAGE=ddp3d.local/kubectl:$K8S_VERSION
