#!/usr/bin/env bash
# Co-location on this machine's real cgroups (v1, cgroupfs layout, as the kubelet makes them): an
# LS nginx in a Burstable pod (1 CPU requested) and a BE `stress-ng --cpu <all>` in a BestEffort
# pod, with the kubelet's QoS cgroup settings. `hey` loads nginx at a fixed rate from outside the
# pods; LS latency and the CPU the BE hog got are measured with LS alone, with the hog, and with
# the koordlet (suppress threshold 65 %: cfsQuota, cfsQuota with the besteffort tier under
# SCHED_IDLE, cpuset, and SCHED_IDLE without suppression), at a light load (small file) and at a
# load where LS needs more than half the node (a text file gzipped per request, rate found by
# measuring LS alone). Every configuration runs once per round, rounds interleaved, so drift in
# the VM's steal hits all of them alike; the summary gives medians over rounds. The pods exist in
# the API of a cluster of its own (tests/cluster, no kubelet); their cgroups are made here and
# removed at the end. Refuses to run beside a kubelet.
#   tests/bench/colocation/run.sh [--rounds 3] [--seconds 20] [--warmup 5] [--light-rate 4000]
#                                 [--heavy-cores 1.2] [--client-shares N]
# --client-shares N runs hey in a cgroup of its own with cpu.shares N beside kubepods (else it
# runs in the root cgroup, as a host process).
# KOORD_BENCH_BUILD: a build dir to use as it is (default: build-bench, configured Release).
# KOORD_BENCH_KEEP=1 keeps the cluster (the cgroups always go).
set -euo pipefail
set -o errtrace
trap 'printf "colocation bench: failed at line %s: %s\n" "$LINENO" "$BASH_COMMAND" >&2' ERR
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
build=${KOORD_BENCH_BUILD:-$root/build-bench}
export KOORD_CLUSTER_DIR=${KOORD_CLUSTER_DIR:-/tmp/koord-bench-cluster}
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/koord-ccache}

rounds=3
seconds=20
warmup=5
light_rate=4000
heavy_cores=1.2
client_shares=
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --light-rate) light_rate=$2; shift 2 ;;
    --heavy-cores) heavy_cores=$2; shift 2 ;;
    --client-shares) client_shares=$2; shift 2 ;;
    *)
      echo "usage: $0 [--rounds 3] [--seconds 20] [--warmup 5] [--light-rate 4000] [--heavy-cores 1.2]" \
        "[--client-shares N]" >&2
      exit 2
      ;;
  esac
done

