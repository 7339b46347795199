#!/usr/bin/env bash
# runtime-proxy benchmark: the same CRI calls straight to containerd and through koord
# runtime-proxy, alternating, in one run: p50/p99 per call and what the proxy adds; then again
# with a hook server registered (hooked calls pay a real hook round trip).
#
#   tests/bench/runtime-proxy/run.sh [--koord PATH] [--bench PATH] [--iterations 2000]
#       [--cycles 40]
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
iterations=2000
cycles=40
while (($#)); do
  case $1 in
    --koord) koord=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --cycles) cycles=$2; shift 2 ;;
    *) echo "usage: $0 [--koord PATH] [--bench PATH] [--iterations N] [--cycles N]" >&2; exit 2 ;;
  esac
done
log() { printf 'runtime-proxy bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
for d in build-sched-bench build build-mgr; do
  [[ -z $koord && -x $root/$d/src/koord ]] && koord=$root/$d/src/koord
  [[ -z $bench && -x $root/$d/tests/bench/koord_bench_runtime_proxy ]] &&
    bench=$root/$d/tests/bench/koord_bench_runtime_proxy
done
[[ -x $koord ]] || die "no koord binary (build one, or pass --koord)"
[[ -x $bench ]] || die "no koord_bench_runtime_proxy (ninja koord_bench_runtime_proxy, or --bench)"

work=$(mktemp -d /tmp/koord-bench-proxy.XXXXXX)
export KOORD_CLUSTER_DIR=$work/cluster
cp "$koord" "$work/koord"
cp "$bench" "$work/bench"
proxy_pid=
cleanup() {
  [[ -n $proxy_pid ]] && kill "$proxy_pid" 2>/dev/null && wait "$proxy_pid" 2>/dev/null || true
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
"$work/koord" runtime-proxy --koord-runtimeproxy-endpoint="$proxy_sock" \
  --remote-runtime-service-endpoint="$KOORD_CONTAINERD_SOCK" \
  --hook-server-config-dir="$work/hookserver.d" >"$work/proxy.log" 2>&1 &
proxy_pid=$!
for _ in $(seq 1 50); do [[ -S $proxy_sock ]] && break; sleep 0.1; done
[[ -S $proxy_sock ]] || die "the proxy did not start: $(cat "$work/proxy.log")"

log "load average $(cut -d' ' -f1 /proc/loadavg), $(nproc) CPUs, $iterations rounds, $cycles lifecycles"
out=$work/out.txt
"$work/bench" --direct "$KOORD_CONTAINERD_SOCK" --proxy "$proxy_sock" --image "$KOORD_TEST_IMAGE" \
  --iterations "$iterations" --cycles "$cycles" | tee "$out"
"$work/bench" --direct "$KOORD_CONTAINERD_SOCK" --proxy "$proxy_sock" --image "$KOORD_TEST_IMAGE" \
  --iterations "$((iterations / 4))" --cycles "$cycles" --hook-dir "$work/hookserver.d" | tee -a "$out"
if [[ -n ${OUT_DIR:-} ]]; then
  mkdir -p "$OUT_DIR"
  cp "$out" "$OUT_DIR/runtime-proxy-bench.txt"
fi
