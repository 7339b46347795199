#!/usr/bin/env bash
# The koordlet's footprint: RSS and CPU of `koord koordlet` on a node with 100 and then 400 pods,
# collecting every second, with cfsQuota CPU suppression on and a NodeMetric to report. The pods
# live in the API of a cluster of its own (tests/cluster, no kubelet: the koordlet falls back to
# listing them from the API server) and in a cgroup tree of its own under a temp dir, which a
# background loop keeps advancing like the kernel would; node figures come from the real /proc.
# Prints a table beside Koordinator's published figures. Stops the cluster unless
# KOORD_BENCH_KEEP=1.
#   tests/bench/koordlet/run.sh [--pods "100 400"] [--seconds 60] [--warmup 20] [--all-on]
# --all-on: every gated collector and QoS strategy koord has turned on (-feature-gates) and the
# NodeSLO's CPU burst, memory QoS, blkio and resctrl strategies enabled, as the issue measures it.
# KOORD_BENCH_BUILD: a build dir to use as it is (default: build-bench, configured Release).
# KOORD_BENCH_WRAPPER: a command line the koordlet runs under (heaptrack -o FILE, perf record),
# to see where its memory or time goes; the table's figures then describe the wrapper.
set -euo pipefail
set -o errtrace
trap 'printf "koordlet bench: failed at line %s: %s\n" "$LINENO" "$BASH_COMMAND" >&2' ERR
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
build=${KOORD_BENCH_BUILD:-$root/build-bench}
export KOORD_CLUSTER_DIR=${KOORD_CLUSTER_DIR:-/tmp/koord-bench-cluster}
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/koord-ccache}

pod_counts=(100 400)
all_on=0
# The gates off by default whose code runs on any host (the kernel-specific ones say so and stop).
all_gates=CPUEvict=true,MemoryEvict=true,BEMemoryEvict=true,BECPUEvict=true,CgroupReconcile=true
all_gates+=,BlkIOReconcile=true,PSICollector=true,CPICollector=true,ResctrlCollector=true
all_gates+=,SystemConfig=false,AuditEvents=true
seconds=60
warmup=20
while (($#)); do
  case $1 in
    --pods) read -r -a pod_counts <<<"$2"; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --all-on) all_on=1; shift ;;
    *) echo "usage: $0 [--pods \"100 400\"] [--seconds 60] [--warmup 20] [--all-on]" >&2; exit 2 ;;
  esac
done

