#!/usr/bin/env bash
# cluster/install-manifests: koord's two install paths checked against the real apiserver
# without installing anything. Renders deploy/charts/koordinator with tests/helm-render (Helm's
# `helm template`, built here from Debian's Go packages) for the default values and for --set
# examples, applies each render with `kubectl apply --dry-run=server`, and checks in what the
# apiserver accepted that each --set changed what it should. Then dry-runs the kustomize install
# (`-k deploy` and `-k deploy/manifests`) and checks that it and the chart's default render are
# the same objects, field for field, but for slo-controller-config (co-location is on in the
# chart, as in Koordinator's chart, and off in the kustomize install, as in Koordinator's
# config/manager). With KOORD_BINARY, also runs each rendered container's command line through
# koord itself: flags, values and the scheduler's configuration must all be accepted.
#
#   install_manifests_test.sh
#
# Environment: KOORD_CLUSTER_ENV (cluster.sh's env file), KOORD_HELM_RENDER_DIR (where
# helm-render is built; default ${TMPDIR:-/tmp}/koord-helm-render), KOORD_BINARY (optional).
# The only writes to the cluster: the namespace koordinator-system when it is missing (kept: the
# real install test applies into it; a dry run cannot create it) and a scratch namespace for the
# installation.namespace example (deleted). Prints "N passed, N failed" and exits 1 on a failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
chart=$root/deploy/charts/koordinator
readonly NS=koordinator-system

