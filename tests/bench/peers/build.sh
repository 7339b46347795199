#!/usr/bin/env bash
# Builds koord-bench-peer-informer (client-go's informers, tests/bench/peers/client-go-informer)
# from the same Debian kubernetes 1.20.2 source tree tests/cluster/cluster.sh builds the test
# cluster from, and prints the binary's path as the last line on stdout. Logs go to stderr.
#
#   tests/bench/peers/build.sh            build when needed (~1-2 min once), else just print the path
#
# Environment (shared with cluster.sh):
#   KOORD_K8S_CACHE          cache (default ${XDG_CACHE_HOME:-~/.cache}/koord-k8s); the binary goes
#                            to $KOORD_K8S_CACHE/peers/
#   KOORD_K8S_KEEP_WORK=1    keep the unpacked tree ($CACHE/peer-work) and the Go build cache
#                            ($CACHE/peer-gocache) for faster rebuilds; by default both are
#                            deleted after a build (unpacking again takes seconds)
set -euo pipefail

readonly K8S_VERSION=v1.20.2
# Bump when this recipe changes: a binary built by another recipe is rebuilt.
readonly PEER_RECIPE="$K8S_VERSION debian-src peer recipe 1"
readonly PEER_NAME=koord-bench-peer-informer
readonly REFLECT2=/usr/share/gocode/src/github.com/modern-go/reflect2

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLUSTER_SH=$(cd "$HERE/../../cluster" && pwd)/cluster.sh
MAIN_GO=$HERE/client-go-informer/main.go
CACHE=${KOORD_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/koord-k8s}
OUT_DIR=$CACHE/peers
OUT=$OUT_DIR/$PEER_NAME
WORK=$CACHE/peer-work
GOPATH_DIR=$WORK/gopath
TREE=$GOPATH_DIR/src/k8s.io/kubernetes
GOCACHE_DIR=$CACHE/peer-gocache