readonly node=koord-bench-koordlet-node ns=koord-bench-koordlet
log() { printf 'koordlet bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=tests/bench/lib/bench_node.sh
. "$root/tests/bench/lib/bench_node.sh"

"$root/scripts/install-deps.sh"
for tool in curl jq sha256sum; do
  command -v "$tool" >/dev/null || die "needs $tool"
done
# An explicit build dir is taken as configured; the default one is ours to configure.
if [[ -z ${KOORD_BENCH_BUILD:-} || ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKOORD_SANITIZE=OFF \
    -DKOORD_CLUSTER_TESTS=OFF >/dev/null
fi
ninja -C "$build" koord

work=$(mktemp -d /tmp/koord-bench-koordlet.XXXXXX)
# A copy, so a rebuild while the bench runs does not change what is measured.
cp "$build/src/koord" "$work/koord"
cg=$work/cgroup
koordlet_pid=
ticker_pid=

cleanup() {
  stop_pid "$koordlet_pid"
  stop_pid "$ticker_pid"
  bench_node_down "$work"
}
trap cleanup EXIT

bench_node_up "$node" "$ns" 500
# With --all-on, the evictions are armed with thresholds the bench never reaches.
slo_more=
if ((all_on)); then
  slo_more=', "memoryEvictThresholdPercent": 99, "cpuEvictThresholdPercent": 99,
   "evictEnabledPriorityThreshold": 5999, "cpuEvictBESatisfactionLowerPercent": 1,
   "cpuEvictBESatisfactionUpperPercent": 2},
  "cpuBurstStrategy": {"policy": "auto", "cpuBurstPercent": 1000, "cfsQuotaBurstPercent": 300,
   "cfsQuotaBurstPeriodSeconds": -1, "sharePoolThresholdPercent": 50},
  "resourceQOSStrategy": {
   "lsClass": {"memoryQOS": {"enable": true, "minLimitPercent": 50, "lowLimitPercent": 80},
               "blkioQOS": {"enable": true}, "resctrlQOS": {"enable": true}},
   "beClass": {"memoryQOS": {"enable": true, "throttlingPercent": 90},
               "blkioQOS": {"enable": true}, "resctrlQOS": {"enable": true}}}'
else
  slo_more='}'
fi
kubectl create -f - >/dev/null <<EOF
{"apiVersion": "slo.koordinator.sh/v1alpha1", "kind": "NodeSLO", "metadata": {"name": "$node"},
 "spec": {"resourceUsedThresholdWithBE": {"enable": true, "cpuSuppressThresholdPercent": 65,
                                          "cpuSuppressPolicy": "cfsQuota"$slo_more}}
EOF
kubectl create -f - >/dev/null <<EOF
{"apiVersion": "slo.koordinator.sh/v1alpha1", "kind": "NodeMetric", "metadata": {"name": "$node"},
 "spec": {"metricCollectPolicy": {"aggregateDurationSeconds": 300, "reportIntervalSeconds": 60,
          "nodeAggregatePolicy": {"durations": ["5m0s", "10m0s", "30m0s"]}}}}
EOF

# ---- the cgroup tree, as the kubelet (cgroupfs driver, v1) and containerd lay it out ---------
readonly subsystems=(cpu cpuacct cpuset memory)
# A truncating write could be read half done (an empty counter); the kernel's files never are.
# Rewriting a fixed-width number in place is one small write() over the same bytes.
counter() { printf '%020d\n' "$1" 1<>"$2"; }

memory_stat() {
  local anon=$1 file=$2 k
  for k in cache rss rss_huge shmem mapped_file dirty writeback swap pgpgin pgpgout pgfault \
    pgmajfault inactive_anon active_anon inactive_file active_file unevictable; do
    case $k in
      rss | active_anon) echo "$k $anon" ;;
      cache | active_file) echo "$k $file" ;;
      *) echo "$k 0" ;;
    esac
  done
  echo "hierarchical_memory_limit 9223372036854771712"
  echo "hierarchical_memsw_limit 9223372036854771712"
  for k in cache rss rss_huge shmem mapped_file dirty writeback swap pgpgin pgpgout pgfault \
    pgmajfault inactive_anon active_anon inactive_file active_file unevictable; do
    case $k in
      rss | active_anon) echo "total_$k $anon" ;;
      cache | active_file) echo "total_$k $file" ;;
      *) echo "total_$k 0" ;;
    esac
  done
}
# One cgroup directory in every subsystem, with the files the koordlet reads or writes.
make_cgroup() {
  local rel=$1 shares=$2 anon=${3:-0} ss dirs=()
  for ss in "${subsystems[@]}"; do dirs+=("$cg/$ss/$rel"); done
  mkdir -p "${dirs[@]}"
  echo "$shares" >"$cg/cpu/$rel/cpu.shares"
  echo -1 >"$cg/cpu/$rel/cpu.cfs_quota_us"
  echo 100000 >"$cg/cpu/$rel/cpu.cfs_period_us"
  printf 'nr_periods 0\nnr_throttled 0\nthrottled_time 0\n' >"$cg/cpu/$rel/cpu.stat"
  counter 0 "$cg/cpuacct/$rel/cpuacct.usage"
  echo "0-$((ncpu - 1))" >"$cg/cpuset/$rel/cpuset.cpus"
  echo 0 >"$cg/cpuset/$rel/cpuset.mems"
  memory_stat "$anon" $((anon / 4)) >"$cg/memory/$rel/memory.stat"
  # PSI as Anolis' psi-v1 puts it under cpuacct, so the PSI collector has every pod to publish.
  if ((all_on)); then
    local r
    for r in cpu memory io; do
      printf 'some avg10=1.50 avg60=0.80 avg300=0.20 total=12345\nfull avg10=0.50 avg60=0.20 avg300=0.05 total=2345\n' \
        >"$cg/cpuacct/$rel/$r.pressure"
    done
  fi
}
mkdir -p "$cg"
make_cgroup kubepods $((ncpu * 1024))
make_cgroup kubepods/burstable 1024
make_cgroup kubepods/besteffort 2

