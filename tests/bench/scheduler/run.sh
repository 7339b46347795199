#!/usr/bin/env bash
# Scheduler API benchmark: kube-scheduler v1.20.2 and `koord scheduler`, each alone against the
# same real apiserver (tests/cluster), binding N nodes x M pods: pods/s, CPU and RSS side by side.
#
#   tests/bench/scheduler/run.sh [--sizes "1000x5000 5000x10000"] [--only kube|koord|binder]
#       [--binder] [--koord PATH] [--driver PATH] [--qps 5000] [--rounds R]
#       [--reservations N [--reservations-by scheduler|driver]] [--restarts K]
#
# --binder adds a run of the driver's own round-robin binder (no scheduler): the apiserver's bind
# ceiling on this machine. Both schedulers get the same KubeSchedulerConfiguration v1beta1 (default
# plugins, client qps/burst, no leader election); koord serves no port, kube-scheduler only a free
# loopback one (1.20 cannot turn it off under --config). The cluster lives in a temp dir of its
# own and is stopped at the end unless KOORD_BENCH_KEEP=1; with OUT_DIR set the table is also
# written to $OUT_DIR/scheduler-bench.txt.
#
# --reservations N gives koord's profile the Reservation plugin (PreFilter, Filter, PreScore,
# Score weight 5000, Reserve; DefaultPreBind at PreBind, as deploy/manifests/koord-scheduler.yaml)
# and runs koord twice per size with it: without reservations, then with N Available ones spread
# over the nodes, half the pods owners of one (the driver's --reservations; --reservations-by
# says whether koord places them or the driver writes their status). --rounds R repeats every
# run R times, interleaved (A B A B). --restarts K keeps each koord run's objects, then starts
# `koord scheduler` K more times against that populated cluster and times each start until
# /readyz answers 200 (the caches synced, reservations included).
set -euo pipefail
set -o errtrace
trap 'printf "scheduler bench: failed at line %s: %s\n" "$LINENO" "$BASH_COMMAND" >&2' ERR
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

sizes=(1000x5000 5000x10000)
schedulers=(kube koord)
koord=
driver=
qps=5000
rounds=1
reservations=0
reservations_by=scheduler
restarts=0
usage() {
  echo "usage: $0 [--sizes \"1000x5000 5000x10000\"] [--only kube|koord|binder] [--binder]" \
    "[--koord PATH] [--driver PATH] [--qps 5000] [--rounds R]" \
    "[--reservations N [--reservations-by scheduler|driver]] [--restarts K]" >&2
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
    --rounds) rounds=$2; shift 2 ;;
    --reservations) reservations=$2; shift 2 ;;
    --reservations-by)
      case $2 in scheduler | driver) reservations_by=$2 ;; *) usage ;; esac
      shift 2
      ;;
    --restarts) restarts=$2; shift 2 ;;
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
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds $rounds is not a positive count"
[[ $reservations =~ ^[0-9]+$ ]] || die "--reservations $reservations is not a count"
[[ $restarts =~ ^[0-9]+$ ]] || die "--restarts $restarts is not a count"
# With reservations, each koord run is followed by one with them (same profile).
if ((reservations > 0)); then
  runs=()
  for which in "${schedulers[@]}"; do
    runs+=("$which")
    if [[ $which == koord ]]; then runs+=(koordres); fi
  done
  schedulers=("${runs[@]}")
fi
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
kubectl apply -f "$root/deploy/charts/koordinator/files/crds" >/dev/null
kubectl wait --for condition=established --timeout=60s \
  crd/nodemetrics.slo.koordinator.sh crd/nodeslos.slo.koordinator.sh >/dev/null
if ((reservations > 0)); then
  kubectl wait --for condition=established --timeout=60s \
    crd/reservations.scheduling.koordinator.sh >/dev/null
fi

# kube-scheduler 1.20 takes its insecure /healthz and /metrics address from the file alone once
# --config is given (--port=0 is ignored, and the file's port must be 1-65535), so it gets a free
# loopback port rather than the default 0.0.0.0:10251, which another scheduler may hold.
health_port=
for p in $(seq 20400 20500); do
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then health_port=$p; break; fi
done
[[ -n $health_port ]] || die "no free loopback port in 20400-20500 for kube-scheduler's /healthz"
# koord's /readyz for the restart timings.
ops_port=
for p in $(seq 20501 20600); do
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then ops_port=$p; break; fi
done
[[ -n $ops_port ]] || die "no free loopback port in 20501-20600 for koord's /readyz"

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
  if [[ ${3:-} == reservations ]]; then
    cat >>"$1" <<'EOF'
  plugins:
    preFilter:
      enabled:
      - name: Reservation
    filter:
      enabled:
      - name: Reservation
    preScore:
      enabled:
      - name: Reservation
    score:
      enabled:
      - name: Reservation
        weight: 5000
    reserve:
      enabled:
      - name: Reservation
    preBind:
      enabled:
      - name: DefaultPreBind
