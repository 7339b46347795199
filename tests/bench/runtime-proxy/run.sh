#!/usr/bin/env bash
# runtime-proxy benchmark: the same CRI calls straight to containerd and through koord
# runtime-proxy, alternating, in one run: p50/p99 per call and what the proxy adds; then again
# with a hook server registered (hooked calls pay a real hook round trip).
#
#   tests/bench/runtime-proxy/run.sh [--koord PATH] [--bench PATH] [--iterations 2000]
#       [--cycles 40] [--pin | --pin-together] [--hook-server koord|grpcpp] [--relay PATH]
#
# --pin runs the proxy on the last CPU and the bench on the first (taskset), containerd where
# the kernel puts it: on a small VM a proxy thread that migrates between CPUs, or waits behind
# the bench, shows up in the tail as if the relay were slow. --pin-together puts both on CPU 0,
# so that waking one from the other needs no cross-CPU interrupt. After the pass-through run
# the proxy's own CPU time per relayed call is printed too. --hook-server grpcpp serves the
# hooked run's hooks with grpc++'s server instead of koord's (the koordlet's).
#
# Between the two, the pass-through calls are timed once more through koord_bench_byte_relay, a
# relay that copies bytes and parses nothing: the floor any proxy pays on this machine (two socket
# wake-ups per call), printed so that the proxy's "added" figures can be read against it. Each
# pass-through table also has an A/A line (a second direct channel): the spread of the p99
# difference itself at that many calls.
#
# The containerd is tests/cluster's node (`cluster.sh up` and `node`, in a temp dir of its own);
# its kubelet and control plane are stopped once the node is up, so that nothing but the bench
# talks to containerd or shares its CPUs.
# Needs root (containerd, cgroups). With OUT_DIR set the tables also go to
# $OUT_DIR/runtime-proxy-bench.txt.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
koord=
bench=
relay=
iterations=2000
cycles=40
pin=()
bench_pin=()
hook_server=koord
while (($#)); do
  case $1 in
    --koord) koord=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --relay) relay=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --cycles) cycles=$2; shift 2 ;;
    --pin) pin=(taskset -c "$(($(nproc) - 1))"); bench_pin=(taskset -c 0); shift ;;
    --pin-together) pin=(taskset -c 0); bench_pin=(taskset -c 0); shift ;;
    --hook-server) hook_server=$2; shift 2 ;;
    *) echo "usage: $0 [--koord PATH] [--bench PATH] [--relay PATH] [--iterations N] [--cycles N] [--pin|--pin-together] [--hook-server koord|grpcpp]" >&2; exit 2 ;;
  esac
