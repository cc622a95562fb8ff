{{/*
Helpers of the gateway chart. Named templates are global across a Helm release, so
every helper is prefixed with the chart name. New service charts start from the
orders chart (it has the migration Job), not from this one.
*/}}

{{- define "gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
"<release>-<name>", always, so other charts of the release (the gateway's upstream URLs,
NetworkPolicies) can predict it.
*/}}
{{- define "gateway.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "gateway.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "gateway.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels of the serving pods. */}}
{{- define "gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ .Values.component }}
{{- end }}

{{/* Labels common to every object; the component label is added by the caller. */}}
{{- define "gateway.commonLabels" -}}
helm.sh/chart: {{ include "gateway.chart" . }}
app.kubernetes.io/name: {{ include "gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: {{ .Values.global.partOf }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "gateway.labels" -}}
{{ include "gateway.commonLabels" . }}
app.kubernetes.io/component: {{ .Values.component }}
{{- end }}

{{- define "gateway.image" -}}
{{- $registry := default .Values.global.imageRegistry .Values.image.registry -}}
{{- $tag := .Values.image.tag | default .Values.global.imageTag | default .Chart.AppVersion -}}
{{- if $registry }}{{ printf "%s/%s:%s" (trimSuffix "/" $registry) .Values.image.repository $tag }}{{ else }}{{ printf "%s:%s" .Values.image.repository $tag }}{{ end }}
{{- end }}

{{- define "gateway.imagePullSecrets" -}}
{{- $secrets := concat (.Values.global.imagePullSecrets | default list) (.Values.imagePullSecrets | default list) | uniq -}}
{{- if $secrets }}
imagePullSecrets:
{{- range $secrets }}
  - name: {{ . }}
{{- end }}
{{- end }}
{{- end }}

{{- define "gateway.serviceAccountName" -}}
{{- default (include "gateway.fullname" .) .Values.serviceAccount.name }}
{{- end }}

{{/* The Secret holding this chart's secret environment. */}}
{{- define "gateway.secretName" -}}
{{- if .Values.secret.create }}
{{- include "gateway.fullname" . }}
{{- else }}
{{- required "secret.existingSecret is required when secret.create is false" .Values.secret.existingSecret }}
{{- end }}
{{- end }}

{{/* true when INTERNAL_CONTEXT_KEYS lives in this chart's own Secret. */}}
{{- define "gateway.internalContextInOwnSecret" -}}
{{- if not (or .Values.global.internalContext.create .Values.global.internalContext.existingSecret) }}true{{ end }}
{{- end }}

{{/* ConfigMap data: HTTP_ADDR and INTERNAL_HTTP_ADDR from the container ports, then `config` through tpl. Empty values
are left out so the process applies its own default instead of an empty string. */}}
{{- define "gateway.configData" -}}
HTTP_ADDR: {{ printf ":%v" .Values.containerPort | quote }}
INTERNAL_HTTP_ADDR: {{ printf ":%v" .Values.internal.containerPort | quote }}
{{- range $k, $v := .Values.config }}
{{- $rendered := tpl (toString $v) $ }}
{{- if ne $rendered "" }}
{{ $k }}: {{ $rendered | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* Secret environment of the process: the chart's keys, then INTERNAL_CONTEXT_KEYS. */}}
{{- define "gateway.secretEnv" -}}
{{- $own := include "gateway.secretName" . -}}
{{- range .Values.secret.keys }}
- name: {{ . }}
  valueFrom:
    secretKeyRef:
      name: {{ $own }}
      key: {{ . }}
{{- end }}
{{- $ic := .Values.global.internalContext }}
- name: INTERNAL_CONTEXT_KEYS
  valueFrom:
    secretKeyRef:
{{- if $ic.create }}
      name: {{ printf "%s-internal-context" .Release.Name }}
      key: INTERNAL_CONTEXT_KEYS
{{- else if $ic.existingSecret }}
      name: {{ $ic.existingSecret }}
      key: {{ $ic.secretKey }}
{{- else }}
      name: {{ $own }}
      key: INTERNAL_CONTEXT_KEYS
{{- end }}
{{- end }}

{{- define "gateway.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "gateway.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 65532
capabilities:
  drop: ["ALL"]
{{- end }}
