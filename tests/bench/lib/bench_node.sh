# shellcheck shell=bash disable=SC2154  # $root, log() and die() come from the sourcing script
# Sourced by the koordlet benchmarks: brings up tests/cluster's apiserver and puts a Node object
# there for a node without a kubelet (InternalIP 127.0.0.1, a kubelet port nothing answers on, so
# the koordlet lists its pods from the API server, as it does while a kubelet is down).
#
#   bench_node_up NODE NAMESPACE MAX_PODS
#   bench_node_down WORK_DIR     stops the cluster and removes WORK_DIR (unless KOORD_BENCH_KEEP=1)
#   stop_pid PID                 SIGTERM, up to 15 s, then SIGKILL
# Needs $root, log() and die() from the caller; defines kubectl(), sets $ncpu, $mem_kib,
# $kubelet_port.

bench_node_up() {
  local bench_node=$1 bench_ns=$2 max_pods=$3 p
  "$root/tests/cluster/cluster.sh" up
  set -a
  # shellcheck source=/dev/null
  . "$KOORD_CLUSTER_DIR/env"
  set +a
  kubectl apply -f "$root/deploy/charts/koordinator/files/crds/slo.koordinator.sh_nodeslos.yaml" \
    -f "$root/deploy/charts/koordinator/files/crds/slo.koordinator.sh_nodemetrics.yaml" >/dev/null
  kubectl wait --for condition=established --timeout=60s crd/nodeslos.slo.koordinator.sh \
    crd/nodemetrics.slo.koordinator.sh >/dev/null
  kubectl get namespace "$bench_ns" >/dev/null 2>&1 || kubectl create namespace "$bench_ns" >/dev/null
  # Leftovers of a kept cluster: pods on a node without a kubelet only go when forced.
  kubectl -n "$bench_ns" delete pods --all --force --grace-period=0 >/dev/null 2>&1 || true
  kubectl delete nodeslo "$bench_node" --ignore-not-found >/dev/null
  kubectl delete nodemetric "$bench_node" --ignore-not-found >/dev/null
  kubectl delete node "$bench_node" --ignore-not-found >/dev/null

  ncpu=$(nproc)
  mem_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
  kubelet_port=
  for p in $(seq 20255 20355); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then kubelet_port=$p; break; fi
  done
  [[ -n $kubelet_port ]] || die "no closed port in 20255-20355 for the absent kubelet"
  # A node's status may be given on create.
  kubectl create -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "$bench_node"},
 "status": {"capacity": {"cpu": "$ncpu", "memory": "${mem_kib}Ki", "pods": "$max_pods"},
            "allocatable": {"cpu": "$ncpu", "memory": "${mem_kib}Ki", "pods": "$max_pods"},
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}]}}
JSON
}

kubectl() { "$KOORD_K8S_BIN/kubectl" --kubeconfig "$KOORD_KUBECONFIG" --request-timeout=30s "$@"; }

bench_node_down() {
  if [[ ${KOORD_BENCH_KEEP:-0} != 1 ]]; then
    "$root/tests/cluster/cluster.sh" down || true
    rm -rf "$1"
  else
    log "kept the cluster and $1"
  fi
}

stop_pid() {
  local pid=$1
  if [[ -z $pid ]] || ! kill -0 "$pid" 2>/dev/null; then return 0; fi
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 150); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}
