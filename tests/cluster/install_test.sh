#!/usr/bin/env bash
# cluster/install: koord installed the operator's way on the real test node, and co-location
# working through it. Builds the image from this tree's koord (scripts/build-image.sh), imports it
# into the node's containerd, applies deploy/ with kustomize (`kubectl apply -k`) through an
# overlay that only adapts it to this loopback cluster (one replica, hostNetwork, the apiserver
# at 127.0.0.1 since there is no kube-proxy, imagePullPolicy Never, the test kubelet's port and
# hook directory), waits for koord-manager, koord-scheduler and the koordlet DaemonSet to be
# Ready, then runs scripts/local/demo.yaml and checks what scripts/local-up.sh shows: batch
# resources on the node, the BE job's pod admitted as BE with batch-cpu, placed by
# koord-scheduler and running, the LS web pod running. Everything it created is removed again.
#
#   install_test.sh KOORD_BINARY SANITIZE
#
# Runs with the cluster and cluster-node fixtures (KOORD_CLUSTER_ENV names the env file). The
# control plane of cluster.sh has no kube-scheduler; a real cluster has one, and koord's own
# Deployments need it, so this test runs kube-scheduler v1.20.2 from the same build.
set -euo pipefail

koord=${1:?usage: install_test.sh KOORD_BINARY SANITIZE}
sanitize=${2:?usage: install_test.sh KOORD_BINARY SANITIZE}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
readonly IMAGE=koord.local/koord:dev
readonly NS=koordinator-system

log() { printf 'install_test: %s\n' "$*" >&2; }
fail() {
  log "FAIL: $*"
  exit 1
}

[[ -f ${KOORD_CLUSTER_ENV:-} ]] || fail "no cluster env file (KOORD_CLUSTER_ENV)"
set -a
# shellcheck disable=SC1090
source "$KOORD_CLUSTER_ENV"
set +a
[[ -n ${KOORD_NODE_NAME:-} ]] || fail "the cluster has no node (cluster/node-up)"
node=$KOORD_NODE_NAME
apiserver_port=${KOORD_APISERVER##*:}

kubectl_() { "$KOORD_K8S_BIN/kubectl" --kubeconfig "$KOORD_KUBECONFIG" --request-timeout=20s "$@"; }
ctr_() { ctr --address "$KOORD_CONTAINERD_SOCK" --namespace k8s.io "$@"; }

work=$KOORD_CLUSTER_DIR/install-test
scheduler_pid=

dump() {
  log "---- what ran ----"
  kubectl_ get pods -A -o wide >&2 || true
  local p
  for p in $(kubectl_ -n "$NS" get pods -o name 2>/dev/null); do
    log "---- $p ----"
    kubectl_ -n "$NS" logs "$p" --tail=400 2>&1 | grep -v ' /healthz \| /readyz ' | tail -n 30 >&2 || true
  done
  kubectl_ -n koord-demo get events --sort-by=.lastTimestamp 2>/dev/null | tail -n 15 >&2 || true
}

cleanup() {
  local rc=$?
  ((rc == 0)) || dump
  kubectl_ delete namespace koord-demo --ignore-not-found --wait=true --timeout=90s >/dev/null 2>&1 || true
  kubectl_ delete clustercolocationprofile colocation-demo --ignore-not-found >/dev/null 2>&1 || true
  # The workloads, RBAC, namespace and webhook configurations; the CRDs and PriorityClasses stay
  # for the tests that follow (they apply them too).
  kubectl_ delete -k "$root/deploy/manifests" --ignore-not-found --wait=true --timeout=120s >/dev/null 2>&1 || true
  kubectl_ delete mutatingwebhookconfiguration koordinator-mutating-webhook-configuration --ignore-not-found >/dev/null 2>&1 || true
  kubectl_ delete validatingwebhookconfiguration koordinator-validating-webhook-configuration --ignore-not-found >/dev/null 2>&1 || true
  # The in-cluster koordlet's registration would send the next tests' hooks to a dead socket.
  rm -f "$KOORD_CLUSTER_DIR/hookserver.d/koordlet.json"
  if [[ -n $scheduler_pid ]]; then
    kill "$scheduler_pid" 2>/dev/null || true
    wait "$scheduler_pid" 2>/dev/null || true
  fi
  ctr_ images rm "docker.io/$IMAGE" "$IMAGE" >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

eventually() { # seconds, command...
  local timeout=$1 t0=$SECONDS
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS - t0 < timeout)) || return 1
    sleep 2
  done
}

