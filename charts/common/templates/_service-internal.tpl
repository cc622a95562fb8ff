{{- define "common.serviceInternal" -}}
{{- /* The internal listener: /metrics (and an admin API, identity's). ClusterIP only; the public
Service and the Ingress never expose this port. */}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "common.fullname" . }}-internal
  labels:
    {{- include "common.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "common.selectorLabels" . | nindent 4 }}
  ports:
    - name: internal
      port: {{ .Values.internal.servicePort }}
      targetPort: internal
      protocol: TCP
{{- end }}
