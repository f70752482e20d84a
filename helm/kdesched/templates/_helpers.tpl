{{/* Chart name, truncated to a DNS label. */}}
{{- define "kdesched.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name: the release name if it already contains the chart name, else release-chart. */}}
{{- define "kdesched.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kdesched.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride -}}
{{- end -}}

{{- define "kdesched.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kdesched.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kdesched.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kdesched.labels" -}}
{{ include "kdesched.selectorLabels" . }}
helm.sh/chart: {{ include "kdesched.chart" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "kdesched.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kdesched.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Leader election is only meaningful for the Deployment (the one-shot kinds exit after a cycle). */}}
{{- define "kdesched.leaderElect" -}}
{{- if and (eq .Values.kind "Deployment") .Values.leaderElection .Values.leaderElection.enabled -}}true{{- end -}}
{{- end -}}

{{- define "kdesched.leaseName" -}}
{{- default "descheduler" .Values.leaderElection.resourceName -}}
{{- end -}}

{{- define "kdesched.leaseNamespace" -}}
{{- default (include "kdesched.namespace" .) (.Values.leaderElection.resourceNamespace | default .Values.leaderElection.resourceNamescape) -}}
{{- end -}}

{{/* PriorityClass names the policy's DefaultEvictor args refer to (priorityThreshold.name), one per line. */}}
{{- define "kdesched.priorityClassNames" -}}
{{- $names := list -}}
{{- range $profile := (.Values.deschedulerPolicy.profiles | default list) -}}
{{- range $pc := ($profile.pluginConfig | default list) -}}
{{- if and (eq (toString $pc.name) "DefaultEvictor") $pc.args -}}
{{- with $pc.args.priorityThreshold -}}
{{- if .name -}}
{{- $names = append $names (toString .name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $names | uniq | sortAlpha | join "\n" -}}
{{- end -}}

{{- define "kdesched.validate" -}}
{{- if and (eq .Values.kind "Deployment") (gt (int .Values.replicas) 1) (not (include "kdesched.leaderElect" .)) -}}
{{- fail (printf "replicas is %d, but more than one replica needs leaderElection.enabled=true: without a Lease every replica would evict on its own" (int .Values.replicas)) -}}
{{- end -}}
{{- if and (eq .Values.kind "Deployment") (not .Values.deschedulingInterval) -}}
{{- fail "kind: Deployment needs deschedulingInterval (a Go duration such as 5m)" -}}
{{- end -}}
{{- with .Values.cmdOptions -}}
{{- if hasKey . "policy-config-file" -}}
{{- fail "cmdOptions.policy-config-file: the chart sets --policy-config-file itself; put the policy in deschedulerPolicy" -}}
{{- end -}}
{{- if and (eq $.Values.kind "Deployment") (hasKey . "descheduling-interval") -}}
{{- fail "cmdOptions.descheduling-interval: use the deschedulingInterval value instead" -}}
{{- end -}}
{{- range $k, $v := . -}}
{{- if and (hasPrefix "leader-elect" $k) (eq $.Values.kind "Deployment") -}}
{{- fail (printf "cmdOptions.%s: use the leaderElection values instead" $k) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and .Values.serviceMonitor.enabled (eq .Values.kind "Deployment") (not .Values.service.enabled) -}}
{{- fail "serviceMonitor.enabled needs service.enabled=true (the ServiceMonitor selects the metrics Service)" -}}
{{- end -}}
{{- end -}}

{{/* The pod template's spec, shared by the CronJob, the Job and the Deployment. */}}
{{- define "kdesched.podSpec" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if .Values.priorityClassName }}
priorityClassName: {{ .Values.priorityClassName }}
{{- end }}
serviceAccountName: {{ include "kdesched.serviceAccountName" . }}
automountServiceAccountToken: {{ .Values.automountServiceAccountToken }}
{{- if ne .Values.kind "Deployment" }}
restartPolicy: Never
{{- end }}
{{- with .Values.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.dnsConfig }}
dnsConfig:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.initContainers }}
initContainers:
  {{- toYaml . | nindent 2 }}
{{- end }}
containers:
  - name: {{ .Chart.Name }}
    image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default (printf "v%s" .Chart.AppVersion) }}"
    imagePullPolicy: {{ .Values.image.pullPolicy }}
    {{- with .Values.command }}
    command:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    args:
      - "--policy-config-file=/policy-dir/policy.yaml"
      {{- if eq .Values.kind "Deployment" }}
      - {{ printf "--descheduling-interval=%s" (toString .Values.deschedulingInterval) | quote }}
      {{- end }}
      {{- if include "kdesched.leaderElect" . }}
      - "--leader-elect"
      {{- with .Values.leaderElection }}
      {{- if .leaseDuration }}
      - {{ printf "--leader-elect-lease-duration=%s" (toString .leaseDuration) | quote }}
      {{- end }}
      {{- if .renewDeadline }}
      - {{ printf "--leader-elect-renew-deadline=%s" (toString .renewDeadline) | quote }}
      {{- end }}
      {{- if .retryPeriod }}
      - {{ printf "--leader-elect-retry-period=%s" (toString .retryPeriod) | quote }}
      {{- end }}
      {{- if .resourceLock }}
      - {{ printf "--leader-elect-resource-lock=%s" (toString .resourceLock) | quote }}
      {{- end }}
      {{- end }}
      - {{ printf "--leader-elect-resource-name=%s" (include "kdesched.leaseName" .) | quote }}
      - {{ printf "--leader-elect-resource-namespace=%s" (include "kdesched.leaseNamespace" .) | quote }}
      {{- end }}
      {{- range $key, $value := .Values.cmdOptions }}
      {{- if kindIs "invalid" $value }}
      - {{ printf "--%s" $key | quote }}
      {{- else }}
      - {{ printf "--%s=%v" $key $value | quote }}
      {{- end }}
      {{- end }}
    {{- with .Values.ports }}
    ports:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.livenessProbe }}
    livenessProbe:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.readinessProbe }}
    readinessProbe:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.resources }}
    resources:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.securityContext }}
    securityContext:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    volumeMounts:
      - name: policy-volume
        mountPath: /policy-dir
        readOnly: true
      {{- with .Values.extraServiceAccountVolumeMounts }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
volumes:
  - name: policy-volume
    configMap:
      name: {{ include "kdesched.fullname" . }}
  {{- with .Values.extraServiceAccountVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The pod template's metadata. */}}
{{- define "kdesched.podMetadata" -}}
annotations:
  checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
  {{- with .Values.podAnnotations }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
labels:
  {{- include "kdesched.selectorLabels" . | nindent 2 }}
  {{- with .Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}