# Pod i: even ones Burstable (100m requested), odd ones BestEffort and koordinator BE.
pod_name() { printf 'bench-%04d' "$1"; }
pod_json() {
  local i=$1 name resources labels
  name=$(pod_name "$i")
  if ((i % 2 == 0)); then
    labels='"app": "web", "koordinator.sh/qosClass": "LS"'
    resources='{"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}'
  else
    labels='"app": "batch", "koordinator.sh/qosClass": "BE"'
    resources='{}'
  fi
  cat <<EOF
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "$name", "namespace": "$ns", "labels": {$labels, "pod-template-hash": "5d8f7c9b6"}},
 "spec": {"nodeName": "$node", "automountServiceAccountToken": false,
          "containers": [{"name": "app", "image": "koord.local/bench:none",
                          "env": [{"name": "POD_INDEX", "value": "$i"}],
                          "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                          "resources": $resources}]}}
EOF
}

created=0
declare -a dir_of cid_of inc_of
# Creates pods [created, n), gives each its cgroups, and marks them Running with a container ID.
add_pods() {
  local n=$1 i list=$work/pods.json
  ((n > created)) || return 0
  {
    echo '{"apiVersion": "v1", "kind": "List", "items": ['
    for ((i = created; i < n; i++)); do
      pod_json "$i"
      if ((i + 1 < n)); then echo ,; fi
    done
    echo ']}'
  } >"$list"
  kubectl create -f "$list" >/dev/null
  local name uid curlcfg=$work/status.curl now
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  : >"$curlcfg"
  chmod 600 "$curlcfg"
  while read -r name uid; do
    i=$((10#${name#bench-}))
    ((i >= created && i < n)) || continue
    cid_of[i]=$(printf '%s' "$uid" | sha256sum | cut -c1-64)
    local tier=burstable shares=102 anon=$((24 << 20))
    if ((i % 2)); then tier=besteffort shares=2 anon=$((48 << 20)); fi
    dir_of[i]=kubepods/$tier/pod$uid
    inc_of[i]=$(((i % 10 + 1) * 1000000)) # 1-10 millicores
    make_cgroup "${dir_of[i]}" "$shares" "$anon"
    make_cgroup "${dir_of[i]}/${cid_of[i]}" "$shares" "$anon"
    printf '{"status": {"phase": "Running", "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "image": "koord.local/bench:none", "imageID": "", "containerID": "containerd://%s", "started": true, "state": {"running": {"startedAt": "%s"}}}]}}\n' \
      "${cid_of[i]}" "$now" >"$work/status-$i.json"
    if [[ -s $curlcfg ]]; then echo next >>"$curlcfg"; fi
    cat >>"$curlcfg" <<EOF
url = "$KOORD_APISERVER/api/v1/namespaces/$ns/pods/$name/status"
request = "PATCH"
header = "Content-Type: application/merge-patch+json"
header = "Authorization: Bearer $KOORD_TOKEN"
cacert = "$KOORD_CA_FILE"
data-binary = "@$work/status-$i.json"
silent
output = "/dev/null"
write-out = "%{http_code}\n"
EOF
  done < <(kubectl -n "$ns" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid}{"\n"}{end}')
  local ok
  ok=$(curl -K "$curlcfg" | grep -c '^200$' || true)
  ((ok == n - created)) || die "$((n - created - ok)) of $((n - created)) pod status updates failed"
  rm -f "$work"/status-*.json
  created=$n
}

# The kernel's part: every second each pod's (and its container's) CPU counter moves on by 1-10
# millicores' worth, and the QoS tiers' counters by the sum of their pods.
start_ticker() {
  stop_pid "$ticker_pid"
  (
    declare -a usage
    while true; do
      be=0 bu=0
      for ((i = 0; i < created; i++)); do
        usage[i]=$((${usage[i]:-0} + inc_of[i]))
        counter "${usage[i]}" "$cg/cpuacct/${dir_of[i]}/cpuacct.usage"
        counter "${usage[i]}" "$cg/cpuacct/${dir_of[i]}/${cid_of[i]}/cpuacct.usage"
        if ((i % 2)); then be=$((be + usage[i])); else bu=$((bu + usage[i])); fi
      done
      counter "$be" "$cg/cpuacct/kubepods/besteffort/cpuacct.usage"
      counter "$bu" "$cg/cpuacct/kubepods/burstable/cpuacct.usage"
      counter $((be + bu)) "$cg/cpuacct/kubepods/cpuacct.usage"
      sleep 1
    done
  ) &
  ticker_pid=$!
}

proc_ticks() { # utime + stime of a process, in clock ticks
  local stat
  stat=$(<"/proc/$1/stat")
  stat=${stat##*) }
  local -a f
  read -r -a f <<<"$stat"
  echo $((f[11] + f[12]))
}
status_kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
steal_ticks() { awk '/^cpu / {print $9}' /proc/stat; }
clk_tck=$(getconf CLK_TCK)

extra_flags=()
((all_on)) && extra_flags=(-feature-gates="$all_gates" -enable-resctrl-collector=true)
results=()
for n in "${pod_counts[@]}"; do
  log "$n pods: creating"
  add_pods "$n"
  start_ticker
  echo -1 >"$cg/cpu/kubepods/besteffort/cpu.cfs_quota_us"
  klog=$work/koordlet-$n.log
  # shellcheck disable=SC2086 # the wrapper is a command line, split into words on purpose
  NODE_NAME=$node agent_mode=hostMode ${KOORD_BENCH_WRAPPER:-} "$work/koord" koordlet -kubeconfig="$KOORD_KUBECONFIG" \
    -cgroup-root-dir="$cg/" -sys-root-dir=/sys/ -proc-root-dir=/proc/ -addr=127.0.0.1:0 \
    -kubelet-insecure-tls -kubelet-read-only-port="$kubelet_port" -collect-res-used-interval=1s \
    -tsdb-path="$work/metric-data-$n" -prediction-checkpoint-filepath="$work/prediction-$n" \
    "${extra_flags[@]}" >"$klog" 2>&1 &
  koordlet_pid=$!
  port=
  for _ in $(seq 100); do
    port=$(sed -n 's/.*serving .* (port \([0-9]*\)).*/\1/p' "$klog" | head -n1)
    [[ -n $port ]] && break
    kill -0 "$koordlet_pid" 2>/dev/null || { cat "$klog" >&2; die "the koordlet exited"; }
    sleep 0.1
  done
  [[ -n $port ]] || die "the koordlet did not say its port; log: $klog"
  for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
    sleep 0.2
  done
  curl -sf "http://127.0.0.1:$port/readyz" >/dev/null || die "the koordlet is not ready; log: $klog"
  log "$n pods: koordlet ready (pid $koordlet_pid); warming up ${warmup}s"
  sleep "$warmup"
  quota=$(<"$cg/cpu/kubepods/besteffort/cpu.cfs_quota_us")
  [[ $quota != -1 ]] || die "the koordlet did not write the besteffort CFS quota; log: $klog"

  t0=$(date +%s.%N) c0=$(proc_ticks "$koordlet_pid") s0=$(steal_ticks)
  rss_max=0 rss_sum=0 samples=0
  end=$((SECONDS + seconds))
  while ((SECONDS < end)); do
    sleep 1
    kill -0 "$koordlet_pid" 2>/dev/null || die "the koordlet exited during the run; log: $klog"
    rss=$(status_kib "$koordlet_pid" VmRSS)
    if ((rss > rss_max)); then rss_max=$rss; fi
    rss_sum=$((rss_sum + rss)) samples=$((samples + 1))
  done
  t1=$(date +%s.%N) c1=$(proc_ticks "$koordlet_pid") s1=$(steal_ticks)
  hwm=$(status_kib "$koordlet_pid" VmHWM)
  rss_end=$(status_kib "$koordlet_pid" VmRSS)
  rss_anon=$(status_kib "$koordlet_pid" RssAnon)
  rss_file=$(status_kib "$koordlet_pid" RssFile)
  threads=$(status_kib "$koordlet_pid" Threads)
  cache_bytes=$(curl -sf "http://127.0.0.1:$port/metrics" |
    awk '$1 == "koordlet_metric_cache_bytes" {print $2}')
  reported=$(kubectl get nodemetric "$node" -o json | jq '.status.podsMetric // [] | length')
  warnings=$(grep -c '^W' "$klog" || true)
  t_stop=$(date +%s.%N)
  stop_pid "$koordlet_pid"
  stop_secs=$(awk -v a="$t_stop" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
  koordlet_pid=
  results+=("$(awk -v n="$n" -v hwm="$hwm" -v rss="$rss_end" -v avg=$((rss_sum / samples)) \
    -v cpu=$((c1 - c0)) -v tck="$clk_tck" -v t0="$t0" -v t1="$t1" -v cache="${cache_bytes:-0}" \
    -v rep="$reported" -v steal=$((s1 - s0)) -v ncpu="$ncpu" -v warn="$warnings" \
    -v quota="$quota" -v stop="$stop_secs" -v anon="$rss_anon" -v file="$rss_file" \
    -v threads="$threads" 'BEGIN {
      secs = t1 - t0
      printf "| %d | %.1f | %.1f | %.1f | %.1f / %.1f | %d | %.2f | %.1f | %d | %d | %.1f %% | %d | %s |", n,
        hwm / 1024, rss / 1024, avg / 1024, anon / 1024, file / 1024, threads,
        100 * cpu / tck / secs, cache / 1024, rep, quota, 100 * steal / tck / secs / ncpu, warn, stop
    }')")
done

echo
echo "koordlet footprint, ${seconds}s per row after ${warmup}s warm-up, -collect-res-used-interval=1s,$( ((all_on)) && echo " every collector and strategy on,")"
echo "cfsQuota suppression on, NodeMetric every 60s; $(nproc) CPUs, koord $(sed -n 's/.*(git commit \([^)]*\)).*/\1/p' "$klog" | head -n1)"
echo
echo "| pods | peak RSS MiB (VmHWM) | RSS MiB at end | mean RSS MiB | anon / file MiB at end | threads | CPU % of one core | metric cache KiB | pods in NodeMetric | BE cfs_quota_us | steal | log warnings | SIGTERM to exit s |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${results[@]}"
echo
echo "Targets (issues): < 30 MiB RSS and < 2 % of one core at 100 pods; with --all-on, < 30 MiB and < 3 % at 400."
echo "Koordinator's koordlet (published): memory limit 256 MiB in its DaemonSet; measured at 160-260 MB RSS."
