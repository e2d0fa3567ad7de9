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