rm -rf "$work"
mkdir -p "$work"

# 1. The image, from the koord this tree built (the ASan build in CI: its runtime goes along).
extra=()
[[ $sanitize == ON ]] && extra=(--allow-sanitizer)
"$root/scripts/build-image.sh" --koord "$koord" --tag "$IMAGE" --output "$work/image.tar" \
  "${extra[@]}" >/dev/null
ctr_ images import "$work/image.tar" >/dev/null
ctr_ images ls -q | grep -q "koord.local/koord:dev" || fail "the image is not in the node's containerd"
log "image imported"

# 2. The cluster's default scheduler, for koord's own Deployments.
"$KOORD_K8S_BIN/kube-scheduler" --kubeconfig="$KOORD_KUBECONFIG" --leader-elect=false \
  --port=0 --secure-port=0 >"$work/kube-scheduler.log" 2>&1 &
scheduler_pid=$!

# 3. deploy/ through an overlay for this cluster. kustomize v2.0.3 takes a base from anywhere, so
#    the overlay lives in the run dir and names deploy/ by a relative path.
overlay=$work/overlay
mkdir -p "$overlay"
base=$(realpath --relative-to="$overlay" "$root/deploy")
in_cluster_env='[{"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"}, {"name": "KUBERNETES_SERVICE_PORT", "value": "'$apiserver_port'"}]'
cat >"$overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
bases:
  - $base
patchesJson6902:
  - target: {group: apps, version: v1, kind: Deployment, name: koord-manager, namespace: $NS}
    path: manager.yaml
  - target: {group: apps, version: v1, kind: Deployment, name: koord-scheduler, namespace: $NS}
    path: scheduler.yaml
  - target: {group: apps, version: v1, kind: Deployment, name: koord-descheduler, namespace: $NS}
    path: descheduler.yaml
  - target: {group: apps, version: v1, kind: DaemonSet, name: koordlet, namespace: $NS}
    path: koordlet.yaml
  - target: {group: apps, version: v1, kind: DaemonSet, name: koord-device-daemon, namespace: $NS}
    path: device-daemon.yaml
EOF
# One replica each on this one small node, on the host's network (no CNI), with the apiserver
# where a hostNetwork pod finds it (no kube-proxy for the kubernetes Service), and small requests:
# the node has 2 CPUs.
small='{"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "2Gi"}}'
common="- {op: replace, path: /spec/replicas, value: 1}
- {op: add, path: /spec/template/spec/hostNetwork, value: true}
- {op: add, path: /spec/template/spec/dnsPolicy, value: ClusterFirstWithHostNet}
- {op: replace, path: /spec/template/spec/containers/0/imagePullPolicy, value: Never}
- {op: replace, path: /spec/template/spec/containers/0/resources, value: $small}"
cat >"$overlay/manager.yaml" <<EOF
$common
- {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: KUBERNETES_SERVICE_HOST, value: 127.0.0.1}}
- {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: KUBERNETES_SERVICE_PORT, value: "$apiserver_port"}}
- {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: WEBHOOK_HOST, value: 127.0.0.1}}
EOF
cat >"$overlay/scheduler.yaml" <<EOF
$common
- {op: add, path: /spec/template/spec/containers/0/env, value: $in_cluster_env}
EOF
# The descheduler serves on 10251 as the scheduler does: on the host's network it moves aside.
cat >"$overlay/descheduler.yaml" <<EOF
$common
- {op: add, path: /spec/template/spec/containers/0/env, value: $in_cluster_env}
- {op: replace, path: /spec/template/spec/containers/0/args/1, value: --port=10261}
- {op: replace, path: /spec/template/spec/containers/0/ports/0/containerPort, value: 10261}
EOF
# The koordlet: the hook directory this node's runtime-proxy watches instead of
# /etc/runtime/hookserver.d (the kubelet's secure port and pki/kubelet.crt as installed).
cat >"$overlay/koordlet.yaml" <<EOF
- {op: replace, path: /spec/template/spec/containers/0/imagePullPolicy, value: Never}
- {op: replace, path: /spec/template/spec/containers/0/resources, value: $small}
- {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: KUBERNETES_SERVICE_HOST, value: 127.0.0.1}}
- {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: KUBERNETES_SERVICE_PORT, value: "$apiserver_port"}}
EOF
# Volumes merge by name in a strategic merge patch.
cat >"$overlay/koordlet-hooks.yaml" <<EOF
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: koordlet, namespace: $NS}
spec:
  template:
    spec:
      volumes:
        - name: host-etc-hookserver
          hostPath: {path: "$KOORD_CLUSTER_DIR/hookserver.d", type: DirectoryOrCreate}
