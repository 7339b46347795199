#!/usr/bin/env bash
# Scheduler API benchmark: kube-scheduler v1.20.2 and `koord scheduler`, each alone against the
# same real apiserver (tests/cluster), binding N nodes x M pods: pods/s, CPU and RSS side by side.
#
#   tests/bench/scheduler/run.sh [--sizes "1000x5000 5000x10000"] [--only kube|koord|binder]
#       [--binder] [--koord PATH] [--driver PATH] [--qps 5000]
#
# --binder adds a run of the driver's own round-robin binder (no scheduler): the apiserver's bind
# ceiling on this machine. Both schedulers get the same KubeSchedulerConfiguration v1beta1 (default
# plugins, client qps/burst, no leader election); koord serves no port, kube-scheduler only a free
# loopback one (1.20 cannot turn it off under --config). The cluster lives in a temp dir of its
# own and is stopped at the end unless KOORD_BENCH_KEEP=1; with OUT_DIR set the table is also
# written to $OUT_DIR/scheduler-bench.txt.
set -euo pipefail
set -o errtrace
trap 'printf "scheduler bench: failed at line %s: %s\n" "$LINENO" "$BASH_COMMAND" >&2' ERR
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

sizes=(1000x5000 5000x10000)
schedulers=(kube koord)
koord=
driver=
qps=5000
usage() {
  echo "usage: $0 [--sizes \"1000x5000 5000x10000\"] [--only kube|koord|binder] [--binder]" \
    "[--koord PATH] [--driver PATH] [--qps 5000]" >&2
  exit 2
}
while (($#)); do
  case $1 in
    --sizes) read -r -a sizes <<<"$2"; shift 2 ;;
    --only)
      case $2 in kube | koord | binder) schedulers=("$2") ;; *) usage ;; esac
      shift 2
      ;;
    --binder) schedulers+=(binder); shift ;;
    --koord) koord=$2; shift 2 ;;
    --driver) driver=$2; shift 2 ;;
    --qps) qps=$2; shift 2 ;;
    *) usage ;;
  esac
done

