{{/* Names and labels shared by the templates. */}}

{{- define "hpa-lint.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "hpa-lint.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "hpa-lint.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hpa-lint.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "hpa-lint.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "hpa-lint.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "hpa-lint.serviceAccountName" -}}
{{- default (include "hpa-lint.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "hpa-lint.tlsSecretName" -}}
{{- printf "%s-tls" (include "hpa-lint.fullname" .) -}}
{{- end -}}

{{/* The Service's DNS name, which the certificate must name. */}}
{{- define "hpa-lint.serviceHost" -}}
{{- printf "%s.%s.svc" (include "hpa-lint.fullname" .) .Release.Namespace -}}
{{- end -}}

{{/* Namespaces the webhooks skip: kube-system, the release's own, and more from values. */}}
{{- define "hpa-lint.namespaceSelector" -}}
matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values:
      {{- toYaml (concat (list "kube-system" .Release.Namespace) .Values.webhook.excludeNamespaces | uniq) | nindent 6 }}
  {{- with .Values.webhook.namespaceSelectorExpressions }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}
