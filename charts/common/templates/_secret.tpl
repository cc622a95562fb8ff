{{/* The chart-created Secret (secret.create); otherwise secret.existingSecret names one the operator manages. */}}
{{- define "common.secret" -}}
{{- if .Values.secret.create }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ include "common.fullname" . }}
  labels:
    {{- include "common.labels" . | nindent 4 }}
type: Opaque
stringData:
  {{- range .Values.secret.keys }}
  {{ . }}: {{ tpl (toString (index $.Values.secret.values . | default "")) $ | quote }}
  {{- end }}
  {{- range .Values.secret.optionalKeys }}
  {{- $v := tpl (toString (index $.Values.secret.values . | default "")) $ }}
  {{- if $v }}
  {{ . }}: {{ $v | quote }}
  {{- end }}
  {{- end }}
  {{- if include "common.internalContextInOwnSecret" . }}
  INTERNAL_CONTEXT_KEYS: {{ .Values.secret.values.INTERNAL_CONTEXT_KEYS | default "" | quote }}
  {{- end }}
{{- end }}
{{- end }}
