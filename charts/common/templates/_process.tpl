{{- /*
Every object of one process, in the order a reader expects them. A process chart's
templates/process.yaml is this one line:
  {{ include "common.process" (dict "root" $ "publicFromAnywhere" false) }}
publicFromAnywhere is true only for the gateway (see common.networkPolicy).
*/}}
{{- define "common.process" -}}
{{- $root := .root -}}
{{- $docs := list
  (include "common.serviceAccount" $root)
  (include "common.rbac" $root)
  (include "common.configMap" $root)
  (include "common.secret" $root)
  (include "common.service" $root)
  (include "common.serviceInternal" $root)
  (include "common.deployment" $root)
  (include "common.hpa" $root)
  (include "common.pdb" $root)
  (include "common.networkPolicy" .)
-}}
{{- range $docs }}
{{- if trim . }}
---
{{ trim . }}
{{- end }}
{{- end }}
{{- end }}

{{- /* NOTES.txt of a process chart: where it answers, and what to do about its Secret. */}}
{{- define "common.notes" -}}
{{ include "common.fullname" . }} is installed.

In-cluster URL: http://{{ include "common.fullname" . }}.{{ .Release.Namespace }}.svc:{{ .Values.service.port }}
Internal listener (/metrics, and identity's admin API for partnerctl --url), from inside the cluster only: http://{{ include "common.fullname" . }}-internal.{{ .Release.Namespace }}.svc:{{ .Values.internal.servicePort }}
{{- end }}

{{- define "common.notesSecret" -}}
{{- if .Values.secret.create }}

The chart created the Secret {{ include "common.fullname" . }} from secret.values.
Use secret.create=false and secret.existingSecret outside development.
{{- end }}
{{- end }}
