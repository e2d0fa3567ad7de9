# Pinned versions of the test control plane. Bump K8S_VERSION together with the
# staging-module replaces in kube-apiserver/go.mod (all v0.<minor>.<patch>).
K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.16
