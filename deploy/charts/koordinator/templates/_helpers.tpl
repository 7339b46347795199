{{/*
The install namespace; every namespaced object, the leases and the webhooks' Service live there.
*/}}
{{- define "koordinator.namespace" -}}
{{- required "installation.namespace must be set" .Values.installation.namespace -}}
{{- end -}}

{{/*
One image serves every role. Called with (list $ .Values.<role>.image); an empty
imageRepositoryHost leaves the host out instead of writing "/koord:dev".
*/}}
{{- define "koordinator.image" -}}
{{- $root := index . 0 -}}
{{- $image := index . 1 -}}
{{- $ref := printf "%s:%s" $image.repository (toString $image.tag) -}}
{{- if $root.Values.imageRepositoryHost -}}
{{- $ref = printf "%s/%s" $root.Values.imageRepositoryHost $ref -}}
{{- end -}}
{{- $ref -}}
{{- end -}}

{{/*
Whether a manager feature gate is on for a --feature-gates string, decided as koord's manager
decides it (src/core/feature_gate.cpp), so that the webhook configurations the chart renders are
the ones the manager serves: the gate's own setting (the last one, Go's bool spellings) wins;
otherwise AllAlpha=true or AllBeta=true for its stage; otherwise its default.
Called with (dict "gates" <string> "name" <gate> "stage" "Alpha"|"Beta" "default" <bool>);
prints "true" or "false".
*/}}
{{- define "koordinator.featureGate" -}}
{{- $own := "" -}}
{{- $all := "" -}}
{{- $allName := printf "All%s" .stage -}}
{{- range $item := splitList "," .gates -}}
{{- $kv := splitList "=" $item -}}
{{- if eq (len $kv) 2 -}}
{{- $key := trim (index $kv 0) -}}
{{- $value := lower (trim (index $kv 1)) -}}
{{- if eq $key $.name -}}{{- $own = $value -}}{{- end -}}
{{- if eq $key $allName -}}{{- $all = $value -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- $true := list "1" "t" "true" -}}
{{- $false := list "0" "f" "false" -}}
{{- if has $own $true -}}true
{{- else if has $own $false -}}false
{{- else if has $all $true -}}true
{{- else -}}{{ .default }}
{{- end -}}
{{- end -}}

{{/*
nodeAffinity, nodeSelector and tolerations of a control-plane Deployment, plus the anti-affinity
that spreads its replicas over nodes. Called with the role's values and its koord-app label,
(list .Values.manager "koord-manager"); indented for a pod spec.
*/}}
{{- define "koordinator.placement" -}}
{{- $values := index . 0 -}}
{{- $app := index . 1 -}}
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              koord-app: {{ $app }}
{{- with $values.nodeAffinity }}
  nodeAffinity:
    {{- toYaml . | nindent 4 }}
{{- end }}
{{- with $values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