log() { printf 'peers/build.sh: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

tarball() { compgen -G "$CACHE/src/kubernetes_*.orig.tar.*" | head -n1; }

# What the binary was built from; a binary whose stamp differs is rebuilt. Empty when something
# it needs is missing (no Go, no source yet), which also means "build".
expected_stamp() {
  local tb go_version
  tb=$(tarball) || return 0
  [[ -n $tb && -f $REFLECT2/reflect2.go ]] || return 0
  go_version=$(go version 2>/dev/null) || return 0
  printf '%s|%s|%s|%s|%s\n' "$PEER_RECIPE" "$(basename "$tb")" "$go_version" \
    "$(sha256sum <"$MAIN_GO" | cut -d' ' -f1)" "$(sha256sum <"$REFLECT2/reflect2.go" | cut -d' ' -f1)"
}

up_to_date() {
  local want
  want=$(expected_stamp)
  [[ -n $want && -x $OUT && -f $OUT.stamp && $(<"$OUT.stamp") == "$want" && $OUT -nt $MAIN_GO ]]
}

# cluster.sh fetches the source only when it compiles Kubernetes itself, so with its binaries
# cached the tarball may still be missing: fetch it the way cluster.sh does (same deb-src entry).
download_source() {
  local dest=$CACHE/src
  mkdir -p "$dest"
  [[ -n $(tarball) ]] && return 0
  ((EUID == 0)) || die "need root to download the kubernetes source package"
  if [[ -z $(apt-cache showsrc kubernetes 2>/dev/null) ]]; then
    log "adding a deb-src entry for bookworm"
    cat >/etc/apt/sources.list.d/koord-deb-src.sources <<'EOF'
# Added by koord's tests/cluster/cluster.sh: the kubernetes source package.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    apt-get -q -o DPkg::Lock::Timeout=600 update >/dev/null
  fi
  log "downloading the kubernetes source package"
  (cd "$dest" && apt-get -q source --download-only kubernetes >/dev/null 2>&1) ||
    die "apt-get source kubernetes failed"
  [[ -n $(tarball) ]] || die "no orig tarball in $dest"
}

# The unpacked tree with vendored reflect2 replaced, reused while its stamp matches (only kept
# across runs with KOORD_K8S_KEEP_WORK=1).
prepare_tree() {
  local tb want
  tb=$(tarball)
  want="$PEER_RECIPE|$(basename "$tb")|$(sha256sum <"$REFLECT2/reflect2.go" | cut -d' ' -f1)"
  if [[ -f $WORK/.stamp && $(<"$WORK/.stamp") == "$want" && -d $TREE ]]; then
    log "reusing the unpacked tree in $TREE"
    return 0
  fi
  rm -rf "$WORK"
  mkdir -p "$GOPATH_DIR/src/k8s.io"
  # Only what the peer compiles from: vendor/ and the staging modules client-go needs (vendor/k8s.io
  # links into staging/). Half the tree's files, and deleting a fresh tree is slow on a busy disk.
  log "unpacking vendor/ and client-go's staging modules from $(basename "$tb")"
  tar -xf "$tb" -C "$GOPATH_DIR/src/k8s.io" --wildcards '*/vendor/*' \
    '*/staging/src/k8s.io/api/*' '*/staging/src/k8s.io/apimachinery/*' \
    '*/staging/src/k8s.io/client-go/*'
  local top
  top=$(find "$GOPATH_DIR/src/k8s.io" -mindepth 1 -maxdepth 1 -type d | head -n1)
  [[ -n $top && -d $top/vendor/k8s.io && -d $top/staging/src/k8s.io/client-go ]] ||
    die "$(basename "$tb") holds no kubernetes tree"
  [[ $(basename "$top") == *1.20.2* ]] || die "$(basename "$tb") is not Kubernetes 1.20.2 ($top)"
  mv "$top" "$TREE"
  # The vendored reflect2 1.0.1 crashes at run time with Go >= 1.18 (cluster.sh explains);
  # Debian's 1.0.2 is API compatible.
  rm -rf "$TREE/vendor/github.com/modern-go/reflect2"
  cp -r "$REFLECT2" "$TREE/vendor/github.com/modern-go/reflect2"
  echo "$want" >"$WORK/.stamp"
}

build_peer() {
  # GOPATH mode resolves vendor/ only for packages inside the tree, so main.go goes into it.
  local pkg_dir=$TREE/cmd/$PEER_NAME
  rm -rf "$pkg_dir"
  mkdir -p "$pkg_dir"
  cp "$MAIN_GO" "$pkg_dir/main.go"
  local ldflags="-s -w -X main.k8sVersion=$K8S_VERSION"
  # client-go's version feeds the default User-Agent and /version checks, as in cluster.sh.
  local v=k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version
  ldflags+=" -X $v.gitMajor=1 -X $v.gitMinor=20 -X $v.gitVersion=$K8S_VERSION"
  ldflags+=" -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
  mkdir -p "$OUT_DIR"
  log "compiling $PEER_NAME (client-go from the vendored tree; ~1-2 minutes on 2 cores)"
  (
    cd "$TREE"
    export GO111MODULE=off GOPATH=$GOPATH_DIR GOFLAGS='' GOCACHE=$GOCACHE_DIR GOTOOLCHAIN=local
    go build -p 2 -ldflags "$ldflags" -o "$OUT.new" "./cmd/$PEER_NAME"
  )
  mv "$OUT.new" "$OUT"
}

cleanup_work() {
  if [[ ${KOORD_K8S_KEEP_WORK:-0} != 1 ]]; then
    rm -rf "$WORK" "$GOCACHE_DIR" # hundreds of MB that only a rebuild would need
  fi
}

main() {
  [[ -f $MAIN_GO ]] || die "$MAIN_GO missing"
  [[ -x $CLUSTER_SH ]] || die "$CLUSTER_SH missing"
  if up_to_date; then
    echo "$OUT"
    return 0
  fi
  mkdir -p "$CACHE"
  # One builder at a time; the others wait and then find the binary.
  local lock
  exec {lock}>"$CACHE/peer.lock"
  if ! flock -n "$lock"; then
    log "waiting for another build of $PEER_NAME"
    flock -w 1800 "$lock" || die "timed out waiting for $CACHE/peer.lock"
  fi
  if up_to_date; then
    echo "$OUT"
    return 0
  fi
  local t0=$SECONDS
  # Installs golang-go and Debian's reflect2 (and builds the cluster's binaries once).
  log "running $CLUSTER_SH build"
  "$CLUSTER_SH" build {lock}>&-
  download_source
  local stamp
  stamp=$(expected_stamp)
  [[ -n $stamp ]] || die "go, $REFLECT2 or the source tarball is still missing after cluster.sh build"
  trap cleanup_work EXIT
  prepare_tree
  build_peer
  echo "$stamp" >"$OUT.stamp"
  log "built $OUT in $((SECONDS - t0))s"
  echo "$OUT"
}

main "$@"