log() { printf 'scheduler bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=tests/bench/lib/bench_node.sh
. "$root/tests/bench/lib/bench_node.sh"

for size in "${sizes[@]}"; do
  [[ $size =~ ^[0-9]+x[0-9]+$ ]] || die "size $size is not NODESxPODS"
done
if [[ -z $koord ]]; then
  koord=$root/build/src/koord
  if [[ -x $root/build-mgr/src/koord ]]; then koord=$root/build-mgr/src/koord; fi
fi
[[ -x $koord ]] || die "no koord binary at $koord (build it, or pass --koord)"
if [[ -z $driver ]]; then
  # The driver from koord's own build tree first, so both come from one configuration.
  for d in "$(dirname "$koord")/../tests/bench" "$root/build-sched-bench/tests/bench" \
    "$root/build-mgr/tests/bench" "$root/build/tests/bench"; do
    if [[ -x $d/koord_bench_scheduler_api ]]; then
      driver=$d/koord_bench_scheduler_api
      break
    fi
  done
fi
[[ -n $driver && -x $driver ]] ||
  die "no koord_bench_scheduler_api (ninja -C BUILD koord_bench_scheduler_api, or pass --driver)"

work=$(mktemp -d /tmp/koord-bench-sched.XXXXXX)
export KOORD_CLUSTER_DIR=$work/cluster
# Copies, so a rebuild while the bench runs does not change what is measured.
cp "$koord" "$work/koord"
cp "$driver" "$work/driver"
sched_pid=
# INT and TERM leave through exit, so the EXIT trap stops the scheduler and the cluster.
trap 'exit 130' INT TERM
cleanup() {
  stop_pid "$sched_pid"
  bench_node_down "$work"
}
trap cleanup EXIT

load1() { cut -d' ' -f1 /proc/loadavg; }
# The machine's load before the bench adds its own (apiserver, etcd, scheduler and driver keep
# both of a 2-core machine's CPUs busy): the per-run figures include the bench itself.
start_load=$(load1)
"$root/tests/cluster/cluster.sh" up
set -a
# shellcheck source=/dev/null
. "$KOORD_CLUSTER_DIR/env"
set +a
# koord's scheduler lists NodeMetrics (LoadAwareScheduling's input) before it schedules anything.
kubectl apply -f "$root/deploy/crds" >/dev/null
kubectl wait --for condition=established --timeout=60s \
  crd/nodemetrics.slo.koordinator.sh crd/nodeslos.slo.koordinator.sh >/dev/null

# kube-scheduler 1.20 takes its insecure /healthz and /metrics address from the file alone once
# --config is given (--port=0 is ignored, and the file's port must be 1-65535), so it gets a free
# loopback port rather than the default 0.0.0.0:10251, which another scheduler may hold.
health_port=
for p in $(seq 20400 20500); do
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then health_port=$p; break; fi
done
[[ -n $health_port ]] || die "no free loopback port in 20400-20500 for kube-scheduler's /healthz"

# One configuration for both, differing only in the profile's name: the default plugins, the
# default percentageOfNodesToScore, the same client limits, no leader election. koord's --port=0
# keeps it from serving anything.
write_config() {
  cat >"$1" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
healthzBindAddress: 127.0.0.1:$health_port
metricsBindAddress: 127.0.0.1:$health_port
clientConnection:
  kubeconfig: $KOORD_KUBECONFIG
  qps: $qps
  burst: $qps
leaderElection:
  leaderElect: false
profiles:
- schedulerName: $2
EOF
}
write_config "$work/kube.yaml" default-scheduler
write_config "$work/koord.yaml" koord-scheduler

declare -A result

# Runs one scheduler on one size and keeps the driver's result line in $result.
run_one() {
  local which=$1 size=$2 nodes=${2%x*} pods=${2#*x} name out rc=0
  local slog=$work/$which-$size.log
  local -a cmd=() mode=()
  case $which in
    kube)
      name='default-scheduler'
      cmd=("$KOORD_K8S_BIN/kube-scheduler" --config="$work/kube.yaml" --port=0 --secure-port=0)
      ;;
    koord)
      name='koord-scheduler'
      cmd=("$work/koord" scheduler --config="$work/koord.yaml" --port=0)
      ;;
    binder) name='bench-binder' ;;
  esac
  log "$which, $nodes nodes x $pods pods (load average $(load1))"
  if ((${#cmd[@]})); then
    "${cmd[@]}" >"$slog" 2>&1 &
    sched_pid=$!
    mode=(--scheduler-pid "$sched_pid")
  else
    mode=(--binder-only)
  fi
  local control_plane
  control_plane=$(cut -d' ' -f1 "$KOORD_CLUSTER_DIR/kube-apiserver.pid")
  control_plane+=,$(cut -d' ' -f1 "$KOORD_CLUSTER_DIR/etcd.pid")
  out=$("$work/driver" --kubeconfig "$KOORD_KUBECONFIG" --nodes "$nodes" --pods "$pods" \
    --scheduler-name "$name" --qps "$qps" --control-plane-pids "$control_plane" "${mode[@]}") ||
    rc=$?
  result[$which,$size,load]=$(load1)
  if [[ -n $sched_pid ]] && ! kill -0 "$sched_pid" 2>/dev/null; then
    log "$which exited during the run"
    rc=1
  fi
  stop_pid "$sched_pid"
  sched_pid=
  local line
  line=$(grep '^result ' <<<"$out" || true)
  if [[ -n $line ]]; then
    echo "$line"
    local kv
    local -a kvs
    read -r -a kvs <<<"${line#result }"
    for kv in "${kvs[@]}"; do result[$which,$size,${kv%%=*}]=${kv#*=}; done
  fi
  if ((rc != 0)); then
    result[$which,$size,failed]=1
    if [[ -f $slog ]]; then
      log "---- $which failed (driver exit $rc); last lines of its log ----"
      tail -n 30 "$slog" >&2 || true
    fi
  fi
}

for size in "${sizes[@]}"; do
  for which in "${schedulers[@]}"; do run_one "$which" "$size"; done
done

# A value of the result table, "-" when that run printed none.
val() { echo "${result[$1,$2,$3]:--}"; }
ratio() {
  awk -v a="$1" -v b="$2" \
    'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "-" }'
}
label() {
  case $1 in
    kube) echo "kube-scheduler v1.20.2" ;;
    koord) echo "koord scheduler" ;;
    binder) echo "round-robin binder" ;;
  esac
}
row() { printf '%-10s %-22s %7s %7s %7s %10s %8s %5s %8s %14s %11s %6s\n' "$@"; }
table() {
  echo "scheduler API benchmark: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs," \
    "client qps/burst $qps, load average before the cluster started $start_load"
  row size scheduler pods/s seconds "CPU s" "CPU ms/pod" "RSS MiB" valid max/node \
    "bind p50/p99" "apiserver+" load
  row "" "" "" "" "" "" "" "" "" "" "etcd CPU s" "at end"
  local size which valid
  for size in "${sizes[@]}"; do
    for which in "${schedulers[@]}"; do
      valid=$(val "$which" "$size" valid)
      if [[ -n ${result[$which,$size,failed]:-} ]]; then valid="$valid (failed)"; fi
      row "$size" "$(label "$which")" "$(val "$which" "$size" pods_per_s)" \
        "$(val "$which" "$size" seconds)" "$(val "$which" "$size" cpu_s)" \
        "$(val "$which" "$size" cpu_ms_per_pod)" "$(val "$which" "$size" peak_rss_mib)" "$valid" \
        "$(val "$which" "$size" max_pods_per_node)" \
        "$(val "$which" "$size" bind_p50_ms)/$(val "$which" "$size" bind_p99_ms) ms" \
        "$(val "$which" "$size" control_plane_cpu_s)" "$(val "$which" "$size" load)"
    done
    if [[ -n ${result[kube,$size,pods_per_s]:-} && -n ${result[koord,$size,pods_per_s]:-} ]]; then
      row "$size" "koord / kube-scheduler" \
        "$(ratio "${result[koord,$size,pods_per_s]}" "${result[kube,$size,pods_per_s]}")" "" \
        "$(ratio "${result[koord,$size,cpu_s]}" "${result[kube,$size,cpu_s]}")" \
        "$(ratio "${result[koord,$size,cpu_ms_per_pod]}" "${result[kube,$size,cpu_ms_per_pod]}")" \
        "$(ratio "${result[koord,$size,peak_rss_mib]}" "${result[kube,$size,peak_rss_mib]}")" \
        "" "" "" \
        "$(ratio "${result[koord,$size,control_plane_cpu_s]}" \
          "${result[kube,$size,control_plane_cpu_s]}")" ""
    fi
  done
}
if [[ -n ${OUT_DIR:-} ]]; then
  mkdir -p "$OUT_DIR"
  table | tee "$OUT_DIR/scheduler-bench.txt"
else
  table
fi
for key in "${!result[@]}"; do
  if [[ $key == *,failed ]]; then die "some runs failed (their logs are above)"; fi
done