readonly node=koord-bench-colocation-node ns=koord-bench-colocation
readonly cgroot=/sys/fs/cgroup
readonly subsystems=(cpu cpuacct cpuset memory)
log() { printf 'colocation bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source=tests/bench/lib/bench_node.sh
. "$root/tests/bench/lib/bench_node.sh"

# ---- preconditions: the kubepods hierarchy must be free for us ---------------------------------
((EUID == 0)) || die "needs root (it makes cgroups under $cgroot)"
for ss in "${subsystems[@]}"; do
  [[ -d $cgroot/$ss && $(stat -f -c %T "$cgroot/$ss") == cgroupfs ]] ||
    die "$cgroot/$ss is not a cgroup v1 hierarchy; this bench needs cgroup v1"
done
if pids=$(pgrep -x kubelet); then
  die "a kubelet runs on this machine (pid $(echo "$pids" | tr '\n' ' ')); it owns" \
    "$cgroot/*/kubepods. Run this when it has stopped (tests/cluster/cluster.sh nodedown)."
fi
# Another koordlet on the real hierarchy would suppress (or recover) the same besteffort cgroup.
for pid in $(pgrep -x koord || true); do
  mapfile -d '' argv <"/proc/$pid/cmdline" 2>/dev/null || continue
  [[ ${argv[0]##*/} == koordlet || ${argv[1]:-} == koordlet ]] || continue
  # One on a cgroup tree of its own (tests/bench/koordlet's) is no concern.
  dir=$cgroot
  for ((i = 0; i < ${#argv[@]}; i++)); do
    case ${argv[i]} in
      -cgroup-root-dir=* | --cgroup-root-dir=*) dir=${argv[i]#*=} ;;
      -cgroup-root-dir | --cgroup-root-dir) dir=${argv[i + 1]:-} ;;
    esac
  done
  if [[ $(realpath -m "$dir") == "$cgroot" ]]; then
    die "a koordlet runs on $cgroot (pid $pid); it would act on the same cgroups." \
      "Run this when it has stopped."
  fi
done
for ss in "${subsystems[@]}"; do
  [[ ! -e $cgroot/$ss/kubepods ]] ||
    die "$cgroot/$ss/kubepods exists: a kubelet's leftovers or another run's. Remove them" \
      "when no kubelet runs: find $cgroot/*/kubepods -depth -type d -exec rmdir {} \\;"
done

# ---- tools -------------------------------------------------------------------------------------
"$root/scripts/install-deps.sh"
tools=(nginx hey stress-ng)
missing=()
for p in "${tools[@]}"; do
  [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true) == "install ok installed" ]] ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi
for tool in curl jq sha256sum nginx hey stress-ng; do
  command -v "$tool" >/dev/null || die "needs $tool"
done
if [[ -z ${KOORD_BENCH_BUILD:-} || ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKOORD_SANITIZE=OFF \
    -DKOORD_CLUSTER_TESTS=OFF >/dev/null
fi
ninja -C "$build" koord

work=$(mktemp -d /tmp/koord-bench-colocation.XXXXXX)
chmod 755 "$work" # nginx's workers run as nobody and serve from here
cp "$build/src/koord" "$work/koord"
made_cgroups=() # <subsystem>/<dir> that this run made, parents first
koordlet_pid='' nginx_pid='' hog_pid='' sampler_pid=''

# Our pods' cgroups hold only what we started there; whatever is left goes before the rmdir.
remove_cgroups() {
  local i dir pid kubelet=0
  # A kubelet that started meanwhile owns the QoS tiers now; our pods' cgroups are still ours.
  if pgrep -x kubelet >/dev/null; then kubelet=1; fi
  for ((i = ${#made_cgroups[@]} - 1; i >= 0; i--)); do
    dir=$cgroot/${made_cgroups[i]}
    [[ -d $dir ]] || continue
    if ((kubelet)) && [[ $dir != */pod* ]]; then continue; fi
    while read -r pid; do
      if [[ -n $pid ]]; then kill -KILL "$pid" 2>/dev/null || true; fi
    done <"$dir/cgroup.procs"
    for _ in $(seq 50); do
      rmdir "$dir" 2>/dev/null && break
      sleep 0.1
    done
    [[ ! -d $dir ]] || log "could not remove $dir"
  done
}

cleanup() {
  stop_pid "$sampler_pid"
  stop_pid "$koordlet_pid"
  stop_pid "$hog_pid"
  stop_pid "$nginx_pid"
  remove_cgroups
  bench_node_down "$work"
}
trap cleanup EXIT

# ---- the cluster's objects ---------------------------------------------------------------------
bench_node_up "$node" "$ns" 110
kubectl create -f - >/dev/null <<EOF
{"apiVersion": "slo.koordinator.sh/v1alpha1", "kind": "NodeMetric", "metadata": {"name": "$node"},
 "spec": {"metricCollectPolicy": {"aggregateDurationSeconds": 300, "reportIntervalSeconds": 60}}}
EOF
kubectl create -f - >/dev/null <<EOF
{"apiVersion": "slo.koordinator.sh/v1alpha1", "kind": "NodeSLO", "metadata": {"name": "$node"},
 "spec": {"resourceUsedThresholdWithBE": {"enable": true, "cpuSuppressThresholdPercent": 65,
                                          "cpuSuppressPolicy": "cfsQuota"},
          "resourceQOSStrategy": {"policies": {"cpuPolicy": "groupIdentity"},
                                  "beClass": {"cpuQOS": {"enable": true, "schedIdle": 1}}}}}
EOF
kubectl create -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "ls-nginx", "namespace": "$ns", "labels": {"app": "nginx", "koordinator.sh/qosClass": "LS"}},
  "spec": {"nodeName": "$node", "automountServiceAccountToken": false,
           "containers": [{"name": "nginx", "image": "koord.local/nginx:bench",
                           "resources": {"requests": {"cpu": "1", "memory": "256Mi"}}}]}},
 {"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "be-stress", "namespace": "$ns", "labels": {"app": "stress", "koordinator.sh/qosClass": "BE"}},
  "spec": {"nodeName": "$node", "automountServiceAccountToken": false,
           "containers": [{"name": "stress", "image": "koord.local/stress-ng:bench"}]}}]}
EOF
uid_of() { kubectl -n "$ns" get pod "$1" -o jsonpath='{.metadata.uid}'; }
ls_uid=$(uid_of ls-nginx)
be_uid=$(uid_of be-stress)
[[ $(kubectl -n "$ns" get pod ls-nginx -o jsonpath='{.status.qosClass}') == Burstable ]] ||
  die "ls-nginx is not Burstable"
[[ $(kubectl -n "$ns" get pod be-stress -o jsonpath='{.status.qosClass}') == BestEffort ]] ||
  die "be-stress is not BestEffort"
cid_of() { printf '%s' "$1" | sha256sum | cut -c1-64; }
ls_cid=$(cid_of "$ls_uid")
be_cid=$(cid_of "$be_uid")
ls_pod=kubepods/burstable/pod$ls_uid
be_pod=kubepods/besteffort/pod$be_uid

# As the kubelet would report them once the containers run.
mark_running() {
  local pod=$1 container=$2 cid=$3 code
  code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$KOORD_CA_FILE" \
    -H "Authorization: Bearer $KOORD_TOKEN" -H 'Content-Type: application/merge-patch+json' \
    -X PATCH "$KOORD_APISERVER/api/v1/namespaces/$ns/pods/$pod/status" \
    --data-binary @- <<EOF
{"status": {"phase": "Running", "containerStatuses": [{"name": "$container", "ready": true,
 "restartCount": 0, "image": "koord.local/$container:bench", "imageID": "",
 "containerID": "containerd://$cid", "started": true,
 "state": {"running": {"startedAt": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"}}}]}}
EOF
  )
  [[ $code == 200 ]] || die "marking $pod Running: HTTP $code"
}
mark_running ls-nginx nginx "$ls_cid"
mark_running be-stress stress "$be_cid"

# ---- cgroups, as the kubelet sets them: kubepods = allocatable, burstable = the sum of its pods'
# requests, besteffort = 2 (the minimum), a pod and its container = its requests ---------------
make_cgroup() {
  local rel=$1 shares=$2 ss parent
  for ss in "${subsystems[@]}"; do
    mkdir "$cgroot/$ss/$rel"
    made_cgroups+=("$ss/$rel")
  done
  echo "$shares" >"$cgroot/cpu/$rel/cpu.shares"
  # A new cpuset is empty; tasks can join only once it has CPUs and memory nodes.
  parent=$(dirname "$cgroot/cpuset/$rel")
  cat "$parent/cpuset.cpus" >"$cgroot/cpuset/$rel/cpuset.cpus"
  cat "$parent/cpuset.mems" >"$cgroot/cpuset/$rel/cpuset.mems"
}
make_cgroup kubepods $((ncpu * 1024))
make_cgroup kubepods/burstable 1024
make_cgroup kubepods/besteffort 2
make_cgroup "$ls_pod" 1024
make_cgroup "$ls_pod/$ls_cid" 1024
make_cgroup "$be_pod" 2
make_cgroup "$be_pod/$be_cid" 2
client=()
if [[ -n $client_shares ]]; then
  make_cgroup koord-bench-client "$client_shares"
  client=(run_in koord-bench-client)
fi

# Starts a command inside a container's cgroups (memory excepted: this shell's memory cgroup may
# be the machine's own limit, and memory plays no part here).
start_in() {
  local rel=$1 out=$2
  shift 2
  (
    for ss in cpu cpuacct cpuset; do echo "$BASHPID" >"$cgroot/$ss/$rel/cgroup.procs"; done
    exec "$@"
  ) </dev/null >"$out" 2>&1 &
}

# Runs a command in the foreground inside a cgroup (cpu, cpuacct, cpuset).
run_in() {
  local rel=$1
  shift
  (
    for ss in cpu cpuacct cpuset; do echo "$BASHPID" >"$cgroot/$ss/$rel/cgroup.procs"; done
    exec "$@"
  )
}

# ---- nginx: a small file, and a ~35 KB text file gzipped on every request ---------------------
www=$work/www
mkdir -p "$www/gz" "$work/nginx"
head -c 512 /dev/urandom | base64 -w 76 >"$www/small.html"
if [[ -f /usr/share/common-licenses/GPL-3 ]]; then
  cp /usr/share/common-licenses/GPL-3 "$www/gz/text.txt"
else
  for _ in $(seq 400); do echo "The quick brown fox jumps over the lazy dog $RANDOM $RANDOM"; done \
    >"$www/gz/text.txt"
fi
chmod -R a+rX "$www"
nginx_port=
for p in $(seq 18080 18180); do
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then nginx_port=$p; break; fi
done
[[ -n $nginx_port ]] || die "no free port in 18080-18180 for nginx"
cat >"$work/nginx/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 2;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 300s;
  default_type text/html;
  types { text/plain txt; }
  client_body_temp_path $work/nginx;
  proxy_temp_path $work/nginx;
  fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx;
  scgi_temp_path $work/nginx;
  server {
    # reuseport: the kernel spreads connections over both workers (else one takes most).
    listen 127.0.0.1:$nginx_port reuseport;
    root $www;
    location /gz/ { gzip on; gzip_comp_level 1; gzip_types text/plain; gzip_min_length 256; }
  }
}
EOF
start_in "$ls_pod/$ls_cid" "$work/nginx/stdout.log" nginx -e "$work/nginx/error.log" \
  -c "$work/nginx/nginx.conf" -p "$work/nginx"
nginx_pid=$!
for _ in $(seq 50); do
  curl -sf "http://127.0.0.1:$nginx_port/small.html" >/dev/null && break
  sleep 0.1
done
curl -sf "http://127.0.0.1:$nginx_port/small.html" >/dev/null ||
  die "nginx does not answer; $(cat "$work/nginx/error.log" "$work/nginx/stdout.log")"
[[ $(curl -s -H 'Accept-Encoding: gzip' -o /dev/null -w '%{size_download}' \
  "http://127.0.0.1:$nginx_port/gz/text.txt") -lt $(stat -c %s "$www/gz/text.txt") ]] ||
  die "nginx does not gzip /gz/text.txt"

# ---- measuring ---------------------------------------------------------------------------------
clk_tck=$(getconf CLK_TCK)
cpuacct() { cat "$cgroot/cpuacct/$1/cpuacct.usage"; }
steal_ticks() { awk '/^cpu / {print $9}' /proc/stat; }
busy_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
now() { date +%s.%N; }
be_quota_file=$cgroot/cpu/kubepods/besteffort/cpu.cfs_quota_us
be_cpus_file=$cgroot/cpuset/kubepods/besteffort/cpuset.cpus
be_idle_file=$cgroot/cpu/kubepods/besteffort/cpu.idle
[[ -f $be_idle_file ]] || die "this kernel has no cpu.idle (Linux 5.15+); the SCHED_IDLE rows need it"

# hey at `rate` requests/s over `workers` keep-alive connections (each worker paces itself at
# rate/workers and waits for its answer, so a slow server also lowers the achieved rate).
load() {
  local secs=$1 rate=$2 workers=$3 path=$4 out=$5
  local -a extra=()
  # Asking for gzip ourselves keeps hey from inflating the body: the client's CPU stays small.
  [[ $path != /gz/* ]] || extra=(-H "Accept-Encoding: gzip")
  "${client[@]}" hey -z "${secs}s" -c "$workers" -q $((rate / workers)) -t 10 "${extra[@]}" \
    "http://127.0.0.1:$nginx_port$path" >"$out"
}

# A kubelet started meanwhile would kill our pods' processes as orphans and remove their cgroups.
still_alone() {
  local pids
  if pids=$(pgrep -x kubelet); then
    die "a kubelet started during the run (pid $(echo "$pids" | tr '\n' ' '));" \
      "it treats our pods' cgroups as orphans. Results void; run again when it has stopped."
  fi
  [[ -d $cgroot/cpuacct/$ls_pod && -d $cgroot/cpuacct/$be_pod ]] ||
    die "our pod cgroups disappeared during the run (another kubelet's or test's cleanup?)"
  kill -0 "$nginx_pid" 2>/dev/null || die "nginx is gone; $(cat "$work/nginx/error.log")"
}

results=()
# One measured run: warm-up, then `seconds` of load; LS and BE CPU from their pod cgroups.
measure() {
  local round=$1 label=$2 load_name=$3 rate=$4 workers=$5 path=$6 out
  out=$work/hey-$round-${label//[^A-Za-z0-9]/_}-$load_name.txt
  still_alone
  load "$warmup" "$rate" "$workers" "$path" /dev/null
  stop_pid "$sampler_pid"
  (while true; do
    echo "$(<"$be_quota_file") $(<"$be_cpus_file") $(<"$be_idle_file")"
    sleep 1
  done) >"$work/quota-samples" &
  sampler_pid=$!
  local t0 ls0 be0 st0 bz0 t1 ls1 be1 st1 bz1
  t0=$(now) ls0=$(cpuacct "$ls_pod") be0=$(cpuacct "$be_pod") st0=$(steal_ticks) bz0=$(busy_ticks)
  load "$seconds" "$rate" "$workers" "$path" "$out"
  t1=$(now) ls1=$(cpuacct "$ls_pod") be1=$(cpuacct "$be_pod") st1=$(steal_ticks) bz1=$(busy_ticks)
  stop_pid "$sampler_pid"
  sampler_pid=
  still_alone
  local rps p50 p99 errors quota cpus idle
  rps=$(awk '/Requests\/sec:/ {print $2}' "$out")
  p50=$(awk '$1 == "50%" {print $3 * 1000}' "$out")
  p99=$(awk '$1 == "99%" {print $3 * 1000}' "$out")
  # Answers other than 200, plus requests that got no answer.
  errors=$(awk '/^Status code distribution:/ {s = 1; e = 0; next}
    /^Error distribution:/ {e = 1; s = 0; next}
    s && $1 ~ /^\[[0-9]+\]$/ && $1 != "[200]" {n += $2}
    e && $1 ~ /^\[[0-9]+\]$/ {gsub(/[][]/, "", $1); n += $1}
    END {print n + 0}' "$out")
  # Mean over the run's samples; a limit of -1 is none.
  quota=$(awk '$1 < 0 {u++; next} {s += $1; n++} END {
      if (n == 0) print "none"; else printf "%.2f%s", s / n / 100000, (u ? sprintf(" (none %ds)", u) : "")
    }' "$work/quota-samples")
  cpus=$(awk '{c = $2} END {print c}' "$work/quota-samples")
  idle=$(awk '{i = $3} END {print i}' "$work/quota-samples")
  results+=("$(awk -v round="$round" -v label="$label" -v load="$load_name" -v rate="$rate" \
    -v rps="$rps" -v p50="$p50" -v p99="$p99" -v err="$errors" -v t0="$t0" -v t1="$t1" \
    -v ls=$((ls1 - ls0)) -v be=$((be1 - be0)) -v st=$((st1 - st0)) -v bz=$((bz1 - bz0)) \
    -v tck="$clk_tck" -v ncpu="$ncpu" -v quota="$quota" -v cpus="$cpus" -v idle="$idle" 'BEGIN {
      secs = t1 - t0; ls_cores = ls / 1e9 / secs; be_cores = be / 1e9 / secs
      free = ncpu - ls_cores; other = bz / tck / secs - ls_cores - be_cores
      printf "%d|%s|%s|%d|%.0f|%.2f|%.1f|%.2f|%.2f|%.0f|%.2f|%s|%s|%s|%.1f|%d", round, load, label,
        rate, rps, p50, p99, ls_cores, be_cores, 100 * be_cores / free, other, quota, cpus, idle,
        100 * st / tck / secs / ncpu, err
    }')")
  log "round $round, $label, $load_name: ${rps} req/s, p50 ${p50} ms, p99 ${p99} ms"
}

light_workers=20 heavy_workers=40
# Both loads for one configuration.
measure_both() {
  measure "$1" "$2" light "$light_rate" "$light_workers" /small.html
  measure "$1" "$2" heavy "$heavy_rate" "$heavy_workers" /gz/text.txt
}

# The heavy rate is what makes nginx use --heavy-cores alone. Two 10 s probes: the cost per
# request grows a little with the rate.
heavy_rate=400
for _ in 1 2; do
  p0=$(cpuacct "$ls_pod") t0=$(now)
  load 10 "$heavy_rate" "$heavy_workers" /gz/text.txt /dev/null
  p1=$(cpuacct "$ls_pod") t1=$(now)
  heavy_rate=$(awk -v r="$heavy_rate" -v c=$((p1 - p0)) -v t0="$t0" -v t1="$t1" \
    -v want="$heavy_cores" -v w="$heavy_workers" 'BEGIN {
      cores = c / 1e9 / (t1 - t0); rate = r * want / cores
      printf "%d", int(rate / w + 0.5) * w
    }')
  ((heavy_rate >= heavy_workers)) || die "could not find the heavy rate (probe gave $heavy_rate)"
done
log "heavy load: ${heavy_rate} req/s"

# The NodeSLO for one koordlet configuration: suppression on or off and its policy, and whether
# the CoreSched hook puts the besteffort tier under SCHED_IDLE (policy coreSched, schedIdle 1).
set_slo() {
  local enable=$1 policy=$2 cpu_policy=$3
  kubectl patch nodeslo "$node" --type=merge -p "{\"spec\": {
    \"resourceUsedThresholdWithBE\": {\"enable\": $enable, \"cpuSuppressPolicy\": \"$policy\"},
    \"resourceQOSStrategy\": {\"policies\": {\"cpuPolicy\": \"$cpu_policy\"}}}}" >/dev/null
}
# Waits until the besteffort tier shows a configuration: quota "set" or "none", cpu.idle 0/1.
await_be() {
  local want_quota=$1 want_idle=$2 what=$3 q
  for _ in $(seq 150); do
    kill -0 "$koordlet_pid" 2>/dev/null || die "the koordlet exited; log: $klog"
    q=$(<"$be_quota_file")
    if [[ $(<"$be_idle_file") == "$want_idle" ]] &&
      { [[ $want_quota == set && $q != -1 ]] || [[ $want_quota == none && $q == -1 ]]; }; then
      log "koordlet applied $what (quota $q, cpu.idle $want_idle, cpuset $(<"$be_cpus_file"))"
      return 0
    fi
    sleep 0.2
  done
  die "the koordlet did not apply $what in 30 s (quota $q, cpu.idle $(<"$be_idle_file")); log: $klog"
}

# What the kubelet leaves on the besteffort tier and the BE pod: no quota, every CPU, no idle.
reset_be_cgroups() {
  local all d
  all=$(<"$cgroot/cpuset/kubepods/cpuset.cpus")
  echo -1 >"$be_quota_file"
  echo 0 >"$be_idle_file"
  for d in kubepods/besteffort "$be_pod" "$be_pod/$be_cid"; do
    echo "$all" >"$cgroot/cpuset/$d/cpuset.cpus"
  done
}

klog=$work/koordlet.log
start_koordlet() {
  NODE_NAME=$node agent_mode=hostMode "$work/koord" koordlet -kubeconfig="$KOORD_KUBECONFIG" \
    -cgroup-root-dir="$cgroot/" -sys-root-dir=/sys/ -proc-root-dir=/proc/ -addr=127.0.0.1:0 \
    -kubelet-insecure-tls -kubelet-read-only-port="$kubelet_port" -collect-res-used-interval=1s \
    -runtime-hooks-reconcile-interval=1s -feature-gates=CoreSched=true -v=3 >>"$klog" 2>&1 &
  koordlet_pid=$!
}

start_hog() {
  start_in "$be_pod/$be_cid" "$work/stress-ng.log" stress-ng --cpu "$ncpu"
  hog_pid=$!
  sleep 2
}

labels=("LS alone" "+ BE hog, no koordlet" "+ koordlet: cfsQuota" "+ koordlet: cfsQuota + cpu.idle"
  "+ koordlet: cpuset" "+ koordlet: cpu.idle, no suppress")
for ((round = 1; round <= rounds; round++)); do
  log "round $round of $rounds"
  measure_both "$round" "${labels[0]}"
  start_hog
  measure_both "$round" "${labels[1]}"

  set_slo true cfsQuota groupIdentity
  start_koordlet
  await_be set 0 "cfsQuota"
  measure_both "$round" "${labels[2]}"
  set_slo true cfsQuota coreSched
  await_be set 1 "cfsQuota + cpu.idle"
  measure_both "$round" "${labels[3]}"
  set_slo true cpuset groupIdentity
  await_be none 0 "cpuset"
  measure_both "$round" "${labels[4]}"
  set_slo false cpuset coreSched
  await_be none 1 "cpu.idle without suppression"
  measure_both "$round" "${labels[5]}"

  stop_pid "$koordlet_pid"
  koordlet_pid=
  stop_pid "$hog_pid"
  hog_pid=
  reset_be_cgroups
done

koordlet_warnings=$(grep -c '^W' "$klog" || true)

echo
echo "LS nginx (Burstable, 1 CPU requested) vs BE stress-ng --cpu $ncpu (BestEffort); $rounds rounds of"
echo "${seconds}s per row after ${warmup}s warm-up; light: a $(stat -c %s "$www/small.html")-byte file, $light_workers connections;"
echo "heavy: a $(stat -c %s "$www/gz/text.txt")-byte text gzipped per request (level 1), $heavy_workers connections, rate for"
echo "${heavy_cores} LS cores; $ncpu CPUs; other cores = node busy - LS - BE (hey, koordlet, cluster, rest);"
if [[ -n $client_shares ]]; then
  echo "hey in a cgroup of its own beside kubepods, cpu.shares $client_shares"
else
  echo "hey in the root cgroup, as a host process"
fi
echo "koord $(sed -n 's/.*(git commit \([^)]*\)).*/\1/p' "$klog" | head -n1); NodeSLO threshold 65 %"
echo
# Per round, each row's p99 against that round's LS alone at the same load.
rows=$(printf '%s\n' "${results[@]}" | awk -F'|' '
  $3 == "LS alone" {alone[$1 "|" $2] = $7}
  {line[NR] = $0; key[NR] = $1 "|" $2; p99[NR] = $7}
  END {
    for (i = 1; i <= NR; i++) {
      b = alone[key[i]]
      printf "%s|%s\n", line[i], (b > 0 ? sprintf("%+.0f", 100 * (p99[i] - b) / b) : "")
    }
  }')
echo "Summary (median over rounds; p99 vs alone is the median of each round's ratio):"
echo
echo "| load | run | achieved/s | p50 ms | p99 ms | p99 vs alone | rounds within +25 % | LS cores | BE cores | BE / (CPUs - LS) | BE quota (cores) | steal |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for l in light heavy; do
  for label in "${labels[@]}"; do
    printf '%s\n' "$rows" | awk -F'|' -v l="$l" -v label="$label" -v rounds="$rounds" '
      function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
          t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      }
      $2 == l && $3 == label {
        n++; rps[n] = $5; p50[n] = $6; p99[n] = $7; ls[n] = $8; be[n] = $9; share[n] = $10
        st[n] = $15; q = $12; if (q != "none") {nq++; quota[nq] = q + 0}
        if ($17 != "") {nd++; d[nd] = $17; if ($17 <= 25) ok++}
      }
      END {
        if (n == 0) exit
        printf "| %s | %s | %.0f | %.1f | %.1f | %s | %s | %.2f | %.2f | %.0f %% | %s | %.1f %% |\n",
          l, label, median(rps, n), median(p50, n), median(p99, n),
          (label == "LS alone" ? "" : sprintf("%+.0f %%", median(d, nd))),
          (label == "LS alone" ? "" : sprintf("%d of %d", ok, nd)), median(ls, n), median(be, n),
          median(share, n), (nq ? sprintf("%.2f", median(quota, nq)) : "none"), median(st, n)
      }'
  done
done
echo
echo "Every row:"
echo
echo "| round | load | run | rate/s | achieved/s | p50 ms | p99 ms | p99 vs alone | LS cores | BE cores | BE / (CPUs - LS) | other cores | BE quota (cores, mean) | BE cpuset | BE cpu.idle | steal | errors |"
echo "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "$rows" | awk -F'|' '{
  printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s %% | %s | %s | %s | %s | %s %% | %s |\n",
    $1, $2, $3, $4, $5, $6, $7, ($17 == "" ? "" : $17 " %"), $8, $9, $10, $11, $12, $13, $14, $15, $16
}'
echo
echo "koordlet log: $koordlet_warnings warning lines (kept with KOORD_BENCH_KEEP=1: $klog)"
echo "Target: p99 within +25 % of LS alone at both loads, BE keeping >= 50 % of the CPU LS leaves idle."
echo "Koordinator (published): +25 % p99 with kernel-level isolation, +141 % without."
