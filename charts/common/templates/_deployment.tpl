{{/* The Deployment of the serving pods: probes on the public port, the restricted security context, topology spread. */}}
{{- define "common.deployment" -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "common.fullname" . }}
  labels:
    {{- include "common.labels" . | nindent 4 }}
spec:
  {{- if not .Values.autoscaling.enabled }}
  replicas: {{ .Values.replicaCount }}
  {{- end }}
  revisionHistoryLimit: {{ .Values.revisionHistoryLimit }}
  selector:
    matchLabels:
      {{- include "common.selectorLabels" . | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 0
  template:
    metadata:
      labels:
        {{- include "common.labels" . | nindent 8 }}
        {{- with .Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/config: {{ include "common.configData" . | sha256sum }}
        {{- if .Values.secret.create }}
        checksum/secret: {{ toJson .Values.secret.values | sha256sum }}
        {{- end }}
        {{- if .Values.metrics.podAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ .Values.internal.containerPort | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with .Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "common.serviceAccountName" . }}
      automountServiceAccountToken: {{ .Values.serviceAccount.automountToken | default false }}
      {{- include "common.imagePullSecrets" . | nindent 6 }}
      {{- with .Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
      securityContext:
        {{- include "common.podSecurityContext" . | nindent 8 }}
      {{- if (.Values.migration).enabled }}
      {{- /*
      "<name> migrate" before the process starts, in every pod: idempotent and
      advisory-locked, so replicas starting together migrate once and the others find the
      schema current. A rollout's first new pod migrates while the old pods keep serving
      (migrations stay compatible with the previous release), and a failing migration
      stops the rollout there. Unlike a Helm hook it needs no copy of the Secrets and
      waits for nothing the release creates itself (the dev Postgres), so
      `helm install --wait` and `helm upgrade --wait` finish.
      */}}
      initContainers:
        - name: migrate
          image: {{ include "common.image" . }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          args: ["migrate"]
          envFrom:
            - configMapRef:
                name: {{ include "common.fullname" . }}
          env:
            {{- include "common.secretEnv" . | nindent 12 }}
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
      {{- end }}
      containers:
        - name: {{ .Chart.Name }}
          image: {{ include "common.image" . }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          args: ["serve"]
          {{- /*
          On termination the pod leaves the Service's endpoints while the process still
          serves: kube-proxy and the callers' keep-alive connections catch up during the
          sleep, then the process drains. Without it, a rolling restart answered 503s
          through the gateway (connections refused by the stopped pod). 0 turns it off.
          */}}
          {{- with .Values.preStopSleepSeconds }}
          lifecycle:
            preStop:
              sleep:
                seconds: {{ . }}
          {{- end }}
          ports:
            - name: http
              containerPort: {{ .Values.containerPort }}
              protocol: TCP
            - name: internal
              containerPort: {{ .Values.internal.containerPort }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ include "common.fullname" . }}
          env:
            {{- include "common.secretEnv" . | nindent 12 }}
            {{- with .Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
            {{- toYaml .Values.probes.liveness | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: http
            {{- toYaml .Values.probes.readiness | nindent 12 }}
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
          securityContext:
            {{- include "common.containerSecurityContext" . | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
      {{- if .Values.topologySpread.enabled }}
      topologySpreadConstraints:
        {{- range .Values.topologySpread.topologyKeys }}
        - maxSkew: {{ $.Values.topologySpread.maxSkew }}
          topologyKey: {{ . }}
          whenUnsatisfiable: {{ $.Values.topologySpread.whenUnsatisfiable }}
          labelSelector:
            matchLabels:
              {{- include "common.selectorLabels" $ | nindent 14 }}
          matchLabelKeys:
            - pod-template-hash
        {{- end }}
      {{- end }}
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}
