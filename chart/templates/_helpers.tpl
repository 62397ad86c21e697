{{/*
Every template starts with: include "meshpilot.init" .
Reads the older layout as istiod's chart does: keys under `pilot:` win over the top-level ones.
Idempotent, so the templates need not rely on the order Helm renders them in.
*/}}
{{- define "meshpilot.init" -}}
{{- if .Values.pilot }}
{{- $_ := mustMergeOverwrite .Values (deepCopy .Values.pilot) }}
{{- end }}
{{- end }}

{{/* istiod, or istiod-<revision>: the Deployment, Service, ServiceAccount, RBAC and HPA/PDB name. */}}
{{- define "meshpilot.name" -}}
istiod{{ if .Values.revision }}-{{ .Values.revision }}{{ end }}
{{- end }}

{{/* The revision label value: "default" when no revision is set. */}}
{{- define "meshpilot.rev" -}}
{{ .Values.revision | default "default" }}
{{- end }}

{{- define "meshpilot.labels" -}}
app.kubernetes.io/name: istiod
app.kubernetes.io/part-of: istio
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
istio.io/rev: {{ include "meshpilot.rev" . | quote }}
release: {{ .Release.Name }}
{{- end }}

{{/* The labels the Service, PDB and Deployment select pods by (istiod's). */}}
{{- define "meshpilot.selector" -}}
app: istiod
{{- if .Values.revision }}
istio.io/rev: {{ .Values.revision | quote }}
{{- else }}
istio: pilot
{{- end }}
{{- end }}

{{- define "meshpilot.image" -}}
{{- if contains "/" .Values.image -}}
{{ .Values.image }}
{{- else -}}
{{ .Values.hub }}/{{ .Values.image }}:{{ .Values.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/*
The size of a Kubernetes memory quantity in MiB (whole numbers with an optional binary or
decimal suffix; empty when it has another form, e.g. "1.5Gi" or "1e9").
*/}}
{{- define "meshpilot.mebibytes" -}}
{{- $q := toString . -}}
{{- if regexMatch "^[0-9]+(Ki|Mi|Gi|Ti|k|M|G|T)?$" $q -}}
{{- $n := regexFind "^[0-9]+" $q | int64 -}}
{{- $unit := trimPrefix (toString $n) $q -}}
{{- if eq $unit "Ki" }}{{ div $n 1024 }}
{{- else if eq $unit "Mi" }}{{ $n }}
{{- else if eq $unit "Gi" }}{{ mul $n 1024 }}
{{- else if eq $unit "Ti" }}{{ mul $n 1048576 }}
{{- else if eq $unit "k" }}{{ div (mul $n 1000) 1048576 }}
{{- else if eq $unit "M" }}{{ div (mul $n 1000000) 1048576 }}
{{- else if eq $unit "G" }}{{ div (mul $n 1000000000) 1048576 }}
{{- else if eq $unit "T" }}{{ div (mul $n 1000000000000) 1048576 }}
{{- else }}{{ div $n 1048576 }}
{{- end -}}
{{- end -}}
{{- end }}

{{/*
JAVA_TOOL_OPTIONS for the discovery container. With a memory limit the JVM reads the
container's cgroup limit and MaxRAMPercentage takes its share. With only a request the JVM
would size its heap from the node's memory, so the heap is set from the request instead.
*/}}
{{- define "meshpilot.jvmOptions" -}}
{{- $pct := .Values.jvm.maxRAMPercentage | default 75 | int -}}
{{- $limit := ((.Values.resources).limits).memory -}}
{{- $request := ((.Values.resources).requests).memory -}}
{{- $requestMiB := "" -}}
{{- if and (not $limit) $request -}}
{{- $requestMiB = include "meshpilot.mebibytes" $request -}}
{{- end -}}
{{- if $requestMiB -}}
-Xmx{{ div (mul ($requestMiB | int64) $pct) 100 }}m -XX:+ExitOnOutOfMemoryError
{{- else -}}
-XX:MaxRAMPercentage={{ $pct }}.0 -XX:+ExitOnOutOfMemoryError
{{- end -}}
{{- end }}