EOF
# The device-daemon's report goes into this cluster's directory, not the host's /var/run.
cat >"$overlay/device-daemon.yaml" <<EOF
- {op: replace, path: /spec/template/spec/containers/0/imagePullPolicy, value: Never}
EOF
cat >"$overlay/device-daemon-report.yaml" <<EOF
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: koord-device-daemon, namespace: $NS}
spec:
  template:
    spec:
      volumes:
        - name: device-infos
          hostPath: {path: "$KOORD_CLUSTER_DIR/xpu-device-infos", type: DirectoryOrCreate}
EOF
echo "patchesStrategicMerge: [koordlet-hooks.yaml, device-daemon-report.yaml]" >>"$overlay/kustomization.yaml"
kubectl_ kustomize "$overlay" >"$work/rendered.yaml" || fail "kustomize cannot render deploy/ with the overlay"
grep -q "path: $KOORD_CLUSTER_DIR/hookserver.d" "$work/rendered.yaml" ||
  fail "deploy/'s koordlet DaemonSet has no host-etc-hookserver volume to point at this node's hook directory"

kubectl_ apply -k "$overlay" >"$work/apply.log" 2>&1 || {
  cat "$work/apply.log" >&2
  # The CRDs' kinds are served a moment after the CRDs are created: once more.
  sleep 5
  kubectl_ apply -k "$overlay" >&2 || fail "kubectl apply -k deploy failed"
}
log "deploy/ applied"

# 4. Deployed for real: every koord workload Ready.
kubectl_ -n "$NS" rollout status deployment/koord-manager --timeout=240s >&2 ||
  fail "koord-manager did not become Ready"
kubectl_ -n "$NS" rollout status deployment/koord-scheduler --timeout=180s >&2 ||
  fail "koord-scheduler did not become Ready"
kubectl_ -n "$NS" rollout status deployment/koord-descheduler --timeout=180s >&2 ||
  fail "koord-descheduler did not become Ready"
kubectl_ -n "$NS" rollout status daemonset/koordlet --timeout=180s >&2 ||
  fail "the koordlet DaemonSet did not become Ready"
ready=$(kubectl_ -n "$NS" get daemonset koordlet -o jsonpath='{.status.numberReady}')
[[ $ready == 1 ]] || fail "koordlet DaemonSet: $ready pods ready, want 1"
kubectl_ -n "$NS" rollout status daemonset/koord-device-daemon --timeout=180s >&2 ||
  fail "the koord-device-daemon DaemonSet did not become Ready"
# The report the in-cluster device-daemon wrote: a JSON list (empty on a node without
# accelerators).
eventually 60 test -f "$KOORD_CLUSTER_DIR/xpu-device-infos/ic-device" ||
  fail "the in-cluster device-daemon wrote no report"
[[ $(head -c 1 "$KOORD_CLUSTER_DIR/xpu-device-infos/ic-device") == "[" ]] ||
  fail "the device-daemon's report is no JSON list: $(head -c 200 "$KOORD_CLUSTER_DIR/xpu-device-infos/ic-device")"
eventually 60 test -f "$KOORD_CLUSTER_DIR/hookserver.d/koordlet.json" ||
  fail "the in-cluster koordlet did not register its runtime hooks"