EOF
  fi
}
write_config "$work/kube.yaml" default-scheduler
if ((reservations > 0)); then
  write_config "$work/koord.yaml" koord-scheduler reservations
else
  write_config "$work/koord.yaml" koord-scheduler
fi

declare -A result

# /proc/PID/stat's utime+stime in seconds; VmHWM in MiB.
cpu_of() { awk -v t="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / t }' \
  "/proc/$1/stat" 2>/dev/null || echo -; }
rss_of() { awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo -; }

# Starts koord against the cluster as the run left it, K times, each until /readyz is 200: the
# informers (nodes, pods, reservations, ...) listed and their handlers run, so the cache and the
# Reservation plugin's index hold every reservation. Also notes when the reservation controller's
# first pass counted them Available (koord_scheduler_reservations), CPU and RSS at ready.
measure_restarts() {
  local id=$1 want=$2 i pid t0 now ready restored code n
  for ((i = 1; i <= restarts; i++)); do
    t0=$(date +%s.%N)
    "$work/koord" scheduler --config="$work/koord.yaml" --address=127.0.0.1 --port="$ops_port" --secure-port=0 \
      >"$work/$id-restart$i.log" 2>&1 &
    pid=$!
    sched_pid=$pid
    ready=''
    restored=''
    while kill -0 "$pid" 2>/dev/null; do
      now=$(date +%s.%N)
      if awk -v a="$now" -v b="$t0" 'BEGIN { exit !(a - b > 300) }'; then break; fi
      if [[ -z $ready ]]; then
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 \
          "http://127.0.0.1:$ops_port/readyz" || true)
        if [[ $code == 200 ]]; then
          ready=$(awk -v a="$now" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
          result[$id,restart$i,ready_s]=$ready
          result[$id,restart$i,cpu_s]=$(cpu_of "$pid")
          result[$id,restart$i,rss]=$(rss_of "$pid")
          if ((want == 0)); then break; fi
        fi
      else
        n=$(curl -s --max-time 2 "http://127.0.0.1:$ops_port/metrics" |
          awk '/^koord_scheduler_reservations\{phase="Available"\}/ { printf "%d", $2 }')
        if [[ ${n:-0} -ge $want ]]; then
          restored=$(awk -v a="$now" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
          result[$id,restart$i,restored_s]=$restored
          break
        fi
      fi
      sleep 0.05
    done
    if [[ -z $ready ]]; then
      log "$id restart $i: no /readyz 200 (log: $work/$id-restart$i.log)"
      result[$id,failed]=1
    fi
    log "$id restart $i: ready after ${ready:--} s, reservations counted after ${restored:--} s"
    stop_pid "$pid"
    sched_pid=
  done
}

# Runs one scheduler on one size and keeps the driver's result line in $result[ID,...], ID being
# which,size,round.
run_one() {
  local which=$1 size=$2 round=$3 nodes=${2%x*} pods=${2#*x} name out rc=0 keep=0
  local id=$which,$size,$round
  local slog=$work/$which-$size-$round.log
  local -a cmd=() mode=()
  case $which in
    kube)
      name='default-scheduler'
      cmd=("$KOORD_K8S_BIN/kube-scheduler" --config="$work/kube.yaml" --port=0 --secure-port=0)
      ;;
    koord | koordres)
      name='koord-scheduler'
      cmd=("$work/koord" scheduler --config="$work/koord.yaml" --port=0 --secure-port=0)
      ;;
    binder) name='bench-binder' ;;
  esac
  if [[ $which == koordres ]]; then
    mode+=(--reservations "$reservations" --reservations-by "$reservations_by")
  fi
  if [[ $which == koord* ]] && ((restarts > 0)); then
    keep=1
    mode+=(--keep)
  fi
  log "$which, $nodes nodes x $pods pods, round $round (load average $(load1))"
  if ((${#cmd[@]})); then
    "${cmd[@]}" >"$slog" 2>&1 &
    sched_pid=$!
    mode+=(--scheduler-pid "$sched_pid")
  else
    mode+=(--binder-only)
  fi
  local control_plane
  control_plane=$(cut -d' ' -f1 "$KOORD_CLUSTER_DIR/kube-apiserver.pid")
  control_plane+=,$(cut -d' ' -f1 "$KOORD_CLUSTER_DIR/etcd.pid")
  out=$("$work/driver" --kubeconfig "$KOORD_KUBECONFIG" --nodes "$nodes" --pods "$pods" \
    --scheduler-name "$name" --qps "$qps" --control-plane-pids "$control_plane" "${mode[@]}") ||
    rc=$?
  result[$id,load]=$(load1)
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
    for kv in "${kvs[@]}"; do result[$id,${kv%%=*}]=${kv#*=}; done
  fi
  if ((rc != 0)); then
    result[$id,failed]=1
    if [[ -f $slog ]]; then
      log "---- $which failed (driver exit $rc); last lines of its log ----"
      tail -n 30 "$slog" >&2 || true
    fi
  fi
  if ((keep)); then
    if ((rc == 0)); then
      local want=0
      if [[ $which == koordres ]]; then want=$reservations; fi
      measure_restarts "$id" "$want"
    fi
    "$work/driver" --kubeconfig "$KOORD_KUBECONFIG" --cleanup-only ||
      die "could not remove the kept objects of $which $size"
  fi
}

for size in "${sizes[@]}"; do
  for ((round = 1; round <= rounds; round++)); do
    for which in "${schedulers[@]}"; do run_one "$which" "$size" "$round"; done
  done
done

# A value of the result table, "-" when that run printed none.
val() { echo "${result[$1,$2]:--}"; }
ratio() {
  awk -v a="$1" -v b="$2" \
    'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "-" }'
}
label() {
  case $1 in
    kube) echo "kube-scheduler v1.20.2" ;;
    koord) echo "koord scheduler" ;;
    koordres) echo "koord, $reservations resv" ;;
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
  local size which valid id round base
  for size in "${sizes[@]}"; do
    for ((round = 1; round <= rounds; round++)); do
      for which in "${schedulers[@]}"; do
        id=$which,$size,$round
        valid=$(val "$id" valid)
        if [[ -n ${result[$id,failed]:-} ]]; then valid="$valid (failed)"; fi
        row "$size" "$(label "$which")" "$(val "$id" pods_per_s)" "$(val "$id" seconds)" \
          "$(val "$id" cpu_s)" "$(val "$id" cpu_ms_per_pod)" "$(val "$id" peak_rss_mib)" \
          "$valid" "$(val "$id" max_pods_per_node)" \
          "$(val "$id" bind_p50_ms)/$(val "$id" bind_p99_ms) ms" \
          "$(val "$id" control_plane_cpu_s)" "$(val "$id" load)"
      done
      base=kube,$size,$round
      id=koord,$size,$round
      if [[ -n ${result[$base,pods_per_s]:-} && -n ${result[$id,pods_per_s]:-} ]]; then
        row "$size" "koord / kube-scheduler" \
          "$(ratio "${result[$id,pods_per_s]}" "${result[$base,pods_per_s]}")" "" \
          "$(ratio "${result[$id,cpu_s]}" "${result[$base,cpu_s]}")" \
          "$(ratio "${result[$id,cpu_ms_per_pod]}" "${result[$base,cpu_ms_per_pod]}")" \
          "$(ratio "${result[$id,peak_rss_mib]}" "${result[$base,peak_rss_mib]}")" \
          "" "" "" \
          "$(ratio "${result[$id,control_plane_cpu_s]}" "${result[$base,control_plane_cpu_s]}")" ""
      fi
      base=koord,$size,$round
      id=koordres,$size,$round
      if [[ -n ${result[$base,pods_per_s]:-} && -n ${result[$id,pods_per_s]:-} ]]; then
        row "$size" "with / without resv" \
          "$(ratio "${result[$id,pods_per_s]}" "${result[$base,pods_per_s]}")" "" \
          "$(ratio "${result[$id,cpu_s]}" "${result[$base,cpu_s]}")" \
          "$(ratio "${result[$id,cpu_ms_per_pod]}" "${result[$base,cpu_ms_per_pod]}")" \
          "$(ratio "${result[$id,peak_rss_mib]}" "${result[$base,peak_rss_mib]}")" \
          "" "" "" \
          "$(ratio "${result[$id,control_plane_cpu_s]}" "${result[$base,control_plane_cpu_s]}")" ""
      fi
    done
  done
  if ((reservations > 0)); then
    echo
    echo "reservations ($reservations, made Available by the $reservations_by): seconds from" \
      "the first create to all Available, owner pods, owner pods placed into their reservation"
    for size in "${sizes[@]}"; do
      for ((round = 1; round <= rounds; round++)); do
        id=koordres,$size,$round
        echo "$size round $round: $(val "$id" reservations_s) s, $(val "$id" owner_pods) owners," \
          "$(val "$id" in_reservation) in their reservation"
      done
    done
  fi
  if ((restarts > 0)); then
    echo
    echo "restart: koord scheduler started against the populated cluster until /readyz is 200" \
      "(ready s), its CPU s and peak RSS MiB then, and until koord_scheduler_reservations" \
      "counted them Available (counted s)"
    printf '%-10s %-22s %7s %9s %7s %8s %10s\n' size scheduler restart "ready s" "CPU s" \
      "RSS MiB" "counted s"
    local i
    for size in "${sizes[@]}"; do
      for ((round = 1; round <= rounds; round++)); do
        for which in koord koordres; do
          id=$which,$size,$round
          for ((i = 1; i <= restarts; i++)); do
            if [[ -z ${result[$id,restart$i,ready_s]:-} ]]; then continue; fi
            printf '%-10s %-22s %7s %9s %7s %8s %10s\n' "$size" "$(label "$which")" \
              "$round.$i" "$(val "$id" "restart$i,ready_s")" "$(val "$id" "restart$i,cpu_s")" \
              "$(val "$id" "restart$i,rss")" "$(val "$id" "restart$i,restored_s")"
          done
        done
      done
    done
  fi
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
