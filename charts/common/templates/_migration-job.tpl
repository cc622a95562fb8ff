{{- define "common.migrationJob" -}}
{{- if (.Values.migration).enabled }}
{{- /*
The migration Job of a process with a database (values with a migration block):
"<name> migrate" before the new pods roll out. The Job runs without the release's
ServiceAccount and ConfigMap, which do not exist yet during pre-install.
*/}}
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ printf "%s-migrate" (include "common.fullname" .) | trunc 63 | trimSuffix "-" }}
  labels:
    {{- include "common.commonLabels" . | nindent 4 }}
    app.kubernetes.io/component: migration
  annotations:
    helm.sh/hook: {{ .Values.migration.hookEvents }}
    helm.sh/hook-weight: "0"
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  backoffLimit: {{ .Values.migration.backoffLimit }}
  activeDeadlineSeconds: {{ .Values.migration.activeDeadlineSeconds }}
  template:
    metadata:
      labels:
        {{- include "common.commonLabels" . | nindent 8 }}
        app.kubernetes.io/component: migration
    spec:
      restartPolicy: Never
      automountServiceAccountToken: false
      {{- include "common.imagePullSecrets" . | nindent 6 }}
      securityContext:
        {{- include "common.podSecurityContext" . | nindent 8 }}
      containers:
        - name: migrate
          image: {{ include "common.image" . }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          args: ["migrate"]
          env:
            {{- range $k, $v := (include "common.configData" . | fromYaml) }}
            - name: {{ $k }}
              value: {{ $v | quote }}
            {{- end }}
            {{- include "common.secretEnv" (dict "root" . "hook" true) | nindent 12 }}
            {{- with .Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          resources:
            {{- toYaml .Values.migration.resources | nindent 12 }}
          securityContext:
            {{- include "common.containerSecurityContext" . | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}
{{- end }}
