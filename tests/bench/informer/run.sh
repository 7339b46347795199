#!/usr/bin/env bash
# Runs the informer benchmark end to end on a cluster of its own: starts tests/cluster's
# Kubernetes in /tmp/koord-bench-cluster, builds client-go's peer (tests/bench/peers/build.sh),
# builds koord (plain -O2, no sanitizers), creates 10,000 pods and 1,000 nodes, and prints the
# side-by-side table. Stops the cluster at the end unless KOORD_BENCH_KEEP=1.
#   tests/bench/informer/run.sh [--pods N] [--nodes M] [--rounds R]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
build=${KOORD_BENCH_BUILD:-$root/build-bench}
export KOORD_CLUSTER_DIR=${KOORD_CLUSTER_DIR:-/tmp/koord-bench-cluster}
export KOORD_CLUSTER_ENV=$KOORD_CLUSTER_DIR/env
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/koord-ccache}

"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKOORD_SANITIZE=OFF \
  -DKOORD_CLUSTER_TESTS=OFF >/dev/null
ninja -C "$build" koord_bench_informer
peer=$("$root/tests/bench/peers/build.sh" | tail -n1)

"$root/tests/cluster/cluster.sh" up
if [[ ${KOORD_BENCH_KEEP:-0} != 1 ]]; then
  trap '"$root/tests/cluster/cluster.sh" down' EXIT
fi
"$build/tests/bench/koord_bench_informer" compare --peer "$peer" "$@"
