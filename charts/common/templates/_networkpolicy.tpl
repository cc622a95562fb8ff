{{- /*
The NetworkPolicy of a process. Called with (dict "root" $ "publicFromAnywhere" bool):
a service's public port admits only the gateway of its release (and the processes
of the release listed in networkPolicy.callers); the gateway's
(publicFromAnywhere) admits everyone, since it is the partners' only way in. The
internal port always admits the pods of the release namespace and Prometheus alone.
*/}}
{{- define "common.networkPolicy" -}}
{{- $root := .root -}}
{{- with $root }}
{{- if .Values.networkPolicy.enabled }}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "common.fullname" . }}
  labels:
    {{- include "common.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "common.selectorLabels" . | nindent 6 }}
  policyTypes:
    - Ingress
  ingress:
    {{- if $.publicFromAnywhere }}
    - ports:
        - port: http
          protocol: TCP
    {{- else }}
    - from:
        - podSelector:
            matchLabels:
              app.kubernetes.io/name: gateway
              app.kubernetes.io/instance: {{ .Release.Name }}
        {{- /* Processes of the release that call this one directly (the registry's "calls"). */}}
        {{- range .Values.networkPolicy.callers }}
        - podSelector:
            matchLabels:
              app.kubernetes.io/name: {{ . }}
              app.kubernetes.io/instance: {{ $root.Release.Name }}
        {{- end }}
      ports:
        - port: http
          protocol: TCP
    {{- end }}
    {{- /* The internal port: pods of this namespace and Prometheus, never the ingress
    controller or the internet. */}}
    - from:
        - podSelector: {}
        {{- if .Values.networkPolicy.metricsScrape.enabled }}
        - namespaceSelector:
            {{- toYaml .Values.networkPolicy.metricsScrape.namespaceSelector | nindent 12 }}
        {{- end }}
      ports:
        - port: internal
          protocol: TCP
    {{- with .Values.networkPolicy.extraIngress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}
{{- end }}
{{- end }}
