{{/* Helpers of the umbrella chart, prefixed "rpa." (named templates are release-global). */}}

{{- define "rpa.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels for an object of this chart: (dict "root" $ "name" "postgresql" "component" "database" "version" "17"). */}}
{{- define "rpa.labels" -}}
helm.sh/chart: {{ include "rpa.chart" .root }}
{{ include "rpa.selectorLabels" . }}
app.kubernetes.io/version: {{ .version | default .root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: {{ .root.Values.global.partOf }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end }}

{{- define "rpa.selectorLabels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Restricted security context for the dev data stores (uid/gid of the official images). */}}
{{- define "rpa.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
{{- end }}