log() { printf 'install-manifests: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

[[ -f ${KOORD_CLUSTER_ENV:-} ]] ||
  die "no cluster env file (KOORD_CLUSTER_ENV); run through ctest -L cluster"
env_value() { sed -n "s/^$1=//p" "$KOORD_CLUSTER_ENV"; }
kubeconfig=$(env_value KOORD_KUBECONFIG)
k8s_bin=$(env_value KOORD_K8S_BIN)
[[ -f $kubeconfig && -x $k8s_bin/kubectl ]] || die "the env file names no kubeconfig or kubectl"
kubectl_() { "$k8s_bin/kubectl" --kubeconfig "$kubeconfig" --request-timeout=60s "$@"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/koord-install-manifests.XXXXXX")
scratch_ns=koord-install-manifests-$$
cleanup() {
  kubectl_ delete namespace "$scratch_ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
ok() {
  passed=$((passed + 1))
  log "ok - $1"
}
not_ok() {
  failed=$((failed + 1))
  log "not ok - $1"
}
# expect DESCRIPTION COMMAND...: the command's success is the check.
expect() {
  local what=$1
  shift
  if "$@"; then ok "$what"; else not_ok "$what"; fi
}
# contains/lacks TEXT NEEDLE: fixed-string checks that print what they looked at on failure.
contains() {
  [[ $1 == *"$2"* ]] && return 0
  log "    wanted '$2' in: ${1:0:600}"
  return 1
}
lacks() {
  [[ $1 != *"$2"* ]] && return 0
  log "    did not want '$2' in: ${1:0:600}"
  return 1
}

# ---- tools ---------------------------------------------------------------------------------
render_dir=${KOORD_HELM_RENDER_DIR:-${TMPDIR:-/tmp}/koord-helm-render}
render_bin=$("$root/tests/helm-render/build.sh" "$render_dir")
render() { "$render_bin" "$chart" "$@"; }

# One line per object the apiserver accepted: kind|namespace|name|field=value|..., the fields
# the checks read (JSON for the structured ones). Both installs go through it, so comparing
# two summaries compares what the apiserver would store.
summary_path='{range .items[*]}{.kind}|{.metadata.namespace}|{.metadata.name}'
summary_path+='|rules={.rules}|subjects={.subjects}|roleRef={.roleRef.name}'
summary_path+='|hostNetwork={.spec.template.spec.hostNetwork}'
summary_path+='|dnsPolicy={.spec.template.spec.dnsPolicy}'
summary_path+='|hostPID={.spec.template.spec.hostPID}|sa={.spec.template.spec.serviceAccountName}'
summary_path+='|podSecurity={.spec.template.spec.securityContext}'
summary_path+='|security={.spec.template.spec.containers[*].securityContext}'
summary_path+='|pullSecrets={.spec.template.spec.imagePullSecrets}'
summary_path+='|image={.spec.template.spec.containers[*].image}'
summary_path+='|pull={.spec.template.spec.containers[*].imagePullPolicy}'
summary_path+='|command={.spec.template.spec.containers[*].command}'
summary_path+='|args={.spec.template.spec.containers[*].args}'
summary_path+='|env={.spec.template.spec.containers[*].env}'
summary_path+='|mounts={.spec.template.spec.containers[*].volumeMounts}'
summary_path+='|volumes={.spec.template.spec.volumes}|ports={.spec.ports}'
summary_path+='|webhooks={.webhooks}|data={.data}'
summary_path+='|podSelector={.spec.podSelector}|ingress={.spec.ingress}{"\n"}{end}'

# dry_run OUT KUBECTL-APPLY-ARGS...: server-side dry run; the summary goes to OUT, sorted.
dry_run() {
  local out=$1
  shift
  if ! kubectl_ apply --dry-run=server -o jsonpath="$summary_path" "$@" \
    >"$out.raw" 2>"$out.err"; then
    cat "$out.err" >&2
    return 1
  fi
  sort "$out.raw" >"$out"
}

# The number of objects in a render: its "---" separators.
objects_in() { grep -c '^---$' "$1" || true; }
line_of() { grep "^$1|$2|$3|" "$4" || true; } # kind namespace name summary

# render_and_apply NAME --set ...: renders to $work/NAME.yaml, dry-runs it to $work/NAME.sum,
# and checks the apiserver took every object.
render_and_apply() {
  local name=$1
  shift
  local yaml=$work/$name.yaml sum=$work/$name.sum
  if ! render "$@" >"$yaml"; then
    not_ok "$name: renders"
    return 1
  fi
  if ! dry_run "$sum" -f "$yaml"; then
    not_ok "$name: the apiserver accepts the render (server dry run)"
    return 1
  fi
  local want got
  want=$(objects_in "$yaml")
  got=$(wc -l <"$sum")
  expect "$name: all $want objects accepted by the apiserver" test "$want" -eq "$got"
}

# ---- the namespaces the dry runs need -------------------------------------------------------
# A dry run creates nothing, so objects in a namespace that does not exist yet are refused. A
# namespace being deleted (the install test removes koordinator-system) is waited out first.
ensure_namespace() {
  local ns=$1 t0=$SECONDS phase
  while ((SECONDS - t0 < 180)); do
    phase=$(kubectl_ get namespace "$ns" -o jsonpath='{.status.phase}' 2>/dev/null || true)
    [[ $phase == Active ]] && return 0
    if [[ -z $phase ]]; then
      kubectl_ create namespace "$ns" >/dev/null 2>&1 || true
    fi
    sleep 2
  done
  die "namespace $ns is not Active (last phase '$phase')"
}
ensure_namespace "$NS"
ensure_namespace "$scratch_ns"

# ---- 1. the default values ------------------------------------------------------------------
mutating_of() {
  line_of MutatingWebhookConfiguration '' koordinator-mutating-webhook-configuration "$1"
}
validating_of() {
  line_of ValidatingWebhookConfiguration '' koordinator-validating-webhook-configuration "$1"
}
manager_of() { line_of Deployment "${2:-$NS}" koord-manager "$1"; }

if render_and_apply default; then
  sum=$work/default.sum
  mutating=$(mutating_of "$sum")
  validating=$(validating_of "$sum")
  manager=$(manager_of "$sum")
  scheduler=$(line_of Deployment "$NS" koord-scheduler "$sum")
  koordlet=$(line_of DaemonSet "$NS" koordlet "$sum")
  default_webhooks() {
    contains "$mutating" '"name":"mpod-create.koordinator.sh"' &&
      contains "$mutating" '"name":"mpod-update.koordinator.sh"' &&
      contains "$validating" '"name":"vpod.koordinator.sh"' && lacks "$validating" vconfigmap &&
      lacks "$validating" vreservation &&
      contains "$validating" '"name":"vnode-writes.koordinator.sh"' &&
      contains "$validating" '"path":"/validate-node-writes"' &&
      contains "$mutating" '"name":"melasticquota.koordinator.sh"' &&
      contains "$validating" '"name":"velasticquota.koordinator.sh"'
  }
  expect "default: webhooks mpod-create, mpod-update, vpod, vnode-writes and the ElasticQuota pair, no vconfigmap or vreservation (gates off)" \
    default_webhooks
  # Koordinator's chart renders every webhook it lists with Ignore by default.
  default_policy() {
    contains "$mutating$validating" '"failurePolicy":"Ignore"' &&
      lacks "$mutating$validating" '"failurePolicy":"Fail"' &&
      contains "$mutating$validating" '"timeoutSeconds":10' &&
      lacks "$mutating$validating" '"timeoutSeconds":30'
  }
  expect "default: pod and ElasticQuota webhooks Ignore failures, 10 s timeout" \
    default_policy
  expect "default: webhooks call koordinator-webhook-service in $NS" \
    contains "$mutating" \
    "\"service\":{\"name\":\"koordinator-webhook-service\",\"namespace\":\"$NS\""
  expect "default: the manager gets no --feature-gates (koord refuses an empty one)" \
    lacks "$manager" --feature-gates
  expect "default: the manager is not on the host network" \
    contains "$manager" '|hostNetwork=|dnsPolicy=ClusterFirst|'
  expect "default: the scheduler gets the gates for Kubernetes before 1.22" \
    contains "$scheduler" \
    '"--feature-gates=DisableCSIStorageCapacityInformer=true,CompatiblePodDisruptionBudget=true"'
  default_images() {
    local l
    for l in "$manager" "$scheduler" "$koordlet"; do
      contains "$l" '|image=koord.local/koord:dev|pull=IfNotPresent|' || return 1
    done
  }
  expect "default: every role runs koord.local/koord:dev, IfNotPresent" default_images
  default_koordlet() {
    contains "$koordlet" '|hostNetwork=true|' && contains "$koordlet" '|hostPID=|' &&
      contains "$koordlet" '"fieldPath":"spec.nodeName"'
  }
  expect "default: the koordlet on the host's network (not its PIDs), NODE_NAME from the pod" \
    default_koordlet
  expect "default: the thirteen CRDs of Koordinator 1.8" \
    test "$(grep -c '^CustomResourceDefinition|' "$sum")" -eq 13
  no_monitor() { ! grep -q '^kind: ServiceMonitor$' "$work/default.yaml"; }
  expect "default: no koordlet ServiceMonitor" no_monitor
  no_network_policy() { ! grep -q '^kind: NetworkPolicy$' "$work/default.yaml"; }
  expect "default: no webhook NetworkPolicy (manager.webhook.networkPolicy.enabled=false)" \
    no_network_policy
fi

# ---- 1a. the chart stands alone -------------------------------------------------------------
# Helm packages and installs a chart folder by itself: nothing in it may point outside it.
no_symlinks() {
  local links
  links=$(find "$chart" -type l)
  [[ -z $links ]] && return 0
  log "    symbolic links in the chart: $links"
  return 1
}
expect "the chart holds no symbolic links (its CRDs and PriorityClasses are its own files)" \
  no_symlinks
copy_renders_alike() {
  mkdir -p "$work/alone" && cp -R "$chart" "$work/alone/" &&
    "$render_bin" "$work/alone/koordinator" >"$work/alone.yaml" &&
    "$render_bin" "$chart" >"$work/in-tree.yaml" &&
    diff -q "$work/alone.yaml" "$work/in-tree.yaml" >/dev/null &&
    test "$(grep -c '^kind: CustomResourceDefinition$' "$work/alone.yaml")" -eq 13 &&
    test "$(grep -c '^kind: PriorityClass$' "$work/alone.yaml")" -eq 4
}
expect "a copy of the chart folder alone renders the same, all 13 CRDs and 4 PriorityClasses in it" \
  copy_renders_alike

# ---- 1b. least privilege: RBAC and pod security (docs/install.md, "What each role may do") ---
# rbac_rows SUMMARY: one row per (rule, apiGroup, resource, verb) of every ClusterRole and Role:
# "Kind/name group resource verb named|-" (group "core" for ""; "named" when the rule has
# resourceNames). Rules hold arrays but no objects, so "},{" separates them.
rbac_rows() {
  local line who r named g res v
  grep -E '^(ClusterRole|Role)\|' "$1" | while IFS= read -r line; do
    set -f # a '*' in a rule is a word to report, not a glob (this loop is a subshell)
    who=$(cut -d'|' -f1,3 <<<"$line" | tr '|' /)
    sed -n 's/.*|rules=\[\(.*\)\]|subjects=.*/\1/p' <<<"$line" | sed 's/},{/}\n{/g' |
      while IFS= read -r r; do
        named=-
        [[ $r == *'"resourceNames"'* ]] && named=named
        list_of() { grep -o "\"$1\":\[[^]]*\]" <<<"$r" | sed 's/^[^[]*\[//; s/\]$//; s/""/core/g; s/[",]/ /g'; }
        for g in $(list_of apiGroups); do
          for res in $(list_of resources); do
            for v in $(list_of verbs); do printf '%s %s %s %s %s\n' "$who" "$g" "$res" "$v" "$named"; done
          done
        done
      done
  done
}
least_privilege() { # SUMMARY LABEL
  local sum=$1 what=$2 rows
  rows=$(rbac_rows "$sum")
  expect "$what: RBAC rows read from the roles" test "$(wc -l <<<"$rows")" -gt 30
  no_wildcards() { ! grep -F -e ' * ' -e '/*' <<<"$rows" | grep .; }
  expect "$what: no ClusterRole or Role grants '*' groups, resources or verbs" no_wildcards
  expect "$what: nodes/proxy only for the koordlet, get only" \
    test "$(grep ' nodes/proxy ' <<<"$rows" || true)" = "ClusterRole/koordlet-role core nodes/proxy get -"
  no_cluster_secrets() { ! grep -E '^ClusterRole/.* core secrets ' <<<"$rows" | grep .; }
  expect "$what: Secrets in no ClusterRole" no_cluster_secrets
  no_cluster_configmaps() { ! grep -E '^ClusterRole/.* core configmaps ' <<<"$rows" | grep .; }
  expect "$what: ConfigMaps in no ClusterRole" no_cluster_configmaps
  # Secrets, Leases and webhook configurations: every verb but create names its objects.
  unnamed=$(grep -E ' (secrets|leases|mutatingwebhookconfigurations|validatingwebhookconfigurations) ' \
    <<<"$rows" | grep -v -e ' create -$' -e ' named$' || true)
  expect "$what: Secrets, Leases and webhook configurations read and written by name only" \
    test -z "$unnamed"
  [[ -z $unnamed ]] || log "    unnamed: $unnamed"
  # The koordlet writes what its own node reports and nothing more.
  koordlet_writes=$(grep '^ClusterRole/koordlet-role ' <<<"$rows" |
    grep -v -E ' (get|list|watch) (-|named)$' | cut -d' ' -f2-4 | sort | tr '\n' ';')
  expect "$what: the koordlet writes only Node labels, evictions, Events, NodeMetric status, Devices, NodeResourceTopologies" \
    test "$koordlet_writes" = "core events create;core events patch;core nodes patch;core pods/eviction create;scheduling.koordinator.sh devices create;scheduling.koordinator.sh devices patch;slo.koordinator.sh nodemetrics/status patch;topology.node.k8s.io noderesourcetopologies create;topology.node.k8s.io noderesourcetopologies patch;"
  [[ $koordlet_writes == *"nodemetrics/status patch;" ]] || log "    koordlet writes: $koordlet_writes"
  no_koordlet_role() { ! grep -E '^Role/.* ' <<<"$rows" | grep -q koordlet; }
  expect "$what: the koordlet has no namespaced Role (no ConfigMap or Secret writes)" no_koordlet_role
  # Every Deployment (manager, scheduler, descheduler) runs as non-root with a
  # read-only root filesystem, no privilege escalation, no capabilities and RuntimeDefault.
  local line name pod ctr bad=""
  while IFS= read -r line; do
    name=$(cut -d'|' -f3 <<<"$line")
    pod=${line#*|podSecurity=}
    pod=${pod%%|*}
    ctr=${line#*|security=}
    ctr=${ctr%%|*}
    for want in '"runAsNonRoot":true' '"runAsUser":65534' '"runAsGroup":65534' \
      '"type":"RuntimeDefault"'; do
      [[ $pod == *"$want"* ]] || bad+=" $name:pod:$want"
    done
    for want in '"readOnlyRootFilesystem":true' '"allowPrivilegeEscalation":false' \
      '"drop":["ALL"]'; do
      [[ $ctr == *"$want"* ]] || bad+=" $name:container:$want"
    done
  done < <(grep '^Deployment|' "$sum")
  expect "$what: Deployments non-root, read-only root, no escalation, no capabilities, RuntimeDefault" \
    test -z "$bad"
  [[ -z $bad ]] || log "    missing:$bad"
  local kl
  kl=$(line_of DaemonSet "$NS" koordlet "$sum")
  koordlet_unprivileged() {
    contains "$kl" '"privileged":false' && lacks "$kl" '"privileged":true' &&
      contains "$kl" '"drop":["ALL"]' && lacks "$kl" '"add":' &&
      contains "$kl" '"readOnlyRootFilesystem":true' &&
      contains "$kl" '"allowPrivilegeEscalation":false' && contains "$kl" '"type":"RuntimeDefault"'
  }
  expect "$what: the koordlet is not privileged and keeps no capability" koordlet_unprivileged
}
[[ -s $work/default.sum ]] && least_privilege "$work/default.sum" "default"

# ---- 2. featureGates: the webhook configurations follow the manager's gates ----------------
if render_and_apply gates-mutating-off --set featureGates=PodMutatingWebhook=false; then
  sum=$work/gates-mutating-off.sum
  expect "PodMutatingWebhook=false: the manager gets the gate" \
    contains "$(manager_of "$sum")" '"--feature-gates=PodMutatingWebhook=false"'
  expect "PodMutatingWebhook=false: no pod mutating webhooks" \
    lacks "$(mutating_of "$sum")" mpod-
  expect "PodMutatingWebhook=false: vpod stays" \
    contains "$(validating_of "$sum")" vpod.koordinator.sh
fi
if render_and_apply gates-validating \
  --set 'featureGates=PodValidatingWebhook=false\,ConfigMapValidatingWebhook=true'; then
  sum=$work/gates-validating.sum
  expect "PodValidatingWebhook=false,ConfigMapValidatingWebhook=true: both reach the manager" \
    contains "$(manager_of "$sum")" \
    '"--feature-gates=PodValidatingWebhook=false,ConfigMapValidatingWebhook=true"'
  validating=$(validating_of "$sum")
  configmap_only() {
    lacks "$validating" vpod. && contains "$validating" '"name":"vconfigmap.koordinator.sh"' &&
      contains "$validating" '"failurePolicy":"Fail"'
  }
  expect "PodValidatingWebhook=false: no vpod; ConfigMapValidatingWebhook=true: vconfigmap, Fail" \
    configmap_only
  expect "PodValidatingWebhook=false: the mutating webhooks stay" \
    contains "$(mutating_of "$sum")" mpod-create
fi
if render_and_apply gates-reservation --set featureGates=ReservationMutatingWebhook=true \
  --set webhookConfiguration.failurePolicy.reservations=Fail; then
  sum=$work/gates-reservation.sum
  expect "ReservationMutatingWebhook=true: the manager gets the gate" \
    contains "$(manager_of "$sum")" '"--feature-gates=ReservationMutatingWebhook=true"'
  validating=$(validating_of "$sum")
  reservation_webhook() {
    contains "$validating" '"name":"vreservation.koordinator.sh"' &&
      contains "$validating" '"path":"/validate-reservation"' &&
      contains "$validating" '"resources":["reservations"]' &&
      contains "$validating" '"failurePolicy":"Fail"' && contains "$validating" vpod.
  }
  expect "ReservationMutatingWebhook=true: vreservation, failurePolicy.reservations=Fail; vpod stays" \
    reservation_webhook
fi

# ---- 3. manager.hostNetwork ----------------------------------------------------------------
if render_and_apply host-network --set manager.hostNetwork=true; then
  sum=$work/host-network.sum
  expect "manager.hostNetwork=true: the manager on the host network, cluster DNS kept" \
    contains "$(manager_of "$sum")" '|hostNetwork=true|dnsPolicy=ClusterFirstWithHostNet|'
  expect "manager.hostNetwork=true: the scheduler is not" \
    contains "$(line_of Deployment "$NS" koord-scheduler "$sum")" '|hostNetwork=|'
fi

# Koordinator v1.8's scheduler values: job preemption hands postFilter to Coscheduling, and
# deviceShare null renders no DeviceShare args (the default renders Koordinator's unsupported
# models, checked by koord's own run of the default render below).
if render_and_apply job-preemption --set scheduler.enableJobPreemption=true \
  --set scheduler.deviceShare=null; then
  yaml=$work/job-preemption.yaml
  expect "scheduler.enableJobPreemption=true: CoschedulingArgs enablePreemption" \
    grep -q 'enablePreemption: true' "$yaml"
  expect "scheduler.enableJobPreemption=true: no DefaultPreemption at postFilter" \
    bash -c '! grep -q "name: DefaultPreemption" "$1"' _ "$yaml"
  expect "scheduler.deviceShare=null: no DeviceShareArgs" \
    bash -c '! grep -q "kind: DeviceShareArgs" "$1"' _ "$yaml"
fi
expect "default: DefaultPreemption at postFilter and Koordinator's unsupported GPU models" \
  bash -c 'grep -q "name: DefaultPreemption" "$1" && grep -q "model: Ascend-310P3-300I-DUO" "$1"' \
  _ "$work/default.yaml"

# koord's dashboards: off by default, four labelled ConfigMaps when on; and the GPU
# shared-resource templates ConfigMap in the chart's namespace, the scheduler's args naming it.
expect "default: no dashboards, the GPU shared-resource templates ConfigMap" \
  bash -c '! grep -q "^ConfigMap|$2|koord-scheduling-dashboard|" "$1" &&
    grep -q "^ConfigMap|$2|gpu-shared-resource-templates|" "$1"' _ "$work/default.sum" "$NS"
expect "default: DeviceShareArgs read the templates from the chart's namespace" \
  grep -q "configMapNamespace: $NS" "$work/default.yaml"
if render_and_apply dashboards --set dashboards.enabled=true; then
  dashboards() {
    local d
    for d in scheduling descheduling colocation koordlet; do
      grep -q "^ConfigMap|$NS|koord-$d-dashboard|" "$work/dashboards.sum" || return 1
    done
    [[ $(grep -c '^    grafana_dashboard: "1"$' "$work/dashboards.yaml") -eq 4 ]]
  }
  expect "dashboards.enabled=true: four dashboard ConfigMaps labelled for Grafana's sidecar" \
    dashboards
fi

# ---- 4. crds.managed and the per-CRD switches ------------------------------------------------
crds_of() { grep '^CustomResourceDefinition|' "$1" | cut -d'|' -f3 | tr '\n' ' ' || true; }
if render_and_apply crds-some \
  --set crds.managed=true,crds.nodemetrics=false,crds.devices=false; then
  expect "crds.nodemetrics=false,crds.devices=false: clustercolocationprofiles, clusternetworktopologies, elasticquotaprofiles, elasticquotas, noderesourcetopologies, nodeslos, podgroups, podmigrationjobs, recommendations, reservations, scheduleexplanations" \
    test "$(crds_of "$work/crds-some.sum")" = \
    "clustercolocationprofiles.config.koordinator.sh clusternetworktopologies.scheduling.koordinator.sh elasticquotaprofiles.quota.koordinator.sh elasticquotas.scheduling.sigs.k8s.io noderesourcetopologies.topology.node.k8s.io nodeslos.slo.koordinator.sh podgroups.scheduling.sigs.k8s.io podmigrationjobs.scheduling.koordinator.sh recommendations.analysis.koordinator.sh reservations.scheduling.koordinator.sh scheduleexplanations.scheduling.koordinator.sh "
fi
if render_and_apply crds-none --set crds.managed=false; then
  expect "crds.managed=false: no CRDs" test -z "$(crds_of "$work/crds-none.sum")"
fi

# ---- 5. the rest of the values the checks above do not reach ----------------------------------
if render_and_apply webhook-policy --set webhookConfiguration.failurePolicy.pods=Fail \
  --set webhookConfiguration.failurePolicy.elasticquotas=Fail \
  --set webhookConfiguration.timeoutSeconds=5; then
  hooks=$(grep 'WebhookConfiguration|' "$work/webhook-policy.sum" || true)
  # vnode-writes keeps Ignore whatever the pods' policy: kubelets' node updates go through it.
  fail_fast() {
    test "$(grep -o '"failurePolicy":"Fail"' <<<"$hooks" | wc -l)" -eq 5 &&
      test "$(grep -o '"timeoutSeconds":5' <<<"$hooks" | wc -l)" -eq 6 &&
      test "$(grep -o '"failurePolicy":"Ignore"' <<<"$hooks" | wc -l)" -eq 1
  }
  expect "webhookConfiguration: Fail and 5 s on the three pod webhooks and the ElasticQuota pair" \
    fail_fast
fi
if render_and_apply namespace \
  --set installation.namespace="$scratch_ns",installation.createNamespace=false \
  --set imageRepositoryHost=registry.example,manager.image.tag=v9 \
  --set 'imagePullSecrets[0].name=pull-secret'; then
  sum=$work/namespace.sum
  expect "installation.namespace: every namespaced object in $scratch_ns" \
    test -z "$(cut -d'|' -f2 "$sum" | grep -v -x -e '' -e "$scratch_ns" || true)"
  expect "installation.createNamespace=false: no Namespace object" \
    test -z "$(grep '^Namespace|' "$sum" || true)"
  manager=$(manager_of "$sum" "$scratch_ns")
  namespaces_follow() {
    contains "$manager" "\"--leader-election-namespace=$scratch_ns\"" &&
      contains "$manager" "\"--config-namespace=$scratch_ns\"" &&
      contains "$(mutating_of "$sum")" "\"namespace\":\"$scratch_ns\"" &&
      contains "$(line_of ConfigMap "$scratch_ns" koord-scheduler-config "$sum")" \
        "resourceNamespace: $scratch_ns" &&
      contains "$(line_of ConfigMap "$scratch_ns" koord-descheduler-config "$sum")" \
        "resourceNamespace: $scratch_ns" &&
      test "$(grep 'RoleBinding|' "$sum" | grep -c "\"namespace\":\"$scratch_ns\"")" -eq 7
  }
  expect "installation.namespace: leases, config, webhooks' Service and bindings follow" \
    namespaces_follow
  image_values() {
    contains "$manager" '|image=registry.example/koord:v9|' &&
      contains "$manager" '|pullSecrets=[{"name":"pull-secret"}]|' &&
      contains "$(line_of DaemonSet "$scratch_ns" koordlet "$sum")" \
        '|image=registry.example/koord:dev|'
  }
  expect "imageRepositoryHost, manager.image.tag, imagePullSecrets" image_values
fi
# koordlet.hostDirs: the koordlet's host directories follow Koordinator's keys; the keys koord
# has no use for (and installation.roleListGroups) render without error and change nothing.
if render --set koordlet.hostDirs.predictionCheckpointDir=/data/pred \
  --set koordlet.hostDirs.koordletTSDBDir=/data/tsdb/,koordlet.hostDirs.kubeletLibDir=/data/kubelet \
  --set koordlet.hostDirs.kubeletConfigDir=/data/etc,koordlet.hostDirs.podResourcesProxyPath=/data/pr \
  --set 'installation.roleListGroups[0]=apps' >"$work/host-dirs.yaml"; then
  host_dirs() {
    grep -q '^            path: /data/pred/$' "$work/host-dirs.yaml" &&
      grep -q '^            path: /data/tsdb/$' "$work/host-dirs.yaml" &&
      grep -q '^            path: /data/kubelet/pki$' "$work/host-dirs.yaml" &&
      ! grep -q -e '/data/etc' -e '/data/pr$' "$work/host-dirs.yaml"
  }
  expect "koordlet.hostDirs: prediction checkpoints, metric cache and kubelet pki where set" \
    host_dirs
else
  not_ok "koordlet.hostDirs: renders"
fi
if render --set koordlet.enableServiceMonitor=true >"$work/monitor.yaml"; then
  monitor_rendered() {
    grep -q '^kind: ServiceMonitor$' "$work/monitor.yaml" &&
      grep -q '^  name: koordlet-service$' "$work/monitor.yaml"
  }
  expect "koordlet.enableServiceMonitor=true: a koordlet Service and ServiceMonitor" \
    monitor_rendered
  # This cluster has no Prometheus Operator CRD: everything else goes to the apiserver.
  awk 'BEGIN {RS = "---\n"; ORS = ""} NF && !/\nkind: ServiceMonitor\n/ {print "---\n" $0}' \
    "$work/monitor.yaml" >"$work/monitor-rest.yaml"
  monitor_service() {
    dry_run "$work/monitor.sum" -f "$work/monitor-rest.yaml" &&
      grep -q "^Service|$NS|koordlet-service|" "$work/monitor.sum"
  }
  expect "koordlet.enableServiceMonitor=true: its Service is accepted" monitor_service
else
  not_ok "koordlet.enableServiceMonitor=true: renders"
fi
# manager.webhook.networkPolicy: the apiserver's CIDRs and further peers on the webhook port only.
np_values=(--set manager.webhook.networkPolicy.enabled=true
  --set 'manager.webhook.networkPolicy.apiserverCIDRs={192.0.2.0/24}')
if render_and_apply network-policy "${np_values[@]}" \
  --set 'manager.webhook.networkPolicy.from[0].namespaceSelector.matchLabels.team=apiserver'; then
  policy=$(line_of NetworkPolicy "$NS" koord-manager-webhook "$work/network-policy.sum")
  np_peers() {
    contains "$policy" '|podSelector={"matchLabels":{"koord-app":"koord-manager"}}|' &&
      contains "$policy" \
        '"from":[{"ipBlock":{"cidr":"192.0.2.0/24"}},{"namespaceSelector":{"matchLabels":{"team":"apiserver"}}}],"ports":[{"port":9876,"protocol":"TCP"}]' &&
      contains "$policy" '{"ports":[{"port":8080,"protocol":"TCP"},{"port":8000,"protocol":"TCP"}]}'
  }
  expect "manager.webhook.networkPolicy: only the peers on 9876; metrics and health open" np_peers
fi
refuses_np_without_peers() {
  ! render --set manager.webhook.networkPolicy.enabled=true >/dev/null 2>&1
}
expect "manager.webhook.networkPolicy.enabled without peers is refused" refuses_np_without_peers
refuses_empty_namespace() { ! render --set installation.namespace= >/dev/null 2>&1; }
expect "an empty installation.namespace is refused" refuses_empty_namespace

# ---- 6. the kustomize install -----------------------------------------------------------------
expect "kubectl apply --dry-run=server -k deploy" dry_run "$work/kustomize.sum" -k "$root/deploy"
[[ -s $work/kustomize.sum ]] && least_privilege "$work/kustomize.sum" "-k deploy"
manifests_only() {
  dry_run "$work/manifests.sum" -k "$root/deploy/manifests" &&
    test -z "$(grep -e '^CustomResourceDefinition|' -e '^PriorityClass|' "$work/manifests.sum" ||
      true)"
}
expect "kubectl apply --dry-run=server -k deploy/manifests (no CRDs, no PriorityClasses)" \
  manifests_only
# The kustomize install's NetworkPolicy (left out of deploy/kustomization.yaml until its peers are
# edited) is the chart's with the same peers.
# The Namespace rides along only so that kubectl prints a List, which the summary reads.
np_file_matches_chart() {
  dry_run "$work/np-file.sum" -f "$root/deploy/manifests/webhook-network-policy.yaml" \
    -f "$root/deploy/manifests/namespace.yaml" &&
    grep -q '^NetworkPolicy|' "$work/np-file.sum" &&
    render "${np_values[@]}" >"$work/np-chart.yaml" &&
    dry_run "$work/np-chart.sum" -f "$work/np-chart.yaml" &&
    diff <(grep '^NetworkPolicy|' "$work/np-file.sum") <(grep '^NetworkPolicy|' "$work/np-chart.sum")
}
expect "deploy/manifests/webhook-network-policy.yaml: accepted, and the chart's object" \
  np_file_matches_chart
if [[ -s $work/kustomize.sum && -s $work/default.sum ]]; then
  slo="^ConfigMap|$NS|slo-controller-config|"
  if diff <(grep -v "$slo" "$work/kustomize.sum") <(grep -v "$slo" "$work/default.sum") \
    >"$work/diff"; then
    ok "the kustomize install and the chart's defaults are the same objects"
  else
    not_ok "the kustomize install and the chart's defaults are the same objects"
    cut -c1-400 "$work/diff" >&2
  fi
  colocation_switch() {
    contains "$(grep "$slo" "$work/kustomize.sum")" '\"enable\": false' &&
      contains "$(grep "$slo" "$work/default.sum")" '\"enable\": true'
  }
  expect "slo-controller-config: co-location off in the kustomize install, on in the chart" \
    colocation_switch
fi

# ---- 7. koord accepts what the chart renders --------------------------------------------------
# Each container's command line from the default render, run by the koord under test with an
# API server it cannot reach: a refused flag or value exits 2, a refused --config names
# "--config", and getting as far as "no API server configuration" means all was accepted. The
# ports they bind on the way are the install's real ones, so each runs in a network namespace of
# its own where there is one to make; otherwise the flags are checked with --help only.
if [[ -x ${KOORD_BINARY:-} && -s $work/default.yaml ]]; then
  isolate=()
  if unshare -n true 2>/dev/null; then
    isolate=(unshare -n)
  elif unshare -rn true 2>/dev/null; then
    isolate=(unshare -rn)
  fi
  # One dry run for all: a line per container (the command, its arguments, then
  # ENV:NAME=value words, where a fieldRef leaves the value empty, which koord reads as unset),
  # then the scheduler's configuration after a line "--- config" and the descheduler's after a
  # line "--- descheduler config".
  command_path='{range .items[*]}{range .spec.template.spec.containers[*]}{.command[0]}'
  command_path+='{range .args[*]} {@}{end}'
  command_path+='{range .env[*]}{" ENV:"}{.name}={.value}{end}{"\n"}{end}{end}'
  command_path+='--- config{"\n"}{range .items[?(@.metadata.name=="koord-scheduler-config")]}'
  command_path+='{.data.koord-scheduler-config}{end}'
  command_path+='{"\n"}--- descheduler config{"\n"}'
  command_path+='{range .items[?(@.metadata.name=="koord-descheduler-config")]}'
  command_path+='{.data.koord-descheduler-config}{end}'
  kubectl_ apply --dry-run=server -f "$work/default.yaml" -o jsonpath="$command_path" \
    >"$work/commands-and-config" 2>/dev/null || true
  sed '/^--- config$/,$d' "$work/commands-and-config" >"$work/commands"
  sed '1,/^--- config$/d; /^--- descheduler config$/,$d' "$work/commands-and-config" \
    >"$work/scheduler-config.yaml"
  sed '1,/^--- descheduler config$/d' "$work/commands-and-config" >"$work/descheduler-config.yaml"
  expect "five koord containers in the default render" test "$(grep -c . "$work/commands")" -eq 5
  while read -r command rest; do
    role=${command##*/}
    role=${role#koord-}
    args=()
    envs=()
    for word in $rest; do
      case $word in
        ENV:*) envs+=("${word#ENV:}") ;;
        --config=*) args+=("--config=$work/$role-config.yaml") ;;
        *) args+=("$word") ;;
      esac
    done
    if [[ $role == koordlet || $role == device-daemon || ${#isolate[@]} -eq 0 ]]; then
      # The koordlet waits a minute for the node's kubepods cgroup before it reads anything else;
      # the device-daemon talks to no API server and would write its report into this host.
      expect "koord $role accepts the rendered flags (--help)" \
        env -i PATH=/usr/bin:/bin HOME=/nonexistent "$KOORD_BINARY" "$role" "${args[@]}" --help \
        </dev/null >/dev/null
      continue
    fi
    rc=0
    # The descheduler has no --kubeconfig (its configuration's clientConnection names one): it
    # finds none with HOME unset either.
    [[ $role == descheduler ]] || args+=(--kubeconfig=/nonexistent)
    env -i PATH=/usr/bin:/bin HOME=/nonexistent "${envs[@]}" timeout 60 "${isolate[@]}" \
      "$KOORD_BINARY" "$role" "${args[@]}" \
      </dev/null >"$work/$role.out" 2>&1 || rc=$?
    if [[ $rc -ne 2 ]] && grep -q 'no API server configuration' "$work/$role.out" &&
      ! grep -q -e '--config:' "$work/$role.out"; then
      ok "koord $role accepts the rendered command line, env and configuration"
    else
      not_ok "koord $role accepts the rendered command line, env and configuration (exit $rc)"
      tail -n 5 "$work/$role.out" >&2
    fi
  done <"$work/commands"
else
  log "KOORD_BINARY not set: the rendered command lines are not run through koord"
fi

printf '%d passed, %d failed\n' "$passed" "$failed"
((failed == 0))
