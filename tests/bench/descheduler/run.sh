#!/usr/bin/env bash
# One koord descheduler pass through a real API server: a throwaway cluster (cluster.sh up),
# N API-only nodes with M pods and a NodeMetric each (the driver), then `koord descheduler` with
# LowNodeLoad (dryRun: it evicts nothing, so one run leaves the cluster as it found it) and a
# deschedulingInterval of 0. Prints the time from start to synced caches and to the end of the
# pass, the evictions the pass chose, koord's CPU time and peak RSS.
#
#   run.sh [--nodes 500] [--pods 5000] [--hot-percent 10] [--koord PATH] [--driver PATH]
set -euo pipefail
trap 'printf "descheduler bench: failed at line %s: %s\n" "$LINENO" "$BASH_COMMAND" >&2' ERR

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
die() {
  printf 'descheduler bench: %s\n' "$*" >&2
  exit 1
}

nodes=500
pods=5000
hot=10
koord=
driver=
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --pods) pods=$2; shift 2 ;;
    --hot-percent) hot=$2; shift 2 ;;
    --koord) koord=$2; shift 2 ;;
    --driver) driver=$2; shift 2 ;;
    *) die "unknown argument $1" ;;
  esac
done
for d in "$root/build-rel" "$root/build"; do
  [[ -z $koord && -x $d/src/koord ]] && koord=$d/src/koord
  [[ -z $driver && -x $d/tests/bench/koord_bench_descheduler_api ]] &&
    driver=$d/tests/bench/koord_bench_descheduler_api
done
[[ -x $koord ]] || die "no koord binary (--koord)"
[[ -x $driver ]] || die "no koord_bench_descheduler_api (--driver)"

work=$(mktemp -d /tmp/koord-bench-desched.XXXXXX)
export KOORD_CLUSTER_DIR=$work/cluster
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
  "$root/tests/cluster/cluster.sh" down >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"$root/tests/cluster/cluster.sh" up >/dev/null
set -a
# shellcheck source=/dev/null
. "$KOORD_CLUSTER_DIR/env"
set +a
kubectl() { "$KOORD_K8S_BIN/kubectl" --kubeconfig "$KOORD_KUBECONFIG" "$@"; }
kubectl apply -f "$root/deploy/charts/koordinator/files/crds" >/dev/null
kubectl wait --for condition=established --timeout=60s crd/nodemetrics.slo.koordinator.sh \
  crd/podmigrationjobs.scheduling.koordinator.sh >/dev/null
"$driver" --kubeconfig "$KOORD_KUBECONFIG" --nodes "$nodes" --pods "$pods" --hot-percent "$hot"

cat >"$work/config.yaml" <<CFG
apiVersion: descheduler/v1alpha2
kind: DeschedulerConfiguration
clientConnection: {kubeconfig: $KOORD_KUBECONFIG}
leaderElection: {leaderElect: false}
dryRun: true
profiles:
- name: koord-descheduler
  plugins:
    balance: {enabled: [{name: LowNodeLoad}]}
  pluginConfig:
  - name: LowNodeLoad
    args:
      lowThresholds: {cpu: 45, memory: 55}
      highThresholds: {cpu: 75, memory: 80}
      anomalyCondition: {consecutiveAbnormalities: 1}
CFG
start=$(date +%s.%N)
"$koord" descheduler --config="$work/config.yaml" --port=0 --secure-port=0 -v=2 2>"$work/descheduler.log" &
pid=$!
synced= done_at=
for _ in $(seq 1 1200); do
  now=$(date +%s.%N)
  [[ -z $synced ]] && grep -q 'informer caches synced' "$work/descheduler.log" && synced=$now
  if grep -q 'one pass done' "$work/descheduler.log"; then
    done_at=$now
    break
  fi
  sleep 0.05
done
[[ -n $done_at ]] || die "no pass within 60 s; see $work/descheduler.log"
ticks=$(getconf CLK_TCK)
read -r utime stime < <(awk '{print $14, $15}' "/proc/$pid/stat")
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
evictions=$(grep -c 'would create a PodMigrationJob' "$work/descheduler.log" || true)
printf 'koord descheduler through the API server: %s nodes, %s pods, %s%% hot\n' "$nodes" "$pods" "$hot"
printf '  caches synced after %.2f s, pass done after %.2f s; %s evictions chosen (dry run)\n' \
  "$(echo "$synced - $start" | bc)" "$(echo "$done_at - $start" | bc)" "$evictions"
grep -E '^[EW][0-9]' "$work/descheduler.log" | head -n 5 >&2 || true
printf '  koord CPU %.2f s, peak RSS %.1f MiB\n' "$(echo "($utime + $stime) / $ticks" | bc -l)" \
  "$(echo "$hwm / 1024" | bc -l)"
