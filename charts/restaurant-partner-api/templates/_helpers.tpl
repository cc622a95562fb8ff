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

{{/* NetworkPolicy of a dev data store: its port admits the pods of this release alone
(the processes and their migrate init containers), nothing from outside the release.
Called with (dict "root" $ "name" "postgresql" "component" "database" "version" "17" "port" "postgres"). */}}
{{- define "rpa.storeNetworkPolicy" -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ printf "%s-%s" .root.Release.Name .name | trunc 63 | trimSuffix "-" }}
  labels:
    {{- include "rpa.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "rpa.selectorLabels" . | nindent 6 }}
  policyTypes:
    - Ingress
  ingress:
    - from:
        - podSelector:
            matchLabels:
              app.kubernetes.io/instance: {{ .root.Release.Name }}
      ports:
        - port: {{ .port }}
          protocol: TCP
{{- end }}