{{/*
istiod's values MeshPilot does not act on, with the value that means "not used": one line per
key set to anything else. Shown by NOTES.txt (helm install/upgrade) and, as comments, by
templates/unsupported-values.yaml (helm template).
*/}}
{{- define "meshpilot.unsupportedValues" -}}
{{- $values := .Values | toYaml | fromYaml -}}
{{- $unsupported := dict
  "istiodRemote.enabled" false
  "istiodRemote.injectionURL" ""
  "profile" ""
  "compatibilityVersion" ""
  "platform" ""
  "variant" ""
  "revisionTags" (list)
  "taint.enabled" false
  "jwksResolverExtraRootCA" ""
  "trustedZtunnelNamespace" ""
  "experimental.stableValidationPolicy" false
  "telemetry.v2.stackdriver.enabled" false
  "base.validationURL" ""
  "base.validationCABundle" ""
  "istiodRemote.injectionCABundle" ""
  "global.remotePilotAddress" ""
  "global.externalIstiod" false
  "global.configCluster" false
  "global.operatorManageWebhooks" false
  "global.resourceScope" "all"
  "global.networkPolicy.enabled" false
  "global.platform" ""
  "istiodRemote.enabledLocalInjectorIstiod" false
  "istiodRemote.injectionPath" "/inject"
  "ownerName" ""
  "base.enableIstioConfigCRDs" true
  "taint.namespace" ""
  "taint.name" "cni.istio.io/not-ready"
  "trustedZtunnelName" ""
  "gatewayClasses" (dict)
  "global.proxy.tracer" "none"
-}}
{{- range $path := keys $unsupported | sortAlpha }}
{{- $value := $values }}
{{- $found := true }}
{{- range splitList "." $path }}
{{- if and $found (kindIs "map" $value) (hasKey $value .) }}{{ $value = index $value . }}{{ else }}{{ $found = false }}{{ end }}
{{- end }}
{{- if and $found (ne (toJson $value) (toJson (index $unsupported $path))) }}
{{ $path }}={{ toJson $value }}
{{- end }}
{{- end }}
{{- end }}

{{/*
istiod values MeshPilot applies only in part: "path" (list default why), printed as path=value: why
when set to anything but istiod's default.
*/}}
{{- define "meshpilot.partialValues" -}}
{{- $values := .Values | toYaml | fromYaml -}}
{{- $partial := dict
  "global.trustBundleName" (list "" "injected proxies read their root from this ConfigMap, but MeshPilot publishes it only as istio-ca-root-cert (istiod's PILOT_CA_CERT_CONFIGMAP is not supported): create that ConfigMap yourself")
-}}
{{- range $path := keys $partial | sortAlpha }}
{{- $value := $values }}
{{- $found := true }}
{{- range splitList "." $path }}
{{- if and $found (kindIs "map" $value) (hasKey $value .) }}{{ $value = index $value . }}{{ else }}{{ $found = false }}{{ end }}
{{- end }}
{{- $entry := index $partial $path }}
{{- if and $found (ne (toJson $value) (toJson (first $entry))) }}
{{ $path }}={{ toJson $value }}: {{ last $entry }}
{{- end }}
{{- end }}
{{- end }}

{{/* One webhook of the MutatingWebhookConfiguration, without its selectors (istiod's "core"). */}}
{{- define "meshpilot.injectionWebhook" -}}
- name: {{ .prefix }}sidecar-injector.istio.io
  clientConfig:
    service:
      name: {{ .service }}
      namespace: {{ .namespace | quote }}
      path: /inject
      port: 443
  sideEffects: None
  rules:
    - operations: ["CREATE"]
      apiGroups: [""]
      apiVersions: ["v1"]
      resources: ["pods"]
  # as istiod's chart: the webhook controller patches the caBundle in once MeshPilot serves
  failurePolicy: Fail
  reinvocationPolicy: {{ .reinvocationPolicy | quote }}
  admissionReviewVersions: ["v1"]
{{- end }}

{{/* One webhook of the ValidatingWebhookConfiguration, without its object selector. */}}
{{- define "meshpilot.validationWebhook" -}}
- name: {{ .name }}
  clientConfig:
    service:
      name: {{ include "meshpilot.name" . }}
      namespace: {{ .Values.global.istioNamespace | quote }}
      path: /validate
      port: 443
  rules:
    - operations: ["CREATE", "UPDATE"]
      apiGroups: ["security.istio.io", "networking.istio.io", "telemetry.istio.io", "extensions.istio.io"]
      apiVersions: ["*"]
      resources: ["*"]
  {{- if not .Release.IsUpgrade }}
  # open until MeshPilot can serve: its webhook controller (the leader) patches in the caBundle
  # and switches this to Fail, as istiod's does
  failurePolicy: Ignore
  {{- end }}
  sideEffects: None
  admissionReviewVersions: ["v1"]
{{- end }}
