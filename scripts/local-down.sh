#!/usr/bin/env bash
# Stops the local cluster scripts/local-up.sh started (koord roles, kubelet, containerd and its
# containers, runtime-proxy, controller-manager, apiserver, etcd), leaving no process behind.
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/local-up.sh" down
