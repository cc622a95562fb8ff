{{- /*
RBAC of a process that calls the Kubernetes API (an operator), from values
rbac.{create,clusterRules,namespaceRules}: a ClusterRole for what it watches in every
namespace and a Role for what it needs only in the release namespace (its Lease), each
bound to the process's ServiceAccount. Charts without an rbac block render nothing.
*/}}
{{- define "common.rbac" -}}
{{- if (.Values.rbac).create }}
{{- $name := include "common.fullname" . }}
{{- $subject := dict "kind" "ServiceAccount" "name" (include "common.serviceAccountName" .) "namespace" .Release.Namespace }}
{{- with .Values.rbac.clusterRules }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $.Release.Namespace }}-{{ $name }}
  labels:
    {{- include "common.labels" $ | nindent 4 }}
rules:
  {{- toYaml . | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $.Release.Namespace }}-{{ $name }}
  labels:
    {{- include "common.labels" $ | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $.Release.Namespace }}-{{ $name }}
subjects:
  - {{- toYaml $subject | nindent 4 }}
{{- end }}
{{- with .Values.rbac.namespaceRules }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}
  labels:
    {{- include "common.labels" $ | nindent 4 }}
rules:
  {{- toYaml . | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}
  labels:
    {{- include "common.labels" $ | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $name }}
subjects:
  - {{- toYaml $subject | nindent 4 }}
{{- end }}
{{- end }}
{{- end }}