eventually 60 kubectl_ get mutatingwebhookconfiguration koordinator-mutating-webhook-configuration \
  -o jsonpath='{.webhooks[0].clientConfig.caBundle}' ||
  fail "the manager did not publish its webhook CA"
log "koord-manager, koord-scheduler, koord-descheduler and the koordlet are Ready"

# 5. The demo of scripts/local-up.sh, with its slo-controller-config (co-location on).
kubectl_ apply -f "$root/scripts/local/slo-controller-config.yaml" >/dev/null
batch_cpu() { kubectl_ get node "$node" -o jsonpath='{.status.allocatable.kubernetes\.io/batch-cpu}'; }
has_batch_cpu() { [[ $(batch_cpu) =~ ^[1-9] ]]; }
eventually 180 has_batch_cpu ||
  fail "node $node got no batch-cpu (NodeMetric -> manager): $(batch_cpu), NodeMetric $(kubectl_ get nodemetric "$node" -o jsonpath='{.status.nodeMetric.nodeUsage}')"
log "node batch-cpu: $(batch_cpu)"
kubectl_ apply -f "$root/scripts/local/demo.yaml" >/dev/null
running() { [[ $(kubectl_ -n koord-demo get pods -l "app=$1" -o jsonpath='{.items[*].status.phase}') == Running ]]; }
eventually 240 running web || fail "the LS web pod is not running"
eventually 240 running batch || fail "the BE batch pod is not running"

field() { kubectl_ -n koord-demo get pods -l "app=$1" -o jsonpath="{.items[0].$2}"; }
check() { # what, got, want
  [[ $2 == "$3" ]] || fail "$1: got '$2', want '$3'"
  log "ok: $1 = $2"
}
check "batch pod QoS" "$(field batch 'metadata.labels.koordinator\.sh/qosClass')" BE
check "batch pod priority class" "$(field batch spec.priorityClassName)" koord-batch
check "batch pod scheduler" "$(field batch spec.schedulerName)" koord-scheduler
check "batch pod node" "$(field batch spec.nodeName)" "$node"
check "batch pod batch-cpu request" \
  "$(field batch 'spec.containers[0].resources.requests.kubernetes\.io/batch-cpu')" 200
check "batch pod cpu request" "$(field batch 'spec.containers[0].resources.requests.cpu')" ""
check "web pod QoS" "$(field web 'metadata.labels.koordinator\.sh/qosClass')" LS
check "web pod scheduler" "$(field web spec.schedulerName)" koord-scheduler
# Placed by koord-scheduler, not by the kube-scheduler this test runs beside it.
binder=$(kubectl_ -n koord-demo get events --field-selector reason=Scheduled \
  -o jsonpath='{range .items[*]}{.involvedObject.name} {.source.component}{"\n"}{end}' |
  awk '/^batch-/ {print $2; exit}')
check "batch pod bound by" "$binder" koord-scheduler

# 5b. koord's dashboards (the chart's files/dashboards): every metric their expressions select
#     is exported by the roles now running, each dashboard against the roles it shows (a
#     histogram's _bucket, _sum and _count are its family's; a family is there once its # TYPE
#     line is, samples or not).
dashboard_metrics() { # FILE: the metric names its expressions select, one per line
  grep '"expr"' "$1" | grep -oE '[a-zA-Z_:][a-zA-Z0-9_:]*[{]' | tr -d '{' |
    sed -E 's/_(bucket|sum|count)$//' | sort -u
}
scrape() { curl -sf --max-time 5 "http://127.0.0.1:$1/metrics"; }
declare -A dashboard_ports=([scheduling]="10251" [descheduling]="10261"
  [colocation]="8080 9316" [koordlet]="9316")
