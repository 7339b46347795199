#!/usr/bin/env bash
# The README's "set up and run" command. Today it installs the dependencies, builds koord and its
# role symlinks into build/, and shows what runs; the local single-node cluster with koord
# running in it (tests/cluster, issue 8) is not wired in yet, and this script says so rather
# than pretending.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scripts/install-deps.sh
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/koord-ccache}
cmake -S "$root" -B "$root/build" -G Ninja -DKOORD_BUILD_TESTS=OFF >/dev/null
ninja -C "$root/build" koord
"$root/build/src/koord" version
"$root/build/src/koord" --help
cat <<MSG

koord is built: $root/build/src/koord (and the koord-<role> symlinks beside it).
Not yet: the local Kubernetes cluster with koord running in it. Every role starts, serves
/healthz and /metrics, and reports itself not ready until its work lands (see README status).
MSG
