{{/*
Helpers of the library chart every process chart includes. They run in the including
chart's context: .Chart and .Values are the process chart's, so names and labels are
that chart's own.
*/}}

{{- define "common.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
"<release>-<name>", always, so other charts of the release (the gateway's upstream URLs,
NetworkPolicies) can predict it.
*/}}
{{- define "common.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "common.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "common.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels of the serving pods; the migration Job's pods differ by component. */}}
{{- define "common.selectorLabels" -}}
app.kubernetes.io/name: {{ include "common.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ .Values.component }}
{{- end }}

{{/* Labels common to every object; the component label is added by the caller. */}}
{{- define "common.commonLabels" -}}
helm.sh/chart: {{ include "common.chart" . }}
app.kubernetes.io/name: {{ include "common.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: {{ .Values.global.partOf }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "common.labels" -}}
{{ include "common.commonLabels" . }}
app.kubernetes.io/component: {{ .Values.component }}
{{- end }}

{{- define "common.image" -}}
{{- $registry := default .Values.global.imageRegistry .Values.image.registry -}}
{{- $tag := .Values.image.tag | default .Values.global.imageTag | default .Chart.AppVersion -}}
{{- if $registry }}{{ printf "%s/%s:%s" (trimSuffix "/" $registry) .Values.image.repository $tag }}{{ else }}{{ printf "%s:%s" .Values.image.repository $tag }}{{ end }}
{{- end }}

{{- define "common.imagePullSecrets" -}}
{{- $secrets := concat (.Values.global.imagePullSecrets | default list) (.Values.imagePullSecrets | default list) | uniq -}}
{{- if $secrets }}
imagePullSecrets:
{{- range $secrets }}
  - name: {{ . }}
{{- end }}
{{- end }}
{{- end }}

{{- define "common.serviceAccountName" -}}
{{- default (include "common.fullname" .) .Values.serviceAccount.name }}
{{- end }}

{{/* The Secret holding this chart's secret environment. */}}
{{- define "common.secretName" -}}
{{- if .Values.secret.create }}
{{- include "common.fullname" . }}
{{- else }}
{{- required "secret.existingSecret is required when secret.create is false" .Values.secret.existingSecret }}
{{- end }}
{{- end }}

{{/* true when INTERNAL_CONTEXT_KEYS lives in this chart's own Secret. */}}
{{- define "common.internalContextInOwnSecret" -}}
{{- if not (or .Values.global.internalContext.create .Values.global.internalContext.existingSecret) }}true{{ end }}
{{- end }}

{{/* ConfigMap data: HTTP_ADDR and INTERNAL_HTTP_ADDR from the container ports, then `config` through tpl. Empty values
are left out so the process applies its own default instead of an empty string. */}}
{{- define "common.configData" -}}
HTTP_ADDR: {{ printf ":%v" .Values.containerPort | quote }}
INTERNAL_HTTP_ADDR: {{ printf ":%v" .Values.internal.containerPort | quote }}
{{- range $k, $v := .Values.config }}
{{- $rendered := tpl (toString $v) $ }}
{{- if ne $rendered "" }}
{{ $k }}: {{ $rendered | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* Secret environment of the process: each secret key, each optional key the Secret may hold, and INTERNAL_CONTEXT_KEYS. */}}
{{- define "common.secretEnv" -}}
{{- $own := include "common.secretName" . -}}
{{- range .Values.secret.keys }}
- name: {{ . }}
  valueFrom:
    secretKeyRef:
      name: {{ $own }}
      key: {{ . }}
{{- end }}
{{- range .Values.secret.optionalKeys }}
- name: {{ . }}
  valueFrom:
    secretKeyRef:
      name: {{ $own }}
      key: {{ . }}
      optional: true
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

{{- define "common.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "common.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 65532
capabilities:
  drop: ["ALL"]
{{- end }}