for d in scheduling descheduling colocation koordlet; do
  exported=""
  for port in ${dashboard_ports[$d]}; do
    exported+=$(scrape "$port") || fail "no /metrics on 127.0.0.1:$port for dashboard koord-$d"
    exported+=$'\n'
  done
  missing=()
  count=0
  while read -r m; do
    count=$((count + 1))
    grep -q "^# TYPE $m " <<<"$exported" || missing+=("$m")
  done < <(dashboard_metrics "$root/deploy/charts/koordinator/files/dashboards/koord-$d.json")
  ((count > 0)) || fail "dashboard koord-$d: no expressions read"
  [[ ${#missing[@]} -eq 0 ]] || fail "dashboard koord-$d reads series no role exports: ${missing[*]}"
  log "ok: the $count metrics dashboard koord-$d reads are exported"
done

# 6. Least privilege, as installed (docs/install.md, "What each role may do"): everything above
#    ran under these rules and security contexts; here what they must not allow.
can_i() { # service-account verb resource[/name] [namespace]; nodes/proxy and pods/eviction are
  # subresources
  local what=("$3")
  [[ $3 == nodes/proxy ]] && what=(nodes --subresource=proxy)
  [[ $3 == pods/eviction ]] && what=(pods --subresource=eviction)
  kubectl_ auth can-i "$2" "${what[@]}" ${4:+-n "$4"} --as="system:serviceaccount:$NS:$1" 2>/dev/null
}
allowed() { can_i "$@" >/dev/null || fail "$1 may not $2 $3 ${4:-}, but needs to"; }
refused() { ! can_i "$@" >/dev/null || fail "$1 may $2 $3 ${4:-}: more than it needs"; }
allowed koord-manager get secrets/koordinator-webhook-certs "$NS"
allowed koord-manager update mutatingwebhookconfigurations/koordinator-mutating-webhook-configuration
refused koord-manager get secrets/anything-else "$NS"
refused koord-manager list secrets "$NS"
# Watched by name, so that a deleted certificate Secret or an overwritten caBundle is put back at
# once; a watch without the name is a watch of every Secret.
allowed koord-manager watch secrets/koordinator-webhook-certs-ca "$NS"
allowed koord-manager watch validatingwebhookconfigurations/koordinator-validating-webhook-configuration
refused koord-manager watch secrets "$NS"
refused koord-manager get secrets/koordinator-webhook-certs kube-system
refused koord-manager update validatingwebhookconfigurations/someone-elses
refused koord-manager get nodes/proxy
refused koord-scheduler get nodes/proxy
refused koord-scheduler get secrets "$NS"
allowed koord-scheduler delete reservations.scheduling.koordinator.sh
# DeviceShare's GPU shared-resource templates: ConfigMaps of its own namespace only.
allowed koord-scheduler watch configmaps "$NS"
refused koord-scheduler list configmaps kube-system
allowed koord-descheduler create pods/eviction "$NS"
refused koord-descheduler delete pods "$NS"
refused koord-descheduler get secrets "$NS"
allowed koord-descheduler create podmigrationjobs.scheduling.koordinator.sh
refused koord-manager update reservations.scheduling.koordinator.sh
allowed koordlet get nodes/proxy
refused koordlet create configmaps "$NS"
refused koordlet update configmaps/slo-controller-config "$NS"
refused koordlet patch nodeslos.slo.koordinator.sh
refused koordlet delete devices.scheduling.koordinator.sh
allowed koordlet patch noderesourcetopologies.topology.node.k8s.io
refused koordlet update noderesourcetopologies.topology.node.k8s.io
refused koordlet delete noderesourcetopologies.topology.node.k8s.io
log "ok: RBAC allows what the roles call and refuses the rest checked"
# The processes on the node: manager and scheduler as nobody, not root.
for comm in koord-manager koord-scheduler koord-descheduler; do
  uids=$(ps -o uid= -C "$comm" | sort -u | tr -d ' ')
  [[ $uids == 65534 ]] || fail "$comm runs as uid '${uids//$'\n'/,}', want 65534 only"
done
log "ok: koord-manager, koord-scheduler and koord-descheduler run as uid 65534"
# The koordlet, unprivileged and without capabilities, wrote every cgroup file it tried.
koordlet_pod=$(kubectl_ -n "$NS" get pods -l koord-app=koordlet -o jsonpath='{.items[0].metadata.name}')
denied=$(kubectl_ -n "$NS" logs "$koordlet_pod" |
  grep -E 'Permission denied|Operation not permitted|Read-only file system' | head -n 5 || true)
[[ -z $denied ]] || fail "the koordlet was refused: $denied"
log "ok: the koordlet met no Permission denied / Operation not permitted / Read-only file system"
log "PASS"