done
log() { printf 'runtime-proxy bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
for d in build-sched-bench build build-mgr; do
  [[ -z $koord && -x $root/$d/src/koord ]] && koord=$root/$d/src/koord
  [[ -z $bench && -x $root/$d/tests/bench/koord_bench_runtime_proxy ]] &&
    bench=$root/$d/tests/bench/koord_bench_runtime_proxy
done
# The byte relay from the bench's build tree unless given.
[[ -z $relay ]] && relay=$(dirname "$bench")/koord_bench_byte_relay
[[ -x $koord ]] || die "no koord binary (build one, or pass --koord)"
[[ -x $bench ]] || die "no koord_bench_runtime_proxy (ninja koord_bench_runtime_proxy, or --bench)"
[[ -x $relay ]] || die "no koord_bench_byte_relay (ninja koord_bench_byte_relay, or --relay)"

work=$(mktemp -d /tmp/koord-bench-proxy.XXXXXX)
export KOORD_CLUSTER_DIR=$work/cluster
cp "$koord" "$work/koord"
cp "$bench" "$work/bench"
cp "$relay" "$work/relay"
proxy_pid=
relay_pid=
cleanup() {
  [[ -n $proxy_pid ]] && kill "$proxy_pid" 2>/dev/null && wait "$proxy_pid" 2>/dev/null || true
  [[ -n $relay_pid ]] && kill "$relay_pid" 2>/dev/null && wait "$relay_pid" 2>/dev/null || true
  "$root/tests/cluster/cluster.sh" down >/dev/null 2>&1 || true
  [[ ${KOORD_BENCH_KEEP:-} == 1 ]] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$root/tests/cluster/cluster.sh" up >&2
"$root/tests/cluster/cluster.sh" node >&2
set -a
# shellcheck source=/dev/null
. "$KOORD_CLUSTER_DIR/env"
set +a
# The kubelet would garbage-collect the bench's sandboxes as pods it does not know, and the
# control plane would share the CPUs with what is measured: only containerd stays.
for daemon in kubelet kube-controller-manager kube-apiserver etcd; do
  read -r pid _ <"$KOORD_CLUSTER_DIR/$daemon.pid"
  kill "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
done

proxy_sock=$work/proxy.sock
# The proxy's /metrics: koord_runtime_proxy_hook_duration_seconds says what the pre hooks add.
metrics_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${pin[@]}" "$work/koord" runtime-proxy --koord-runtimeproxy-endpoint="$proxy_sock" \
  --metrics-addr="127.0.0.1:$metrics_port" \
  --remote-runtime-service-endpoint="$KOORD_CONTAINERD_SOCK" \
  --hook-server-config-dir="$work/hookserver.d" >"$work/proxy.log" 2>&1 &
proxy_pid=$!
for _ in $(seq 1 50); do [[ -S $proxy_sock ]] && break; sleep 0.1; done
[[ -S $proxy_sock ]] || die "the proxy did not start: $(cat "$work/proxy.log")"

log "load average $(cut -d' ' -f1 /proc/loadavg), $(nproc) CPUs, $iterations rounds, $cycles lifecycles${pin:+, pinned}"
# A process's CPU time (user + system, clock ticks), read around a run: what each relayed call
# costs it, apart from the wake-ups the latency figures include.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
out=$work/out.txt
ticks0=$(cpu_ticks "$proxy_pid")
"${bench_pin[@]}" "$work/bench" --direct "$KOORD_CONTAINERD_SOCK" --proxy "$proxy_sock" --image "$KOORD_TEST_IMAGE" \
  --iterations "$iterations" --cycles "$cycles" | tee "$out"
ticks=$(($(cpu_ticks "$proxy_pid") - ticks0))
curl -fsS "http://127.0.0.1:$metrics_port/metrics" >"$work/metrics.before"
# Each round relays Version and ListContainers once (ContainerStatus too when a container exists;
# not counted), plus 7 calls per lifecycle.
relayed=$((iterations * 2 + cycles * 7))
echo "proxy CPU: $((ticks * 1000000 / $(getconf CLK_TCK))) us for about $relayed relayed calls," \
  "$((ticks * 1000000 / $(getconf CLK_TCK) / relayed)) us per call" | tee -a "$out"
# The floor: the same pass-through calls through a relay that parses nothing.
relay_sock=$work/relay.sock
"${pin[@]}" "$work/relay" --listen "$relay_sock" --runtime "$KOORD_CONTAINERD_SOCK" >"$work/relay.log" 2>&1 &
relay_pid=$!
for _ in $(seq 1 50); do [[ -S $relay_sock ]] && break; sleep 0.1; done
[[ -S $relay_sock ]] || die "the byte relay did not start: $(cat "$work/relay.log")"
relay_ticks0=$(cpu_ticks "$relay_pid")
"${bench_pin[@]}" "$work/bench" --direct "$KOORD_CONTAINERD_SOCK" --proxy "$relay_sock" --image "$KOORD_TEST_IMAGE" \
  --iterations "$iterations" --cycles 0 --proxy-name "byte relay (floor, parses nothing)" | tee -a "$out"
relay_ticks=$(($(cpu_ticks "$relay_pid") - relay_ticks0))
echo "byte relay CPU: $((relay_ticks * 1000000 / $(getconf CLK_TCK) / (iterations * 2))) us per call" | tee -a "$out"
kill "$relay_pid" 2>/dev/null || true
wait "$relay_pid" 2>/dev/null || true
relay_pid=
"${bench_pin[@]}" "$work/bench" --direct "$KOORD_CONTAINERD_SOCK" --proxy "$proxy_sock" --image "$KOORD_TEST_IMAGE" \
  --iterations "$((iterations / 4))" --cycles "$cycles" --hook-dir "$work/hookserver.d" --hook-server "$hook_server" | tee -a "$out"
# Bucket bounds, so "p99 <= 400 us" reads: 99 % of the calls were held at most that long. Only
# the hooked run counts: the histogram before it is subtracted (without a hook server registered
# the pre hooks cost nothing and would pull the quantiles down).
curl -fsS "http://127.0.0.1:$metrics_port/metrics" >"$work/metrics.after"
awk '
  FNR == 1 { sign = (FILENAME == ARGV[1]) ? -1 : 1 }
  /^koord_runtime_proxy_hook_duration_seconds_bucket/ && /result="ok"/ {
    match($0, /call="[^"]*"/); call = substr($0, RSTART + 6, RLENGTH - 7)
    match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5)
    if (sign > 0) { n[call]++; bound[call, n[call]] = le }
    cum[call, le] += sign * $2
  }
  /^koord_runtime_proxy_hook_duration_seconds_count/ && /result="ok"/ {
    match($0, /call="[^"]*"/); total[substr($0, RSTART + 6, RLENGTH - 7)] += sign * $2
  }
  function q(call, p,   i, le) {
    for (i = 1; i <= n[call]; i++) {
      le = bound[call, i]
      if (cum[call, le] >= p * total[call]) return le == "+Inf" ? "+Inf" : sprintf("%.0f us", le * 1e6)
    }
  }
  END { for (c in total) if (total[c] > 0) printf "hook time %-16s n=%d  p50 <= %s  p99 <= %s\n", c, total[c], q(c, 0.5), q(c, 0.99) }
' "$work/metrics.before" "$work/metrics.after" | tee -a "$out"
if [[ -n ${OUT_DIR:-} ]]; then
  mkdir -p "$OUT_DIR"
  cp "$out" "$OUT_DIR/runtime-proxy-bench.txt"
fi
