#!/usr/bin/env bash
# The README's run command: a real single-node Kubernetes 1.20 on this machine (etcd, apiserver,
# controller-manager, containerd, kubelet from tests/cluster/cluster.sh) with koord running in
# it, and a co-location demo whose outcome it prints.
#
#   scripts/local-up.sh          install what is missing, build koord, start the cluster with
#                                koord runtime-proxy between kubelet and containerd, start koord
#                                manager, scheduler and koordlet, apply CRDs, RBAC,
#                                slo-controller-config and the demo, wait, print the report
#   scripts/local-up.sh report   print the report again
#   scripts/local-up.sh status   what runs
#   scripts/local-up.sh down     stop everything, leaving no process behind (= local-down.sh)
#
# Needs root (kubelet, containerd and the koordlet use the machine's cgroups v1) and one node per
# machine: the CTest node tests cannot run while this cluster is up. Second runs reuse the
# Kubernetes and ccache caches under ~/.cache and restart only koord.
#
# Environment: KOORD_CLUSTER_DIR (run dir: certs, logs, data; default /tmp/koord-local),
# KOORD_LOCAL_BUILD_DIR (default build/), KOORD_LOCAL_WAIT (seconds to wait for the demo, 300).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export KOORD_CLUSTER_DIR=${KOORD_CLUSTER_DIR:-/tmp/koord-local}
readonly DIR=$KOORD_CLUSTER_DIR
readonly CLUSTER=$root/tests/cluster/cluster.sh
readonly BUILD=${KOORD_LOCAL_BUILD_DIR:-$root/build}
readonly KOORD=$BUILD/src/koord
readonly RUN=$DIR/koord # pid files, logs and config of the koord roles started here
readonly NS=koordinator-system
readonly WAIT=${KOORD_LOCAL_WAIT:-300}
# Ports of the koord roles on loopback; the webhook is reached by the apiserver at 127.0.0.1.
readonly MANAGER_HEALTH=18000 MANAGER_METRICS=18080 WEBHOOK_PORT=19876
readonly SCHEDULER_PORT=20251 KOORDLET_PORT=19316

log() { printf 'local-up: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

kubectl_() { "$KOORD_K8S_BIN/kubectl" --kubeconfig "$KOORD_KUBECONFIG" --request-timeout=10s "$@"; }

load_env() {
  [[ -f $DIR/env ]] || return 1
  set -a
  # shellcheck disable=SC1091
  source "$DIR/env"
  set +a
}

# ------------------------------------------------------------------------------------------------
# koord's own daemons: each in its own session so its pid is its process group; the pid file
# holds the start time too, so a recycled pid is never taken for ours.

starttime() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null; }

role_pid() {
  local f=$RUN/$1.pid pid st
  [[ -f $f ]] || return 1
  read -r pid st <"$f"
  [[ -n $pid && $(starttime "$pid") == "$st" ]] || return 1
  echo "$pid"
}

start_role() {
  local name=$1
  shift
  mkdir -p "$RUN"
  setsid "$@" </dev/null >>"$RUN/$name.log" 2>&1 &
  local pid=$!
  echo "$pid $(starttime "$pid")" >"$RUN/$name.pid"
}

stop_role() {
  local name=$1 pid i
  pid=$(role_pid "$name") || {
    rm -f "$RUN/$name.pid"
    return 0
  }
  kill -TERM -- "-$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    role_pid "$name" >/dev/null || break
    sleep 0.1
  done
  if role_pid "$name" >/dev/null; then
    log "$name did not stop in 10 s; killing it"
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$RUN/$name.pid"
}

# Waits up to $2 seconds for "${@:3}" to succeed; says what it waited for when it gives up.
wait_for() {
  local what=$1 timeout=$2 t0=$SECONDS
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS - t0 < timeout)) || return 1
    sleep 2
  done
  log "$what ($((SECONDS - t0)) s)"
}

# GET http://127.0.0.1:$1$2 through bash's /dev/tcp (no curl on a fresh Debian); prints the body,
# fails unless the status is 200.
http_get() {
  local port=$1 path=$2 status
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$path" >&3
  read -r _ status _ <&3 || { exec 3<&-; return 1; }
  sed '1,/^\r$/d' <&3
  exec 3<&-
  [[ $status == 200 ]]
}

show_role_log() {
  log "---- last lines of $RUN/$1.log ----"
  tail -n 30 "$RUN/$1.log" >&2 || true
}

# ------------------------------------------------------------------------------------------------

build_koord() {
  "$root/scripts/install-deps.sh"
  export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/koord-ccache}
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  # The release flags of the benchmarks' build (build-rel), so the two share ccache objects.
  cmake -S "$root" -B "$BUILD" -G Ninja -DKOORD_BUILD_TESTS=OFF -DKOORD_SANITIZE=OFF \
    -DKOORD_WERROR=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" >/dev/null
  ninja -C "$BUILD" koord
}

