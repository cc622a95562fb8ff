{{- define "common.migrationSecret" -}}
{{- $ic := .Values.global.internalContext }}
{{- if and (.Values.migration).enabled (or .Values.secret.create $ic.create) }}
{{- /*
Copy of the chart-created secret values for the migration hook: Helm runs pre-install
hooks before it creates the release's own Secrets. Deleted once the hooks succeed.
*/}}
apiVersion: v1
kind: Secret
metadata:
  name: {{ include "common.migrationSecretName" . }}
  labels:
    {{- include "common.commonLabels" . | nindent 4 }}
    app.kubernetes.io/component: migration
  annotations:
    helm.sh/hook: {{ .Values.migration.hookEvents }}
    helm.sh/hook-weight: "-10"
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
type: Opaque
stringData:
  {{- if .Values.secret.create }}
  {{- range .Values.secret.keys }}
  {{ . }}: {{ tpl (toString (index $.Values.secret.values . | default "")) $ | quote }}
  {{- end }}
  {{- end }}
  {{- if $ic.create }}
  INTERNAL_CONTEXT_KEYS: {{ $ic.keys | quote }}
  {{- else if include "common.internalContextInOwnSecret" . }}
  INTERNAL_CONTEXT_KEYS: {{ .Values.secret.values.INTERNAL_CONTEXT_KEYS | default "" | quote }}
  {{- end }}
{{- end }}
{{- end }}
