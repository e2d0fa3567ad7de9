{{/* Names and labels shared by every object of the chart. */}}
{{- define "ddp3d.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "ddp3d.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "ddp3d.operatorName" -}}
{{- printf "%s-operator" (include "ddp3d.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "ddp3d.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "ddp3d.operatorName" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "ddp3d.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ddp3d.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "ddp3d.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "ddp3d.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: ddp3d
{{- end -}}

{{/*
"true" when the operator watches Nodes (--watch-nodes): watchNodes when set, else true for
rbac.scope=cluster and false for rbac.scope=namespace, which grants nothing cluster-wide.
*/}}
{{- define "ddp3d.watchNodes" -}}
{{- if kindIs "invalid" .Values.watchNodes -}}
{{- eq (.Values.rbac.scope | default "cluster") "cluster" -}}
{{- else -}}
{{- if .Values.watchNodes }}true{{ else }}false{{ end -}}
{{- end -}}
{{- end -}}

{{/*
"true" when the operator speaks Kueue's protocol for TrainingJobs labelled
kueue.x-k8s.io/queue-name (--kueue): kueue.enabled when set, else true for rbac.scope=cluster
and false for rbac.scope=namespace, which grants nothing cluster-wide.
*/}}
{{- define "ddp3d.kueue" -}}
{{- if kindIs "invalid" .Values.kueue.enabled -}}
{{- eq (.Values.rbac.scope | default "cluster") "cluster" -}}
{{- else -}}
{{- if .Values.kueue.enabled }}true{{ else }}false{{ end -}}
{{- end -}}
{{- end -}}

{{/* Kueue, in the jobs' namespaces: each queued job's Workload. */}}
{{- define "ddp3d.kueueRules" -}}
# kueue.x-k8s.io/queue-name: the job's Workload (informer; created owned by the job; its
# resource-in-use finalizer removed by a merge patch once the job no longer holds the quota).
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [list, watch, create, patch]
# PodsReady (waitForPodsReady), Finished, and the admission released after an eviction.
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads/status]
  verbs: [update]
{{- end -}}

{{/* Kueue, cluster-scoped and read-only. */}}
{{- define "ddp3d.kueueClusterRules" -}}
# The admitted ResourceFlavors' nodeLabels and tolerations go onto the pods (informer).
- apiGroups: [kueue.x-k8s.io]
  resources: [resourceflavors]
  verbs: [list, watch]
# The value of the pod template's priorityClassName, which the Workload carries.
- apiGroups: [scheduling.k8s.io]
  resources: [priorityclasses]
  verbs: [get]
{{- end -}}

{{/* Lost nodes (runPolicy.nodeLossTimeoutSeconds): the Node informer, read-only. */}}
{{- define "ddp3d.nodeRules" -}}
- apiGroups: [""]
  resources: [nodes]
  verbs: [list, watch]
{{- end -}}

{{/*
The operator's rules: exactly the requests it makes, as the API server's audit log records
them in tests/integration/operator/least_privilege_test.py (docs/operator.md, "RBAC").
*/}}
{{- define "ddp3d.operatorRules" -}}
# TrainingJobs: the informer; delete for ttlSecondsAfterFinished.
- apiGroups: [ddp3d.io]
  resources: [trainingjobs]
  verbs: [list, watch, delete]
# The status subresource, written whole (PUT).
- apiGroups: [ddp3d.io]
  resources: [trainingjobs/status]
  verbs: [update]
# Not a request: setting blockOwnerDeletion on the pods' and Service's ownerReferences is
# allowed only with this, where OwnerReferencesPermissionEnforcement is on (OpenShift; the
# test API server too).
- apiGroups: [ddp3d.io]
  resources: [trainingjobs/finalizers]
  verbs: [update]
# The gang: one pod per node, deleted for a gang restart; the headless Service that names
# them (garbage collection deletes it with the job).
- apiGroups: [""]
  resources: [pods]
  verbs: [list, watch, create, delete]
- apiGroups: [""]
  resources: [services]
  verbs: [list, watch, create]
# spec.network.rendezvousSecret: one Secret per attempt holding its token. Create only: the
# operator never reads a Secret (garbage collection deletes them with the job).
- apiGroups: [""]
  resources: [secrets]
  verbs: [create]
# spec.network.policy: the job's NetworkPolicy.
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [list, watch, create]
# runPolicy.gangScheduling: one PodGroup per attempt (all-or-nothing placement). Create only:
# garbage collection deletes them with the job.
- apiGroups: [scheduling.k8s.io]
  resources: [podgroups]
  verbs: [create]
# Events on transitions; a repeat within 10 minutes patches the Event's count.
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
{{- end -}}

{{/* The leader-election Lease's name: leaderElection.id, else the operator's name. */}}
{{- define "ddp3d.leaderElectionId" -}}
{{- .Values.leaderElection.id | default (include "ddp3d.operatorName" .) -}}
{{- end -}}

{{/*
Checks across values that values.schema.json cannot express; each failure names its keys.
*/}}
{{- define "ddp3d.validate" -}}
{{- $grace := int .Values.shutdownGraceSeconds -}}
{{- $period := int .Values.terminationGracePeriodSeconds -}}
{{- if gt (add $grace 5) $period -}}
{{- fail (printf "shutdownGraceSeconds (%d) must be at most terminationGracePeriodSeconds (%d) minus 5: the operator may take shutdownGraceSeconds + 1 s to stop, and the kubelet kills it at terminationGracePeriodSeconds" $grace $period) -}}
{{- end -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) -}}
{{- fail (printf "replicaCount=%d needs leaderElection.enabled=true: without the Lease every replica would reconcile the same jobs" (int .Values.replicaCount)) -}}
{{- end -}}
{{- range $key, $_ := .Values.podLabels -}}
{{- if has $key (list "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/component") -}}
{{- fail (printf "podLabels.%s: the chart sets this selector label itself" $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* `helm test`'s objects: ServiceAccount, Role, RoleBinding, TrainingJob (pod: + -reconcile). */}}
{{- define "ddp3d.testName" -}}
{{- printf "%s-test" (include "ddp3d.fullname" .) | trunc 53 | trimSuffix "-" -}}
{{- end -}}

{{/* A `helm test` hook of the given weight, deleted once the test passes and before the next run. */}}
{{- define "ddp3d.testHook" -}}
helm.sh/hook: test
helm.sh/hook-weight: {{ .weight | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end -}}

{{/*
Where `helm test` makes its TrainingJob: the release namespace when the operator watches it
(watchNamespaces empty or listing it), else the first of watchNamespaces.
*/}}
{{- define "ddp3d.testNamespace" -}}
{{- if or (not .Values.watchNamespaces) (has .Release.Namespace .Values.watchNamespaces) -}}
{{- .Release.Namespace -}}
{{- else -}}
{{- first .Values.watchNamespaces -}}
{{- end -}}
{{- end -}}