start_cluster() {
  "$CLUSTER" build
  "$CLUSTER" up
  load_env
  mkdir -p "$DIR/runtime-proxy" "$DIR/hookserver.d"
  # kubelet talks CRI to koord runtime-proxy, which relays to containerd and calls the
  # koordlet's hooks (registered in hookserver.d) before containers start.
  KOORD_CRI_ENDPOINT=unix://$DIR/runtime-proxy/runtimeproxy.sock \
    KOORD_BEFORE_KUBELET="exec $KOORD runtime-proxy -v=2 --koord-runtimeproxy-endpoint=$DIR/runtime-proxy/runtimeproxy.sock --remote-runtime-service-endpoint=\$KOORD_CONTAINERD_SOCK --hook-server-config-dir=$DIR/hookserver.d --skip-hookserver-namespaces=kube-system,koordinator-system" \
    "$CLUSTER" node
  load_env
}

apply_base() {
  kubectl_ apply -f "$root/deploy/charts/koordinator/files/crds" >/dev/null
  kubectl_ apply -f "$root/deploy/charts/koordinator/files/priority-classes.yaml" >/dev/null
  kubectl_ get namespace "$NS" >/dev/null 2>&1 || kubectl_ create namespace "$NS" >/dev/null
  if [[ -f $root/deploy/manifests/rbac.yaml ]]; then
    kubectl_ apply -f "$root/deploy/manifests/rbac.yaml" >/dev/null
  fi
  # The CRDs must be served before objects of their kinds can be created.
  wait_for "CRDs established" 60 kubectl_ wait --for condition=established --timeout=5s \
    crd/clustercolocationprofiles.config.koordinator.sh crd/nodemetrics.slo.koordinator.sh \
    crd/nodeslos.slo.koordinator.sh || die "the CRDs were not established"
  kubectl_ apply -f "$root/scripts/local/slo-controller-config.yaml" >/dev/null
}

start_koord() {
  local role
  # A new build replaces what runs; the cluster's objects stay.
  for role in koordlet scheduler manager; do stop_role "$role"; done
  rm -f "$DIR/hookserver.d/koordlet.json"
  mkdir -p "$RUN/koordlet-run" "$RUN/manager-certs"

  start_role manager env POD_NAMESPACE=$NS WEBHOOK_PORT=$WEBHOOK_PORT WEBHOOK_HOST=127.0.0.1 \
    WEBHOOK_CERT_DIR="$RUN/manager-certs" "$KOORD" manager --kubeconfig="$KOORD_KUBECONFIG" \
    --leader-election-namespace=$NS --config-namespace=$NS \
    --metrics-addr=127.0.0.1:$MANAGER_METRICS --health-probe-addr=127.0.0.1:$MANAGER_HEALTH -v=2

  cat >"$RUN/scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $KOORD_KUBECONFIG
leaderElection:
  leaderElect: true
  resourceName: koord-scheduler
  resourceNamespace: $NS
profiles:
- schedulerName: koord-scheduler
  plugins:
    preFilter: {enabled: [{name: LoadAwareScheduling}]}
    filter: {enabled: [{name: LoadAwareScheduling}]}
    score: {enabled: [{name: LoadAwareScheduling, weight: 1}]}
    reserve: {enabled: [{name: LoadAwareScheduling}]}
EOF
  start_role scheduler "$KOORD" scheduler --config="$RUN/scheduler.yaml" --address=127.0.0.1 \
    --port=$SCHEDULER_PORT --secure-port=0 -v=2

  start_role koordlet env NODE_NAME="$KOORD_NODE_NAME" agent_mode=hostMode "$KOORD" koordlet -kubeconfig="$KOORD_KUBECONFIG" \
    -cgroup-root-dir=/sys/fs/cgroup/ -kubelet-config-file="$KOORD_KUBELET_ROOT_DIR/config.yaml" \
    -addr=127.0.0.1:$KOORDLET_PORT -runtime-hooks-addr="$RUN/koordlet-run/koordlet.sock" \
    -runtime-hooks-host-endpoint="$RUN/koordlet-run/koordlet.sock" \
    -runtime-hooks-config-path="$DIR/hookserver.d" -tsdb-path="$RUN/koordlet-data/metric-data" \
    -prediction-checkpoint-filepath="$RUN/koordlet-data/prediction-checkpoints" -v=2

  wait_for "manager ready" 90 http_get $MANAGER_HEALTH /readyz ||
    { show_role_log manager; die "koord manager is not ready"; }
  # The manager registers its webhooks itself; pods created before they answer would skip the
  # ClusterColocationProfile.
  wait_for "pod webhook registered" 60 kubectl_ get mutatingwebhookconfiguration \
    koordinator-mutating-webhook-configuration ||
    { show_role_log manager; die "the manager registered no pod webhook"; }
  wait_for "scheduler healthy" 60 http_get $SCHEDULER_PORT /healthz ||
    { show_role_log scheduler; die "koord scheduler is not healthy"; }
  wait_for "koordlet hooks registered" 60 test -f "$DIR/hookserver.d/koordlet.json" ||
    { show_role_log koordlet; die "the koordlet did not register its runtime hooks"; }
}

