{{/* Chart name, truncated to a DNS label. nameOverride: descheduler gives upstream's names. */}}
{{- define "kdesched.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name: the release name if it already contains the chart name, else release-chart (as upstream). */}}
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
{{- default .Release.Namespace .Values.namespaceOverride | trunc 63 | trimSuffix "-" -}}
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

{{/*
The image. kdesched's own repository is written here as well as in values.yaml because an
upstream values file replaces values.yaml's: with upstream's repository and no tag, upstream's
template would render registry.k8s.io/descheduler/descheduler:v<kdesched's appVersion>, an image
that does not exist, so the chart runs kdesched's image instead (NOTES.txt says so). With a pinned
tag the user asked for upstream's binary by name: that is ambiguous, so the render fails and says
which value to change.
*/}}
{{- define "kdesched.defaultRepository" -}}ghcr.io/kdesched/kdesched{{- end -}}
{{- define "kdesched.upstreamRepository" -}}
{{- $repo := trimSuffix "/" (toString (.Values.image.repository | default "")) -}}
{{- if has $repo (list "registry.k8s.io/descheduler/descheduler" "k8s.gcr.io/descheduler/descheduler") -}}{{ $repo }}{{- end -}}
{{- end -}}
{{- define "kdesched.image" -}}
{{- $repo := toString (.Values.image.repository | default (include "kdesched.defaultRepository" .)) -}}
{{- $tag := toString (.Values.image.tag | default "") -}}
{{- with include "kdesched.upstreamRepository" . -}}
{{- if $tag -}}
{{- fail (printf "image: %s:%s is upstream's descheduler image, and this chart runs kdesched. Remove image.repository and image.tag (the default is kdesched's image %s:v%s), or set image.repository to your kdesched image" . $tag (include "kdesched.defaultRepository" $) $.Chart.AppVersion) -}}
{{- end -}}
{{- $repo = include "kdesched.defaultRepository" $ -}}
{{- end -}}
{{- printf "%s:%s" $repo ($tag | default (printf "v%s" .Chart.AppVersion)) -}}
{{- end -}}

{{/*
cmdOptions as the flags the binary sees: key (with "_" read as "-", as pflag's normalizer does)
-> the rendered value ("" for a bare --key). Later keys win, as on the command line (Helm ranges
over a map in key order, the order the flags are rendered in). Output: a YAML map.
*/}}
{{- define "kdesched.cmdFlags" -}}
{{- $flags := dict -}}
{{- range $k, $v := (.Values.cmdOptions | default dict) -}}
{{- $_ := set $flags (replace "_" "-" (toString $k)) (ternary "" (toString $v) (kindIs "invalid" $v)) -}}
{{- end -}}
{{- toYaml $flags -}}
{{- end -}}

{{/*
Leader election as the binary will run it (Deployment only: the one-shot kinds exit after a
cycle). The leaderElection values render after cmdOptions, as upstream's template orders them, so
they win over the same flag in cmdOptions; without them a cmdOptions flag applies; without either
the binary's defaults (upstream's): Lease kube-system/descheduler.
Output: YAML {enabled, name, namespace}.
*/}}
{{- define "kdesched.leader" -}}
{{- $flags := include "kdesched.cmdFlags" . | fromYaml -}}
{{- $le := .Values.leaderElection | default dict -}}
{{- $fromValues := and (eq .Values.kind "Deployment") $le.enabled -}}
{{- $cmd := and (eq .Values.kind "Deployment") (hasKey $flags "leader-elect") (has (get $flags "leader-elect") (list "" "true")) -}}
{{- $name := get $flags "leader-elect-resource-name" | default "descheduler" -}}
{{- $ns := get $flags "leader-elect-resource-namespace" | default "kube-system" -}}
{{- if $fromValues -}}
{{- $name = $le.resourceName | default $name -}}
{{- $ns = default $le.resourceNamespace $le.resourceNamescape | default $ns -}}
{{- end -}}
{{- toYaml (dict "enabled" (or $fromValues $cmd) "name" (toString $name) "namespace" (toString $ns)) -}}
{{- end -}}

{{/* A Go duration ("1h30m", "5m", "90s") in seconds, for PromQL. */}}
{{- define "kdesched.durationSeconds" -}}
{{- $units := dict "ns" 0.000000001 "us" 0.000001 "µs" 0.000001 "μs" 0.000001 "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 -}}
{{- $total := 0.0 -}}
{{- range regexFindAll "([0-9]*[.])?[0-9]+(ns|us|µs|μs|ms|s|m|h)" (toString .) -1 -}}
{{- $num := regexFind "^([0-9]*[.])?[0-9]+" . -}}
{{- $total = addf $total (mulf (float64 $num) (get $units (trimPrefix $num .))) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/* A Kubernetes quantity ("256Mi", "1G", "1.5Gi", "268435456") in bytes; 0 when unset. */}}
{{- define "kdesched.quantityBytes" -}}
{{- $q := toString (. | default "0") -}}
{{- $units := dict "" 1.0 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "P" 1e15 "E" 1e18 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 "m" 0.001 -}}
{{- $num := regexFind "^([0-9]*[.])?[0-9]+([eE][0-9]+)?" $q -}}
{{- $unit := trimPrefix $num $q -}}
{{- if not (hasKey $units $unit) -}}
{{- fail (printf "resources.limits.memory: %q is not a Kubernetes quantity (like 256Mi); set prometheusRule.memoryLimitBytes" $q) -}}
{{- end -}}
{{- mulf (float64 $num) (get $units $unit) | ceil | int64 -}}
{{- end -}}

{{/* PriorityClass names the policy's DefaultEvictor args refer to (priorityThreshold.name), one per line. */}}
{{- define "kdesched.priorityClassNames" -}}
{{- $names := list -}}
{{- range $profile := ((.Values.deschedulerPolicy | default dict).profiles | default list) -}}
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

{{/* "true" when the policy configures metrics-server as a usage source (metricsCollector.enabled, or a KubernetesMetrics provider), else "". */}}
{{- define "kdesched.kubernetesMetrics" -}}
{{- $policy := .Values.deschedulerPolicy | default dict -}}
{{- $on := and (kindIs "map" $policy.metricsCollector) $policy.metricsCollector.enabled -}}
{{- range ($policy.metricsProviders | default list) -}}
{{- if and (kindIs "map" .) (eq (toString .source) "KubernetesMetrics") -}}
{{- $on = true -}}
{{- end -}}
{{- end -}}
{{- if $on -}}true{{- end -}}
{{- end -}}

{{/* "true" when the policy enables make-before-break moves (kdesched.moves.enabled, and not
     `compat: upstream`, which turns them off): the ClusterRole then grants what a move calls. */}}
{{- define "kdesched.moves" -}}
{{- $policy := .Values.deschedulerPolicy | default dict -}}
{{- $ext := $policy.kdesched | default dict -}}
{{- if and (kindIs "map" $ext) (kindIs "map" $ext.moves) $ext.moves.enabled (ne (toString $ext.compat) "upstream") -}}true{{- end -}}
{{- end -}}

{{/* The Secret a Prometheus provider's authToken names, as YAML {namespace, name}; "" when none. */}}
{{- define "kdesched.prometheusSecret" -}}
{{- $policy := .Values.deschedulerPolicy | default dict -}}
{{- range ($policy.metricsProviders | default list) -}}
{{- if and (kindIs "map" .) (eq (toString .source) "Prometheus") (kindIs "map" .prometheus) -}}
{{- $ref := ((.prometheus.authToken | default dict).secretReference | default dict) -}}
{{- if and $ref.namespace $ref.name -}}
{{- toYaml (dict "namespace" (toString $ref.namespace) "name" (toString $ref.name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Only what upstream's chart refuses too, or what cannot work; cmdOptions may carry any flag. */}}
{{- define "kdesched.validate" -}}
{{- if and (eq .Values.kind "Deployment") (gt (int .Values.replicas) 1) (not (include "kdesched.leader" . | fromYaml).enabled) -}}
{{- fail (printf "replicas is %d, but more than one replica needs leaderElection.enabled=true: without a Lease every replica would evict on its own" (int .Values.replicas)) -}}
{{- end -}}
{{- if and (eq .Values.kind "Deployment") (not .Values.deschedulingInterval) -}}
{{- fail "kind: Deployment needs deschedulingInterval (a Go duration such as 5m)" -}}
{{- end -}}
{{- end -}}

{{/*
A probe with its httpGet.scheme set to what the binary serves: HTTPS on --secure-port (as
upstream), HTTP with plainHttp. The endpoint serves one or the other, never both, so a scheme
carried over from another values file would only make the probe fail.
*/}}
{{- define "kdesched.probe" -}}
{{- $probe := deepCopy .probe -}}
{{- if $probe.httpGet -}}
{{- $_ := set $probe.httpGet "scheme" (ternary "HTTP" "HTTPS" (.root.Values.plainHttp | default false)) -}}
{{- end -}}
{{- toYaml $probe -}}
{{- end -}}

{{/* The container's args, in upstream's order: policy, interval, cmdOptions, leader election. */}}
{{- define "kdesched.args" -}}
- "--policy-config-file=/policy-dir/policy.yaml"
{{- if eq .Values.kind "Deployment" }}
- {{ printf "--descheduling-interval=%s" (toString .Values.deschedulingInterval) | quote }}
{{- end }}
{{- if .Values.plainHttp }}
- "--plain-http"
{{- end }}
{{- range $key, $value := .Values.cmdOptions }}
{{- if kindIs "invalid" $value }}
- {{ printf "--%s" $key | quote }}
{{- else }}
- {{ printf "--%s=%s" $key (toString $value) | quote }}
{{- end }}
{{- end }}
{{- if and (eq .Values.kind "Deployment") .Values.leaderElection .Values.leaderElection.enabled }}
{{- with .Values.leaderElection }}
- {{ printf "--leader-elect=%s" (toString .enabled) | quote }}
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
{{- if .resourceName }}
- {{ printf "--leader-elect-resource-name=%s" (toString .resourceName) | quote }}
{{- end }}
{{- with default .resourceNamespace .resourceNamescape }}
- {{ printf "--leader-elect-resource-namespace=%s" (toString .) | quote }}
{{- end }}
{{- end }}
{{- end }}
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
{{- if kindIs "bool" .Values.automountServiceAccountToken }}
automountServiceAccountToken: {{ .Values.automountServiceAccountToken }}
{{- end }}
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
  - name: {{ include "kdesched.name" . }}
    image: {{ include "kdesched.image" . | quote }}
    imagePullPolicy: {{ .Values.image.pullPolicy }}
    {{- with .Values.command }}
    command:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    args:
      {{- include "kdesched.args" . | nindent 6 }}
    {{- with .Values.ports }}
    ports:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.livenessProbe }}
    livenessProbe:
      {{- include "kdesched.probe" (dict "probe" . "root" $) | nindent 6 }}
    {{- end }}
    {{- with .Values.readinessProbe }}
    readinessProbe:
      {{- include "kdesched.probe" (dict "probe" . "root" $) | nindent 6 }}
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
      {{- /* As upstream: the extra token volume replaces the automounted one, so only without it. */}}
      {{- if and .Values.extraServiceAccountVolumeMounts (not .Values.automountServiceAccountToken) }}
      {{- toYaml .Values.extraServiceAccountVolumeMounts | nindent 6 }}
      {{- end }}
volumes:
  - name: policy-volume
    configMap:
      name: {{ include "kdesched.fullname" . }}
  {{- if and .Values.extraServiceAccountVolumes (not .Values.automountServiceAccountToken) }}
  {{- toYaml .Values.extraServiceAccountVolumes | nindent 2 }}
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