batch_cpu() {
  kubectl_ get node "$KOORD_NODE_NAME" -o jsonpath='{.status.allocatable.kubernetes\.io/batch-cpu}'
}
has_batch_cpu() { [[ $(batch_cpu) =~ ^[1-9] ]]; }
pod_running() {
  [[ $(kubectl_ -n koord-demo get pods -l "app=$1" -o jsonpath='{.items[*].status.phase}') == *Running* ]]
}

run_demo() {
  kubectl_ apply -f "$root/scripts/local/demo.yaml" >/dev/null
  wait_for "batch resources on node $KOORD_NODE_NAME" "$WAIT" has_batch_cpu ||
    log "the node has no batch resources yet (see $RUN/manager.log, $RUN/koordlet.log)"
  wait_for "web (LS) running" "$WAIT" pod_running web || log "the LS web pod is not running"
  wait_for "batch (BE) running" "$WAIT" pod_running batch || log "the BE batch pod is not running"
  # Let the koordlet see the BE pod's CPU use in a suppression round before reporting.
  sleep 5
}

# ------------------------------------------------------------------------------------------------

report() {
  load_env || die "no cluster in $DIR: run $0 first"
  local node=$KOORD_NODE_NAME
  echo
  echo "== koord co-location on node $node =="
  kubectl_ get node "$node" -o jsonpath='{"allocatable:  cpu "}{.status.allocatable.cpu}{", memory "}{.status.allocatable.memory}{"\nbatch:        batch-cpu "}{.status.allocatable.kubernetes\.io/batch-cpu}{" (milli-cores), batch-memory "}{.status.allocatable.kubernetes\.io/batch-memory}{"\n"}'
  kubectl_ get nodemetric "$node" -o jsonpath='{"NodeMetric:   cpu "}{.status.nodeMetric.nodeUsage.resources.cpu}{", memory "}{.status.nodeMetric.nodeUsage.resources.memory}{" in use (reported "}{.status.updateTime}{")\n"}' 2>/dev/null ||
    echo "NodeMetric:   none yet"
  echo
  # The same state as the operator commands show it (docs/cli.md): kubectl koord top nodes.
  "$KOORD" top nodes --kubeconfig "$KOORD_KUBECONFIG" || true
  echo
  kubectl_ -n koord-demo get pods -o custom-columns='POD:.metadata.name,QOS:.metadata.labels.koordinator\.sh/qosClass,PRIORITY-CLASS:.spec.priorityClassName,PRIORITY:.spec.priority,SCHEDULER:.spec.schedulerName,NODE:.spec.nodeName,STATUS:.status.phase,BATCH-CPU:.spec.containers[0].resources.requests.kubernetes\.io/batch-cpu,CPU:.spec.containers[0].resources.requests.cpu'
  echo
  local cores cpus quota
  cores=$(http_get $KOORDLET_PORT /metrics 2>/dev/null |
    awk '/^koordlet_be_suppress_cpu_cores/ {print $2; exit}')
  cpus=$(cat /sys/fs/cgroup/cpuset/kubepods/besteffort/cpuset.cpus 2>/dev/null || echo "?")
  quota=$(cat /sys/fs/cgroup/cpu/kubepods/besteffort/cpu.cfs_quota_us 2>/dev/null || echo "?")
  echo "BE suppression: the koordlet allows BE pods ${cores:-?} cores (threshold 65 % of the node," \
    "cpuset policy): kubepods/besteffort cpuset.cpus=$cpus, cfs_quota_us=$quota"
  echo
  echo "logs: $RUN/*.log and $DIR/*.log; kubectl: $KOORD_K8S_BIN/kubectl --kubeconfig $KOORD_KUBECONFIG"
  echo "stop: scripts/local-down.sh"
}

status() {
  "$CLUSTER" status || true
  local role pid
  for role in manager scheduler koordlet; do
    if pid=$(role_pid "$role"); then echo "koord $role: running (pid $pid)"; else echo "koord $role: stopped"; fi
  done
}

down() {
  local role
  for role in koordlet scheduler manager; do stop_role "$role"; done
  rm -f "$DIR/hookserver.d/koordlet.json"
  if [[ -d $DIR ]]; then "$CLUSTER" down; fi
  log "stopped; nothing of koord, kubelet, containerd, apiserver or etcd from $DIR runs"
}

up() {
  ((EUID == 0)) || die "run as root: kubelet, containerd and the koordlet use the machine's cgroups"
  local t0=$SECONDS
  build_koord
  start_cluster
  apply_base
  start_koord
  run_demo
  report
  log "up in $((SECONDS - t0)) s"
}

case ${1:-up} in
  up) up ;;
  report) report ;;
  status) status ;;
  down) down ;;
  -h | --help | help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' ;;
  *)
    echo "usage: $0 [up|report|status|down]" >&2
    exit 2
    ;;
esac
