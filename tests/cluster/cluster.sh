#!/usr/bin/env bash
# A real Kubernetes v1.20.2 on loopback for koord's tests, from Debian 12 packages only.
#
#   cluster.sh build     build kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
#                        kubectl and kubemark from Debian's kubernetes source package (cached;
#                        ~8 min once; a cache from before kubemark builds only kubemark)
#   cluster.sh up        etcd + kube-apiserver + kube-controller-manager; writes $dir/env (a
#                        no-op when this run dir's cluster is up; otherwise with an empty etcd);
#                        the apiserver's audit log of every write is $KOORD_AUDIT_LOG
#   cluster.sh node      containerd + kubelet as node $KOORD_NODE_NAME (default node-a); root,
#                        cgroups v1; one node per machine (kubelet's cgroups are machine-wide)
#   cluster.sh nodedown  stops the node part (containers included)
#   cluster.sh hollow-nodes N
#                        N kubemark hollow kubelets as nodes hollow-node-1..N, labelled
#                        koord.test/hollow-node=true: Ready Nodes whose pods run in a fake runtime
#                        (no containers, no cgroups, no root needed where /dev/kmsg is readable),
#                        beside the kubelet node or without it. Those missing (or started with
#                        another KOORD_HOLLOW_*) start, those beyond N stop: 0 stops them all
#   cluster.sh down      stops everything this run dir started (implies nodedown); idempotent
#   cluster.sh restart-apiserver
#                        stops kube-apiserver and starts it again on the same port and etcd
#                        (clients see their connections and watches drop)
#   cluster.sh restart-before-kubelet
#                        stops the node's KOORD_BEFORE_KUBELET process and starts the same
#                        command again (a CRI proxy restarted under a running kubelet)
#   cluster.sh status    what runs, and whether it is healthy
#   cluster.sh env       prints the env file (KOORD_APISERVER, KOORD_CA_FILE, KOORD_TOKEN, ...)
#
# Environment:
#   KOORD_CLUSTER_DIR        run dir: certs, logs, pid files, data (default /tmp/koord-cluster-$UID);
#                            one per cluster, so parallel test runs each use their own
#   KOORD_CLUSTER_PORT_BASE  first of 6 consecutive loopback ports; free ones are picked otherwise
#   KOORD_CLUSTER_FRESH=1    `up` restarts a cluster that is already up (fresh etcd) instead of
#                            keeping it; CTest's fixture sets it
#   KOORD_APISERVER_EXTRA_ARGS  more kube-apiserver flags for `up`, split on spaces (e.g.
#                            --runtime-config=policy/v1beta1=false); kept in the run dir, so
#                            restart-apiserver starts it the same way
#   KOORD_K8S_CACHE          binary cache (default ${XDG_CACHE_HOME:-~/.cache}/koord-k8s)
#   KOORD_K8S_KEEP_WORK=1    keep the Go source tree and build cache after a build
#   KOORD_NODE_NAME          node name for `node` (default node-a)
#   KOORD_BEFORE_KUBELET     a command `node` starts (in its own process group, with the env file's
#                            variables exported) before kubelet, e.g. a CRI proxy
#   KOORD_CRI_ENDPOINT       the unix socket kubelet talks CRI to (default: containerd's); `node`
#                            waits for it to appear, so KOORD_BEFORE_KUBELET can serve it
#   KOORD_HOLLOW_CPU, KOORD_HOLLOW_MEMORY, KOORD_HOLLOW_PODS
#                            each hollow node's capacity (default 4 cores, 16Gi, 110 pods);
#                            allocatable is the same (kubemark reserves nothing); ephemeral-storage 0
#   KOORD_HOLLOW_LABELS      more labels for the hollow nodes: key=value,...
#
# Pods on the node must use hostNetwork: true (CNI has only loopback) and imagePullPolicy: Never
# with the locally built image $KOORD_TEST_IMAGE (busybox; sh, sleep, cat, ...). Nothing listens
# on anything but 127.0.0.1 and unix sockets in the run dir, except the kubelet's API and
# read-only port, on all addresses: the apiserver reaches it at the node's own address for exec
# and logs (its API authenticates every caller; there are no anonymous requests).
set -euo pipefail

readonly K8S_VERSION=v1.20.2
# Bump when the build recipe changes: caches with another stamp are rebuilt.
readonly BUILD_STAMP="$K8S_VERSION debian-src recipe 1"
readonly K8S_COMPONENTS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl
  kubemark)
# kubemark carries koord's patch (patch_kubemark) on top of that recipe; its own stamp, so the
# patch can change without rebuilding the rest, and a cache from before kubemark builds only it.
readonly KUBEMARK_STAMP="$BUILD_STAMP; kubemark patch 2"
# What `up` itself runs.
readonly CONTROL_PLANE=(kube-apiserver kube-controller-manager kubectl)
readonly APT_PACKAGES=(etcd-server golang-go containerd runc containernetworking-plugins
  busybox-static golang-github-modern-go-reflect2-dev)
readonly TEST_IMAGE=koord.local/busybox:local
readonly NPORTS=6

CACHE=${KOORD_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/koord-k8s}
BIN=$CACHE/bin
DIR=${KOORD_CLUSTER_DIR:-${TMPDIR:-/tmp}/koord-cluster-$(id -u)}
NODE_NAME=${KOORD_NODE_NAME:-node-a}
# A running node keeps the name it started with, whatever the caller's environment says now.
if [[ -f $DIR/node.env ]]; then
  NODE_NAME=$(sed -n 's/^KOORD_NODE_NAME=//p' "$DIR/node.env")
fi

log() { printf 'cluster.sh: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# Prints the last lines of a component's log, so a failed wait explains itself in CTest output.
show_log() {
  local name=$1 file=$DIR/$1.log
  [[ -f $file ]] || return 0
  log "---- last lines of $file ----"
  tail -n "${2:-40}" "$file" >&2 || true
  log "---- end of $name log ----"
}

# ------------------------------------------------------------------------------------------------
# Processes. Every daemon runs in its own session (setsid), so its pid is also its process group:
# stopping the group catches anything it forked. The pid file records the start time as well,
# so a recycled pid is never mistaken for ours. Daemons get /dev/null and log files as stdio,
# because CTest waits for every holder of its output pipe to exit, and they never inherit our
# lock descriptors (a daemon holding the run dir lock would block every later command).
# ------------------------------------------------------------------------------------------------

proc_starttime() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }              # the command name may hold spaces and parentheses
  local -a fields
  read -r -a fields <<<"$stat"
  echo "${fields[19]}"           # field 22 of stat(5), counted after the name
}

proc_state() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  echo "${stat%% *}"
}

proc_alive() {
  local state
  state=$(proc_state "$1") || return 1
  [[ $state != Z && $state != X ]]
}

start_daemon() {
  local name=$1
  shift
  setsid "$@" </dev/null >"$DIR/$name.log" 2>&1 {dirlock}>&- &
  local pid=$!
  echo "$pid $(proc_starttime "$pid" || echo 0)" >"$DIR/$name.pid"
}

# The pid of a daemon of this run dir that is still alive, or failure.
daemon_pid() {
  local file=$DIR/$1.pid pid start
  [[ -f $file ]] || return 1
  read -r pid start <"$file" || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  proc_alive "$pid" || return 1
  [[ $(proc_starttime "$pid") == "$start" ]] || return 1
  echo "$pid"
}

# True while any live (non-zombie) process is left in the process group.
group_alive() {
  local p
  for p in $(pgrep -g "$1" 2>/dev/null); do
    proc_alive "$p" && return 0
  done
  return 1
}

# The process group of a daemon of this run dir while any of it lives, or failure. A leader that
# died may leave children: its pid cannot be handed out again while its group still exists, so
# an unused pid with live group members is still ours.
daemon_group() {
  local file=$DIR/$1.pid pid start
  [[ -f $file ]] || return 1
  read -r pid start <"$file" || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  if [[ -e /proc/$pid ]]; then
    [[ $(proc_starttime "$pid") == "$start" ]] || return 1
  fi
  group_alive "$pid" || return 1
  echo "$pid"
}

# SIGTERM to the daemon's process group, SIGKILL after the grace period.
stop_daemon() {
  local name=$1 grace=${2:-15} pid
  if pid=$(daemon_group "$name"); then
    kill -TERM -- "-$pid" 2>/dev/null || true
    local deadline=$((SECONDS + grace))
    while group_alive "$pid" && ((SECONDS < deadline)); do sleep 0.2; done
    if group_alive "$pid"; then
      log "$name did not stop in ${grace}s; killing it"
      kill -KILL -- "-$pid" 2>/dev/null || true
      deadline=$((SECONDS + 5))
      while group_alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
    fi
  fi
  rm -f "$DIR/$name.pid"
}

# Calls "$@" until it succeeds or `seconds` pass; fails early when the daemon `name` has died.
wait_for() {
  local name=$1 seconds=$2 what=$3
  shift 3
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if ! daemon_pid "$name" >/dev/null; then
      show_log "$name"
      die "$name exited while waiting for $what"
    fi
    if ((SECONDS >= deadline)); then
      show_log "$name"
      die "timed out after ${seconds}s waiting for $what"
    fi
    sleep 0.3
  done
}

# Serialises commands on one run dir (an `up` racing a `down`).
lock_dir() {
  mkdir -p "$DIR"
  exec {dirlock}>"$DIR/.lock"
  flock -w 600 "$dirlock" || die "another cluster.sh holds $DIR/.lock"
}

# ------------------------------------------------------------------------------------------------
# build
# ------------------------------------------------------------------------------------------------

# True when the cache holds component $1 as the current recipe builds it.
have_component() {
  [[ -x $BIN/$1 && -f $BIN/.stamp && $(<"$BIN/.stamp") == "$BUILD_STAMP" ]] || return 1
  [[ $1 != kubemark ]] ||
    [[ -f $BIN/.stamp-kubemark && $(<"$BIN/.stamp-kubemark") == "$KUBEMARK_STAMP" ]]
}

# The cached components are current: those named, or all of K8S_COMPONENTS.
have_binaries() {
  local -a want=("$@")
  ((${#want[@]})) || want=("${K8S_COMPONENTS[@]}")
  local c
  for c in "${want[@]}"; do have_component "$c" || return 1; done
}

# The components to build, one a line: all of them when the cache is another recipe's, else
# those it lacks (a cache from before kubemark: kubemark alone).
missing_components() {
  local c all=0
  [[ -f $BIN/.stamp && $(<"$BIN/.stamp") == "$BUILD_STAMP" ]] || all=1
  for c in "${K8S_COMPONENTS[@]}"; do
    if ((all)) || ! have_component "$c"; then echo "$c"; fi
  done
}

# Installs what is missing, and only that: a machine that has everything runs no apt at all.
install_packages() {
  local -a missing=()
  local p
  for p in "${APT_PACKAGES[@]}"; do
    [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  ((EUID == 0)) || die "missing packages ${missing[*]}; run as root to install them"
  log "installing ${missing[*]}"
  local -a apt=(apt-get -y -q -o DPkg::Lock::Timeout=600)
  export DEBIAN_FRONTEND=noninteractive
  if ! "${apt[@]}" install --no-install-recommends "${missing[@]}" >/dev/null; then
    "${apt[@]}" update >/dev/null          # stale lists are the usual reason
    "${apt[@]}" install --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# Debian ships the Kubernetes sources only as a source package; apt needs a deb-src entry.
download_source() {
  local dest=$1
  mkdir -p "$dest"
  compgen -G "$dest/kubernetes_*.orig.tar.*" >/dev/null && return 0
  ((EUID == 0)) || die "need root to download the kubernetes source package"
  if ! apt-cache showsrc kubernetes >/dev/null 2>&1 ||
    [[ -z $(apt-cache showsrc kubernetes 2>/dev/null) ]]; then
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
  compgen -G "$dest/kubernetes_*.orig.tar.*" >/dev/null || die "no orig tarball in $dest"
}

# The packages whose types carry +k8s:openapi-gen=true, as Go import paths, comma-separated.
openapi_packages() {
  grep -RlI --include='*.go' '^// *+k8s:openapi-gen=true' pkg vendor/k8s.io 2>/dev/null |
    grep -v -E '(_test\.go|/testdata/|/sample-apiserver/|/code-generator/)' |
    xargs -n1 dirname | sort -u |
    sed -e 's#^vendor/##' -e 's#^pkg/#k8s.io/kubernetes/pkg/#' | paste -sd, -
}

# Generates pkg/generated/openapi in the tree (the current directory).
generate_openapi() {
  local work=$1 gopath=$2
  log "generating pkg/generated/openapi"
  go build -o "$work/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
  local pkgs
  pkgs=$(openapi_packages)
  [[ -n $pkgs ]] || die "found no packages for openapi-gen"
  "$work/openapi-gen" \
    --input-dirs "$pkgs,k8s.io/apimachinery/pkg/runtime,k8s.io/apimachinery/pkg/version" \
    --output-base "$gopath/src" --output-package k8s.io/kubernetes/pkg/generated/openapi \
    -O zz_generated.openapi --go-header-file hack/boilerplate/boilerplate.generatego.txt \
    --report-filename "$work/api-violations.txt" >"$work/openapi-gen.log" 2>&1 ||
    {
      tail -n 30 "$work/openapi-gen.log" >&2
      die "openapi-gen failed"
    }
}

# kubemark 1.20 runs one hollow node a machine (upstream: one a pod): its fake runtime listens on
# the fixed /tmp/kubelet_remote.sock, its kubelet serves plain HTTP on 0.0.0.0 and keeps iptables
# chains on the host, and its capacity is fixed at 1 CPU, 3.75Gi and 110 pods. The patch, a file
# of its own and four call sites in hollow-node.go, adds flags for the socket, root dir, address,
# node IP, status frequency, capacity and images the fake runtime holds (imagePullPolicy: Never),
# their defaults upstream's behaviour, and turns the iptables chains off. A source that does not
# match fails the build.
patch_kubemark() {
  local main=cmd/kubemark/hollow-node.go
  cat >cmd/kubemark/koord_hollow.go <<'EOF'
// Added by koord's tests/cluster/cluster.sh: flags for several hollow kubelets on one machine.

package main

import (
	goflag "flag"
	"strings"
	"time"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	cadvisortest "k8s.io/kubernetes/pkg/kubelet/cadvisor/testing"
	fakeremote "k8s.io/kubernetes/pkg/kubelet/cri/remote/fake"
)

var (
	koordNodeCPU       = goflag.Int("node-cpu", 1, "CPU cores the hollow node reports as capacity")
	koordNodeMemory    = goflag.String("node-memory", "4026531840", "memory the hollow node reports as capacity (a quantity)")
	koordMaxPods       = goflag.Int("max-pods", 110, "pods the hollow node reports as capacity")
	koordAddress       = goflag.String("kubelet-address", "0.0.0.0", "address the hollow kubelet serves on")
	koordNodeIP        = goflag.String("node-ip", "", "the node's InternalIP (default: looked up)")
	koordRootDir       = goflag.String("root-dir", "", "the hollow kubelet's root dir (default: a temp dir)")
	koordRuntimeSocket = goflag.String("fake-runtime-socket", "", "unix socket of the fake runtime (default /tmp/kubelet_remote.sock)")
	koordStatusUpdate  = goflag.Duration("node-status-update-frequency", 10*time.Second, "how often the hollow kubelet checks its node status")
	koordImages        = goflag.String("fake-images", "", "images the fake runtime holds from the start, comma-separated (for imagePullPolicy: Never)")
)

type koordMachineInfo struct {
	*cadvisortest.Fake
	cores  int
	memory uint64
}

func (c *koordMachineInfo) MachineInfo() (*cadvisorapi.MachineInfo, error) {
	info, err := c.Fake.MachineInfo()
	if err != nil {
		return nil, err
	}
	info.NumCores = c.cores
	info.MemoryCapacity = c.memory
	return info, nil
}

func koordMachine(fake *cadvisortest.Fake) *koordMachineInfo {
	memory, err := resource.ParseQuantity(*koordNodeMemory)
	if err != nil || memory.Value() <= 0 {
		klog.Fatalf("--node-memory=%s: not a positive quantity", *koordNodeMemory)
	}
	if *koordNodeCPU <= 0 || *koordMaxPods <= 0 {
		klog.Fatalf("--node-cpu and --max-pods must be positive")
	}
	return &koordMachineInfo{Fake: fake, cores: *koordNodeCPU, memory: uint64(memory.Value())}
}

func koordTune(f *options.KubeletFlags, c *kubeletconfig.KubeletConfiguration) {
	c.MaxPods = int32(*koordMaxPods)
	c.Address = *koordAddress
	c.NodeStatusUpdateFrequency.Duration = *koordStatusUpdate
	c.MakeIPTablesUtilChains = false
	if *koordNodeIP != "" {
		f.NodeIP = *koordNodeIP
	}
	if *koordRootDir != "" {
		f.RootDirectory = *koordRootDir
	}
}

func koordPreloadImages(r *fakeremote.RemoteRuntime) {
	if *koordImages != "" {
		r.ImageService.SetFakeImages(strings.Split(*koordImages, ","))
	}
}

func koordRuntimeEndpoint() (string, error) {
	if *koordRuntimeSocket != "" {
		return "unix://" + *koordRuntimeSocket, nil
	}
	return fakeremote.GenerateEndpoint()
}
EOF
  perl -0pi -e '
    s/(f, c := kubemark\.GetHollowKubeletConfig\(config\.createHollowKubeletOptions\(\)\)\n)/$1\t\tkoordTune(f, c)\n/;
    s/&cadvisortest\.Fake\{\n(\s*NodeName: config\.NodeName,\n\s*)\}/koordMachine(&cadvisortest.Fake{\n$1})/;
    s/endpoint, err := fakeremote\.GenerateEndpoint\(\)/endpoint, err := koordRuntimeEndpoint()/;
    s/(fakeRemoteRuntime := fakeremote\.NewFakeRemoteRuntime\(\)\n)/$1\t\tkoordPreloadImages(fakeRemoteRuntime)\n/;
  ' "$main"
  local call
  for call in 'koordTune(f, c)' 'koordMachine(&cadvisortest.Fake{' 'koordRuntimeEndpoint()' \
    'koordPreloadImages(fakeRemoteRuntime)'; do
    grep -qF "$call" "$main" || die "patching $main failed: its source is not 1.20.2's"
  done
}

build_kubernetes() {
  local -a components=("$@")
  local work=$CACHE/work
  local gopath=$work/gopath
  local tree=$gopath/src/k8s.io/kubernetes
  download_source "$CACHE/src"

  # A fresh tree each time: an interrupted earlier build may have left it half patched. The Go
  # build cache survives, so a retry does not recompile what already compiled.
  rm -rf "$work"
  mkdir -p "$gopath/src/k8s.io"
  log "unpacking $(basename "$(compgen -G "$CACHE/src/kubernetes_*.orig.tar.*" | head -n1)")"
  tar -xf "$(compgen -G "$CACHE/src/kubernetes_*.orig.tar.*" | head -n1)" -C "$gopath/src/k8s.io"
  local top
  top=$(find "$gopath/src/k8s.io" -mindepth 1 -maxdepth 1 -type d | head -n1)
  mv "$top" "$tree"
  cd "$tree"

  # Kubernetes 1.20 predates modules in its build; GOPATH mode resolves everything from vendor/.
  export GO111MODULE=off GOPATH=$gopath GOFLAGS='' GOCACHE=$CACHE/gocache GOTOOLCHAIN=local
  # The vendored reflect2 1.0.1 crashes at run time with Go >= 1.18 (it reads runtime internals
  # that moved); Debian's 1.0.2 is API compatible and fixed.
  local reflect2=/usr/share/gocode/src/github.com/modern-go/reflect2
  [[ -d $reflect2 ]] || die "$reflect2 missing (golang-github-modern-go-reflect2-dev)"
  rm -rf vendor/github.com/modern-go/reflect2
  cp -r "$reflect2" vendor/github.com/modern-go/reflect2

  # Upstream generates the OpenAPI definitions at build time and does not ship them; the
  # apiserver does not compile without them (kubemark does not import them).
  if [[ ${components[*]} != kubemark ]]; then
    generate_openapi "$work" "$gopath"
  fi
  if [[ " ${components[*]} " == *" kubemark "* ]]; then
    patch_kubemark
  fi

  # In GOPATH mode the version variables live under the vendor/ prefix; both packages feed
  # /version (apiserver) and `version` (the other components).
  local ldflags="-s -w" pkg
  for pkg in k8s.io/kubernetes/vendor/k8s.io/component-base/version \
    k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitMajor=1 -X $pkg.gitMinor=20 -X $pkg.gitVersion=$K8S_VERSION"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  log "compiling ${components[*]} (without a Go build cache, on 2 cores: ~8 minutes for all, ~3 for kubemark)"
  local out=$CACHE/bin.new
  rm -rf "$out"
  mkdir -p "$out"
  local -a targets=()
  local c
  for c in "${components[@]}"; do targets+=("./cmd/$c"); done
  go build -ldflags "$ldflags" -o "$out/" "${targets[@]}"
  [[ " ${components[*]} " != *" kubemark "* ]] || echo "$KUBEMARK_STAMP" >"$out/.stamp-kubemark"
  if ((${#components[@]} == ${#K8S_COMPONENTS[@]})); then
    echo "$BUILD_STAMP" >"$out/.stamp"
    rm -rf "$BIN"
    mv "$out" "$BIN"
  else
    # The rest of the cache is current (missing_components): add to it, one rename a file.
    for c in "${components[@]}"; do mv -f "$out/$c" "$BIN/$c"; done
    [[ ! -f $out/.stamp-kubemark ]] || mv -f "$out/.stamp-kubemark" "$BIN/.stamp-kubemark"
    rm -rf "$out"
  fi
  cd /
  if [[ ${KOORD_K8S_KEEP_WORK:-0} != 1 ]]; then
    rm -rf "$work" "$CACHE/gocache"    # gigabytes that only a rebuild would need
  fi
}

cmd_build() {
  install_packages
  if have_binaries; then
    log "Kubernetes $K8S_VERSION binaries cached in $BIN"
    return 0
  fi
  mkdir -p "$CACHE"
  # One builder at a time; the others wait and then find the binaries.
  local buildlock
  exec {buildlock}>"$CACHE/.lock"
  if ! flock -n "$buildlock"; then
    log "waiting for another build of $CACHE"
    flock -w 3600 "$buildlock" || die "timed out waiting for $CACHE/.lock"
  fi
  if ! have_binaries; then
    local t0=$SECONDS
    local -a components
    mapfile -t components < <(missing_components)
    (build_kubernetes "${components[@]}")
    log "built ${components[*]} ($K8S_VERSION) in $((SECONDS - t0))s into $BIN"
  else
    log "another build made the binaries in $BIN"
  fi
  exec {buildlock}>&-
}

# ------------------------------------------------------------------------------------------------
# up / down: etcd, kube-apiserver, kube-controller-manager
# ------------------------------------------------------------------------------------------------

port_in_use() {
  [[ -n $(ss -Htan "( sport = :$1 )" 2>/dev/null) ]]
}

# Ports below the kernel's ephemeral range (32768+), so outgoing connections never hold them.
choose_ports() {
  local base=${KOORD_CLUSTER_PORT_BASE:-} try i busy
  if [[ -n $base ]]; then
    if ! [[ $base =~ ^[0-9]+$ ]] || ((base < 1024 || base + NPORTS > 65535)); then
      die "KOORD_CLUSTER_PORT_BASE=$base is not a port number from 1024"
    fi
    for ((i = 0; i < NPORTS; i++)); do
      port_in_use $((base + i)) && die "port $((base + i)) (KOORD_CLUSTER_PORT_BASE + $i) is in use"
    done
  else
    for ((try = 0; try < 100; try++)); do
      base=$((20000 + (RANDOM % 1200) * 10))
      busy=0
      for ((i = 0; i < NPORTS; i++)); do
        if port_in_use $((base + i)); then
          busy=1
          break
        fi
      done
      ((busy)) || break
    done
    ((busy == 0)) || die "found no $NPORTS free consecutive ports"
  fi
  cat >"$DIR/ports" <<EOF
ETCD_PORT=$base
ETCD_PEER_PORT=$((base + 1))
APISERVER_PORT=$((base + 2))
KUBELET_PORT=$((base + 3))
KUBELET_HEALTHZ_PORT=$((base + 4))
KUBELET_READONLY_PORT=$((base + 5))
EOF
}

load_ports() {
  [[ -f $DIR/ports ]] || die "$DIR has no cluster: run '$0 up' first"
  # shellcheck source=/dev/null
  source "$DIR/ports"
}

# A CA, the apiserver's serving certificate for 127.0.0.1, an admin client certificate, the
# service-account key and an admin token: made once per run dir, reused by later `up`s.
make_credentials() {
  local pki=$DIR/pki
  [[ -f $pki/complete ]] && return 0
  rm -rf "$pki"
  mkdir -p "$pki"
  (
    cd "$pki"
    umask 077
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=koord-test-ca" \
      -keyout ca.key -out ca.crt 2>/dev/null
    # $1 name, $2 subject, $3 extensions
    issue() {
      openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
      printf '%s\n' "$3" >"$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
        -extfile "$1.ext" -out "$1.crt" 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    issue apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
    issue admin "/O=system:masters/CN=koord-admin" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    openssl rand -hex 24 >token
    printf '%s,koord-admin,koord-admin,"system:masters"\n' "$(<token)" >tokens.csv
    chmod 644 ca.crt apiserver.crt admin.crt sa.pub
    touch complete
  )
}

write_kubeconfig() {
  cat >"$DIR/kubeconfig.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: koord-test
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $DIR/pki/ca.crt
users:
- name: koord-admin
  user:
    token: $(<"$DIR/pki/token")
contexts:
- name: koord-test
  context:
    cluster: koord-test
    user: koord-admin
current-context: koord-test
EOF
  mv "$DIR/kubeconfig.tmp" "$DIR/kubeconfig"
}

# $DIR/env: KEY=value lines for tests (plain, no quoting: values hold no spaces). The node's
# variables are appended while the node runs.
write_env() {
  {
    echo "KOORD_CLUSTER_DIR=$DIR"
    echo "KOORD_APISERVER=https://127.0.0.1:$APISERVER_PORT"
    echo "KOORD_CA_FILE=$DIR/pki/ca.crt"
    echo "KOORD_TOKEN=$(<"$DIR/pki/token")"
    echo "KOORD_KUBECONFIG=$DIR/kubeconfig"
    echo "KOORD_CLIENT_CERT_FILE=$DIR/pki/admin.crt"
    echo "KOORD_CLIENT_KEY_FILE=$DIR/pki/admin.key"
    echo "KOORD_ETCD_ENDPOINT=http://127.0.0.1:$ETCD_PORT"
    echo "KOORD_K8S_BIN=$BIN"
    echo "KOORD_AUDIT_LOG=$DIR/audit.log"
    if [[ -f $DIR/node.env ]]; then cat "$DIR/node.env"; fi
    if [[ -f $DIR/hollow.env ]]; then cat "$DIR/hollow.env"; fi
  } >"$DIR/env.tmp"
  mv "$DIR/env.tmp" "$DIR/env"
}

kubectl_() { "$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" --request-timeout=5s "$@"; }

apiserver_ready() {
  curl -sf --max-time 3 --cacert "$DIR/pki/ca.crt" \
    -H "Authorization: Bearer $(<"$DIR/pki/token")" \
    "https://127.0.0.1:$APISERVER_PORT/readyz" >/dev/null
}

etcd_healthy() {
  curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'
}

# The controller manager has done its first work when the token controller has given the
# default service account its secret: pods can be created from then on (the ServiceAccount
# admission plugin refuses them before).
default_sa_ready() {
  [[ -n $(kubectl_ -n default get serviceaccount default -o 'jsonpath={.secrets[0].name}') ]]
}

control_plane_running() {
  local c
  for c in etcd kube-apiserver kube-controller-manager; do
    daemon_pid "$c" >/dev/null || return 1
  done
}

start_etcd() {
  local -a extra=()
  # No fsync: the data is thrown away with the cluster, and fsync dominates on slow disks.
  etcd --help 2>&1 | grep -q -- '--unsafe-no-fsync' && extra+=(--unsafe-no-fsync)
  rm -rf "$DIR/etcd-data"
  start_daemon etcd etcd --name koord --data-dir "$DIR/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "koord=http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster-state new "${extra[@]}"
  wait_for etcd 30 "etcd on 127.0.0.1:$ETCD_PORT" etcd_healthy
}

start_apiserver() {
  local pki=$DIR/pki
  local -a extra=()
  [[ -f $DIR/apiserver.args ]] && read -r -a extra <"$DIR/apiserver.args"
  # Every write, as the apiserver saw it (verb, object, user agent, response code), so a test
  # can tell which requests a component made: a DELETE the Eviction API should have replaced
  # shows here even when it failed. Reads are left out; they are most of the traffic.
  cat >"$DIR/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
EOF
  # The service range is never routed; Services need one all the same. PodTemplates bypass the
  # watch cache, so their watches read etcd directly and an etcd compaction expires old
  # resourceVersions (the informer's forced-410 test); nothing else in koord uses them.
  start_daemon kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
    --secure-port="$APISERVER_PORT" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" --token-auth-file="$pki/tokens.csv" \
    --kubelet-client-certificate="$pki/admin.crt" --kubelet-client-key="$pki/admin.key" \
    --kubelet-preferred-address-types=InternalIP \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc \
    --api-audiences=https://kubernetes.default.svc \
    --authorization-mode=RBAC --allow-privileged=true \
    --service-cluster-ip-range=10.96.0.0/24 --profiling=false \
    --watch-cache-sizes=podtemplates#0 \
    --audit-policy-file="$DIR/audit-policy.yaml" --audit-log-path="$DIR/audit.log" \
    --audit-log-maxsize=512 --audit-log-maxbackup=1 "${extra[@]}"
  wait_for kube-apiserver 90 "kube-apiserver /readyz on 127.0.0.1:$APISERVER_PORT" apiserver_ready
}

start_controller_manager() {
  # nodeipam needs a pod CIDR we do not have; nodelifecycle would taint and evict pods when the
  # node stops, which tests want to control themselves. No leader election: one instance, and a
  # fresh etcd, so waiting for a lease would only cost time. --port=0 --secure-port=0: it serves
  # nothing, so it takes no port.
  start_daemon kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$DIR/kubeconfig" --leader-elect=false \
    --controllers='*,-nodeipam,-nodelifecycle' \
    --service-account-private-key-file="$DIR/pki/sa.key" --root-ca-file="$DIR/pki/ca.crt" \
    --use-service-account-credentials=false \
    --bind-address=127.0.0.1 --port=0 --secure-port=0
  wait_for kube-controller-manager 60 "the default service account's token" default_sa_ready
}

cmd_up() {
  local t0=$SECONDS
  have_binaries "${CONTROL_PLANE[@]}" || cmd_build
  command -v etcd >/dev/null || die "etcd missing: run '$0 build' (installs etcd-server)"
  lock_dir
  if [[ ${KOORD_CLUSTER_FRESH:-0} != 1 ]] && control_plane_running && load_ports && apiserver_ready; then
    log "already up in $DIR"
    return 0
  fi
  down_locked # leftovers of an earlier run of this dir
  # The audit log describes this etcd's objects only (restart-apiserver appends to it).
  rm -f "$DIR"/audit*.log
  choose_ports
  load_ports
  make_credentials
  write_kubeconfig
  rm -f "$DIR/node.env"
  write_env
  printf '%s\n' "${KOORD_APISERVER_EXTRA_ARGS:-}" >"$DIR/apiserver.args"
  # A failed start stops what it started; the logs stay for reading.
  trap 'log "up failed; stopping what started (logs in $DIR)"; down_locked' EXIT
  start_etcd
  start_apiserver
  start_controller_manager
  trap - EXIT
  log "up in $((SECONDS - t0))s: $DIR/env, KUBECONFIG=$DIR/kubeconfig, https://127.0.0.1:$APISERVER_PORT"
}

# ------------------------------------------------------------------------------------------------
# node: containerd + kubelet
# ------------------------------------------------------------------------------------------------

containerd_sock() { echo "$DIR/containerd/containerd.sock"; }

ctr_() { ctr --address "$(containerd_sock)" --namespace k8s.io "$@"; }

# A one-layer OCI image holding busybox-static, as an OCI archive for `ctr images import`: the
# pod sandbox ("pause") image and the image tests run. No registry is ever contacted.
build_image() {
  local d=$DIR/image arch
  arch=$(dpkg --print-architecture)
  rm -rf "$d"
  mkdir -p "$d/rootfs/bin" "$d/rootfs/tmp" "$d/rootfs/etc" "$d/oci/blobs/sha256"
  cp /bin/busybox "$d/rootfs/bin/busybox"
  local a
  for a in sh sleep cat echo ls true false env id ps yes head tail wc grep test; do
    ln -s busybox "$d/rootfs/bin/$a"
  done
  # Reproducible layer: fixed owner and time, sorted names, so the digest depends on busybox only.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$d/rootfs" -cf "$d/layer.tar" .
  blob() { # stores stdin as a blob, prints "digest size"
    local tmp=$d/blob.tmp sum
    cat >"$tmp"
    sum=$(sha256sum "$tmp" | cut -d' ' -f1)
    mv "$tmp" "$d/oci/blobs/sha256/$sum"
    echo "sha256:$sum $(stat -c %s "$d/oci/blobs/sha256/$sum")"
  }
  local layer config manifest
  read -r -a layer < <(blob <"$d/layer.tar")
  read -r -a config < <(printf '{"architecture":"%s","os":"linux","config":{"Env":["PATH=/bin"],"Cmd":["/bin/sleep","2147483647"]},"rootfs":{"type":"layers","diff_ids":["%s"]}}' \
    "$arch" "${layer[0]}" | blob)
  read -r -a manifest < <(printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"%s","size":%s}]}' \
    "${config[0]}" "${config[1]}" "${layer[0]}" "${layer[1]}" | blob)
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"platform":{"architecture":"%s","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
    "${manifest[0]}" "${manifest[1]}" "$arch" "$TEST_IMAGE" "$TEST_IMAGE" >"$d/oci/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$d/oci/oci-layout"
  tar -C "$d/oci" -cf "$d/busybox-oci.tar" .
}

write_containerd_config() {
  local c=$DIR/containerd
  mkdir -p "$c/cni"
  # CNI with only loopback: pods share the host's network (hostNetwork: true), nothing else.
  echo '{"cniVersion":"0.4.0","name":"koord-loopback","plugins":[{"type":"loopback"}]}' \
    >"$c/cni/10-koord-loopback.conflist"
  # native snapshotter: works on any filesystem, no overlay mounts to leak. restrict_oom_score_adj:
  # containerd may not lower a container's OOM score below its own.
  cat >"$c/config.toml" <<EOF
version = 2
root = "$c/root"
state = "$c/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "$(containerd_sock)"

[ttrpc]
  address = "$(containerd_sock).ttrpc"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$TEST_IMAGE"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$c/cni"
EOF
}

# The node's address: the source address of the default route, else the first non-loopback one
# (kubelet refuses a loopback node IP). The apiserver reaches the kubelet at the Node's
# InternalIP for exec, attach, port-forward and logs, so the kubelet serves there too.
node_ip() {
  local ip
  ip=$(ip -4 -o route get 1.0.0.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
  [[ -n $ip ]] || ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -m1 -v '^127\.' || true)
  [[ -n $ip ]] || die "no non-loopback IPv4 address for the node's kubelet"
  echo "$ip"
}

write_kubelet_config() {
  local k=$DIR/kubelet
  mkdir -p "$k"
  # The API on every address (the node's, see node_ip; loopback for the tests), healthz on
  # loopback, no iptables rules on the host (makeIPTablesUtilChains). No anonymous callers: they
  # authenticate with a bearer token (checked by the apiserver) or a client certificate from the
  # test CA; the authorizer asks the apiserver (SubjectAccessReview: /pods is nodes/proxy get).
  # No read-only port: the koordlet reads /pods over HTTPS with its token and checks the
  # kubelet's self-signed certificate (in the kubelet's default --cert-dir, /var/lib/kubelet/pki,
  # as on a kubeadm node). Image GC thresholds at 100%: the kubelet must never delete the locally
  # imported image, which cannot be pulled again. Status checked every 2s (reported only on
  # change), so the node turns Ready seconds after registering instead of 10s later.
  cat >"$k/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 0.0.0.0
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
cgroupDriver: cgroupfs
failSwapOn: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $DIR/pki/ca.crt}
authorization:
  mode: Webhook
enforceNodeAllocatable: []
evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
makeIPTablesUtilChains: false
nodeStatusUpdateFrequency: 2s
nodeStatusReportFrequency: 1m
volumePluginDir: $k/volume-plugins
EOF
}

# kubelet sets these host sysctls at start (protectKernelDefaults would make it refuse to run
# instead); `node` saves the values it found and nodedown puts them back.
readonly KUBELET_SYSCTLS=(vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
  kernel/keys/root_maxkeys kernel/keys/root_maxbytes)

save_sysctls() {
  [[ -f $DIR/sysctl.saved ]] && return 0
  local k
  for k in "${KUBELET_SYSCTLS[@]}"; do
    [[ -r /proc/sys/$k ]] && echo "$k $(<"/proc/sys/$k")"
  done >"$DIR/sysctl.saved"
}

restore_sysctls() {
  [[ -f $DIR/sysctl.saved ]] || return 0
  local k v
  while read -r k v; do
    [[ -n $k && $(<"/proc/sys/$k") != "$v" ]] || continue
    echo "$v" >"/proc/sys/$k" 2>/dev/null || log "could not restore /proc/sys/$k to $v"
  done <"$DIR/sysctl.saved"
  rm -f "$DIR/sysctl.saved"
}

# kubelet's cgroups (kubepods and its QoS classes) outlive it; once no kubelet runs on this
# machine and they hold no process, they go, so the next node starts from a clean hierarchy.
# A live kubelet anywhere on the machine (zombies not counted: pid 1 may reap late).
other_kubelet() {
  local p
  for p in $(pgrep -x kubelet); do
    if proc_alive "$p"; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

remove_kubepods_cgroups() {
  other_kubelet >/dev/null && return 0
  local d
  for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [[ -d $d ]] || continue
    find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
}

node_ready() { node_ready_named "$NODE_NAME"; }

containerd_serving() { ctr_ version; }

socket_exists() { [[ -S $1 ]]; }

cmd_node() {
  local t0=$SECONDS
  ((EUID == 0)) || die "the node needs root (containerd, cgroups, mounts)"
  lock_dir
  load_ports
  apiserver_ready || die "the control plane in $DIR is not up: run '$0 up' first"
  if daemon_pid containerd >/dev/null && daemon_pid kubelet >/dev/null && node_ready; then
    log "node $NODE_NAME already up"
    return 0
  fi
  nodedown_locked
  # A second kubelet would share (and fight over) the machine-wide kubepods cgroups.
  local other
  if other=$(other_kubelet); then
    die "a kubelet already runs on this machine (pid $other); one node per machine"
  fi
  local sock cri
  sock=$(containerd_sock)
  cri=${KOORD_CRI_ENDPOINT:-$sock}
  cri=${cri#unix://}
  # sun_path holds 108 bytes; kubelet and containerd add their own sockets beside these.
  ((${#sock} < 100)) || die "socket path too long for a unix socket: $sock (shorten KOORD_CLUSTER_DIR)"
  cat >"$DIR/node.env" <<EOF
KOORD_NODE_NAME=$NODE_NAME
KOORD_TEST_IMAGE=$TEST_IMAGE
KOORD_CONTAINERD_SOCK=$sock
KOORD_CRI_ENDPOINT=unix://$cri
KOORD_KUBELET_PORT=$KUBELET_PORT
KOORD_KUBELET_ROOT_DIR=$DIR/kubelet
EOF
  write_env
  trap 'log "node failed; stopping it (logs in $DIR)"; nodedown_locked' EXIT

  write_containerd_config
  start_daemon containerd containerd --config "$DIR/containerd/config.toml"
  wait_for containerd 30 "containerd on $sock" containerd_serving
  build_image
  ctr_ images import --snapshotter native "$DIR/image/busybox-oci.tar" >/dev/null ||
    die "importing $TEST_IMAGE into containerd failed"

  if [[ -n ${KOORD_BEFORE_KUBELET:-} ]]; then
    log "starting KOORD_BEFORE_KUBELET: $KOORD_BEFORE_KUBELET"
    printf '%s\n' "$KOORD_BEFORE_KUBELET" >"$DIR/before-kubelet.cmd"
    start_before_kubelet
  fi
  if [[ $cri != "$sock" ]]; then
    local owner=containerd
    [[ -f $DIR/before-kubelet.pid ]] && owner=before-kubelet
    wait_for "$owner" 30 "the CRI socket $cri" socket_exists "$cri"
  fi

  write_kubelet_config
  save_sysctls
  start_daemon kubelet "$BIN/kubelet" --config="$DIR/kubelet/config.yaml" \
    --kubeconfig="$DIR/kubeconfig" --hostname-override="$NODE_NAME" \
    --container-runtime=remote --container-runtime-endpoint="unix://$cri" \
    --node-ip="$(node_ip)" \
    --root-dir="$DIR/kubelet"
  wait_for kubelet 120 "node $NODE_NAME to be Ready" node_ready
  # So that pods a scheduler places (kube-scheduler, koord-scheduler) can land on the node.
  lift_not_ready_taint "$NODE_NAME"
  trap - EXIT
  log "node $NODE_NAME Ready in $((SECONDS - t0))s; pods: hostNetwork: true, image $TEST_IMAGE, imagePullPolicy: Never"
}

# Every process whose command line names our containerd socket (the runc shims), and all their
# descendants (the containers' processes): what the node started beyond its process groups,
# since shims detach into their own groups.
node_strays() {
  local sock pid
  sock=$(containerd_sock)
  local -A parent=()
  local -a roots=()
  local stat rest ppid
  for stat in /proc/[0-9]*/stat; do
    pid=${stat#/proc/}
    pid=${pid%/stat}
    rest=$(cat "$stat" 2>/dev/null) || continue
    rest=${rest##*) }
    read -r _ ppid _ <<<"$rest"
    parent[$pid]=$ppid
    if tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qxF -- "$sock"; then
      [[ $(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | head -n1) == *containerd-shim* ]] &&
        roots+=("$pid")
    fi
  done
  ((${#roots[@]})) || return 0
  # Descendants: repeat until no new pid joins the set.
  local -A chosen=()
  for pid in "${roots[@]}"; do chosen[$pid]=1; done
  local grew=1
  while ((grew)); do
    grew=0
    for pid in "${!parent[@]}"; do
      if [[ -z ${chosen[$pid]:-} && -n ${chosen[${parent[$pid]}]:-} ]]; then
        chosen[$pid]=1
        grew=1
      fi
    done
  done
  echo "${!chosen[@]}"
}

kill_node_strays() {
  local -a pids
  read -r -a pids <<<"$(node_strays)"
  ((${#pids[@]})) || return 0
  kill -KILL "${pids[@]}" 2>/dev/null || true
  local deadline=$((SECONDS + 5)) p alive=1
  while ((alive && SECONDS < deadline)); do
    alive=0
    for p in "${pids[@]}"; do proc_alive "$p" && alive=1; done
    ((alive)) && sleep 0.1
  done
}

# Kubelet's volume tmpfs and the sandboxes' /dev/shm stay mounted after their owners die, and
# kubelet bind-mounts its root dir onto itself (for mount propagation): deepest first.
unmount_under() {
  local root=$1 mp
  [[ -d $root ]] || return 0
  while read -r mp; do
    umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || log "could not unmount $mp"
  done < <(awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo |
    sort -r)
}

# The node leaves the cluster with its pods. Without the node lifecycle controller nothing would
# mark a stopped node NotReady: a later `node` would find the old Ready condition (and re-run
# the old pods).
forget_node() {
  local node=${1:-$NODE_NAME}
  [[ -f $DIR/ports && -f $DIR/pki/token && -x $BIN/kubectl ]] || return 0
  load_ports
  apiserver_ready || return 0
  kubectl_ delete pods --all-namespaces --field-selector "spec.nodeName=$node" \
    --grace-period=0 --force --wait=false >/dev/null 2>&1 || log "could not delete the pods of $node"
  kubectl_ delete node "$node" --ignore-not-found --wait=false >/dev/null ||
    log "could not delete node $node"
}

nodedown_locked() {
  # Kubelet first, so it does not restart the containers we are about to kill.
  stop_daemon kubelet 20
  if daemon_pid containerd >/dev/null; then
    local id
    for id in $(ctr_ tasks ls -q 2>/dev/null); do
      ctr_ tasks kill --all --signal SIGKILL "$id" >/dev/null 2>&1 || true
    done
    for id in $(ctr_ tasks ls -q 2>/dev/null); do
      ctr_ tasks delete --force "$id" >/dev/null 2>&1 || true
    done
  fi
  stop_daemon before-kubelet 10
  kill_node_strays
  forget_node
  stop_daemon containerd 15
  kill_node_strays
  unmount_under "$DIR/kubelet"
  unmount_under "$DIR/containerd"
  restore_sysctls
  remove_kubepods_cgroups
  if [[ -f $DIR/node.env ]]; then
    rm -f "$DIR/node.env"
    [[ -f $DIR/ports && -f $DIR/pki/token ]] && load_ports && write_env
  fi
  return 0
}

# ------------------------------------------------------------------------------------------------
# hollow-nodes: kubemark's hollow kubelets (fake runtime and cAdvisor; no containers, no cgroups)
# ------------------------------------------------------------------------------------------------

readonly HOLLOW_PREFIX=hollow-node
# Every hollow node carries it, so tests can tell (and select) them.
readonly HOLLOW_LABEL=koord.test/hollow-node=true

# The hollow nodes this run dir knows, one name a line (those with a conf file, running or not).
hollow_names() {
  local conf name
  for conf in "$DIR"/hollow/*.conf; do
    [[ -f $conf ]] || continue
    name=${conf##*/}
    echo "${name%.conf}"
  done
}

# What a hollow node is started with, as one line: a running node with another is restarted.
hollow_config() {
  local cpu=${KOORD_HOLLOW_CPU:-4} memory=${KOORD_HOLLOW_MEMORY:-16Gi}
  local pods=${KOORD_HOLLOW_PODS:-110} labels=${KOORD_HOLLOW_LABELS:-}
  [[ $cpu =~ ^[1-9][0-9]*$ ]] || die "KOORD_HOLLOW_CPU=$cpu: whole cores only (kubemark's fake cAdvisor)"
  [[ $pods =~ ^[1-9][0-9]*$ ]] || die "KOORD_HOLLOW_PODS=$pods is not a positive number"
  [[ $memory =~ ^[0-9]+(\.[0-9]+)?([KMGTPE]i?|k)?$ && $memory =~ [1-9] ]] ||
    die "KOORD_HOLLOW_MEMORY=$memory is not a positive quantity"
  [[ $labels =~ ^[^[:space:]]*$ ]] || die "KOORD_HOLLOW_LABELS: key=value,... without spaces"
  echo "cpu=$cpu memory=$memory pods=$pods labels=$HOLLOW_LABEL${labels:+,$labels}"
}

hollow_conf_value() { sed -n "s/^$2=//p" "$DIR/hollow/$1.conf" 2>/dev/null; }

# A loopback port for a hollow kubelet's API: free now, no other hollow node's, outside the
# cluster's own ports (the kubelet node's among them, whether it runs or not) and below the range
# choose_ports picks from (20000-31999), so no other run dir's cluster gets it either.
hollow_port() {
  local used=" " name port try
  for name in $(hollow_names); do used+="$(hollow_conf_value "$name" port) "; done
  for ((try = 0; try < 200; try++)); do
    port=$((12000 + RANDOM % 8000))
    ((port >= ETCD_PORT && port < ETCD_PORT + NPORTS)) && continue
    [[ $used == *" $port "* ]] && continue
    port_in_use "$port" && continue
    echo "$port"
    return 0
  done
  die "found no free port for a hollow kubelet"
}

node_ready_named() {
  [[ $(kubectl_ get node "$1" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]
}

# Nodes register with the not-ready taint, and nodelifecycle, which lifts it once the node is
# Ready, is off (see start_controller_manager): lifted here, so that schedulers place pods there.
lift_not_ready_taint() {
  if kubectl_ get node "$1" -o jsonpath='{.spec.taints[*].key}' |
    grep -qw node.kubernetes.io/not-ready; then
    kubectl_ taint node "$1" node.kubernetes.io/not-ready:NoSchedule- >/dev/null ||
      log "could not lift the not-ready taint of $1: scheduled pods will not land there"
  fi
}

# Running, started with `settings`, and Ready.
hollow_current() {
  daemon_pid "$1" >/dev/null && [[ $(hollow_conf_value "$1" config) == "$2" ]] && node_ready_named "$1"
}

hollow_start() {
  local name=$1 settings=$2 root=$DIR/hollow/$1 port ip
  # The longest socket the hollow kubelet makes; sun_path holds 108 bytes.
  local longest=$root/kubelet/pod-resources/kubelet.sock
  ((${#longest} < 108)) || die "socket path too long for a unix socket: $longest (shorten KOORD_CLUSTER_DIR)"
  port=$(hollow_port)
  rm -rf "$root"
  mkdir -p "$root/tmp"
  printf 'port=%s\nconfig=%s\n' "$port" "$settings" >"$DIR/hollow/$name.conf"
  local -a args=(--morph=kubelet --name="$name" --kubeconfig="$DIR/kubeconfig"
    --kubelet-address=127.0.0.1 --kubelet-port="$port" --kubelet-read-only-port=0
    --root-dir="$root/kubelet" --fake-runtime-socket="$root/runtime.sock"
    --node-status-update-frequency=2s --fake-images="$TEST_IMAGE")
  local key value
  for key in cpu memory pods labels; do
    value=$(sed -n "s/.*\<$key=\([^ ]*\).*/\1/p" <<<"$settings")
    case $key in
      cpu) args+=(--node-cpu="$value") ;;
      memory) args+=(--node-memory="$value") ;;
      pods) args+=(--max-pods="$value") ;;
      labels) args+=(--node-labels="$value") ;;
    esac
  done
  # The machine's address as InternalIP (kubelet refuses a loopback one); else kubelet looks its
  # name up in DNS on every status update.
  if ip=$(node_ip 2>/dev/null); then args+=(--node-ip="$ip"); fi
  # TMPDIR: kubemark makes a temp root dir and static pod dir before --root-dir takes over.
  start_daemon "$name" env TMPDIR="$root/tmp" "$BIN/kubemark" "${args[@]}"
}

forget_hollow() {
  forget_node "$1"
  rm -rf "${DIR:?}/hollow/$1" "$DIR/hollow/$1.conf"
}

hollow_stop() {
  stop_daemon "$1" 10
  forget_hollow "$1"
}

# KOORD_HOLLOW_NODES in the env file: the hollow nodes that run, comma-separated.
write_hollow_env() {
  local names
  names=$(hollow_names | sort -t- -k3n | paste -sd, -)
  if [[ -n $names ]]; then
    printf 'KOORD_HOLLOW_NODES=%s\nKOORD_TEST_IMAGE=%s\n' "$names" "$TEST_IMAGE" >"$DIR/hollow.env"
  else
    rm -f "$DIR/hollow.env"
  fi
  [[ -f $DIR/ports && -f $DIR/pki/token ]] && write_env
  return 0
}

hollowdown_locked() {
  local name
  for name in $(hollow_names); do hollow_stop "$name"; done
  rmdir "$DIR/hollow" 2>/dev/null || true
  if [[ -f $DIR/hollow.env ]]; then
    rm -f "$DIR/hollow.env"
    [[ -f $DIR/ports && -f $DIR/pki/token ]] && load_ports && write_env
  fi
  return 0
}

cmd_hollow_nodes() {
  local count=${1:-} t0=$SECONDS
  [[ $count =~ ^[0-9]+$ ]] || die "usage: $0 hollow-nodes N (N >= 0)"
  local settings name i
  settings=$(hollow_config)
  ((count == 0)) || have_binaries kubemark || cmd_build
  lock_dir
  if ((count == 0)); then
    hollowdown_locked
    log "hollow nodes stopped"
    return 0
  fi
  load_ports
  apiserver_ready || die "the control plane in $DIR is not up: run '$0 up' first"
  # The hollow kubelet's OOM watcher reads the kernel log: without it kubemark does not start.
  (: </dev/kmsg) 2>/dev/null ||
    die "kubemark's kubelet reads /dev/kmsg, which this user may not (kernel.dmesg_restrict=1?): run as root"
  mkdir -p "$DIR/hollow"
  local -a stopped=()
  for name in $(hollow_names); do
    if ((${name##*-} > count)); then
      hollow_stop "$name"
      stopped+=("$name")
    fi
  done
  ((${#stopped[@]} == 0)) || log "stopped ${stopped[*]}"
  local -a started=()
  for ((i = 1; i <= count; i++)); do
    name=$HOLLOW_PREFIX-$i
    hollow_current "$name" "$settings" && continue
    hollow_stop "$name"
    started+=("$name")
  done
  if ((${#started[@]} == 0)); then
    write_hollow_env
    log "$count hollow nodes already up"
    return 0
  fi
  trap 'log "hollow nodes failed; stopping those started (logs in $DIR)"; for name in "${started[@]}"; do hollow_stop "$name"; done; write_hollow_env' EXIT
  for name in "${started[@]}"; do hollow_start "$name" "$settings"; done
  for name in "${started[@]}"; do
    wait_for "$name" 120 "hollow node $name to be Ready" node_ready_named "$name"
    lift_not_ready_taint "$name"
  done
  trap - EXIT
  write_hollow_env
  log "$count hollow nodes Ready (started ${started[*]}) in $((SECONDS - t0))s; $settings"
}

down_locked() {
  hollowdown_locked
  nodedown_locked
  stop_daemon kube-controller-manager 10
  stop_daemon kube-apiserver 20
  stop_daemon etcd 10
}

cmd_nodedown() {
  [[ -d $DIR ]] || return 0
  lock_dir
  nodedown_locked
  log "node stopped"
}

cmd_down() {
  [[ -d $DIR ]] || return 0
  lock_dir
  down_locked
  log "stopped everything in $DIR"
}

start_before_kubelet() {
  # shellcheck disable=SC2016 # expanded by the inner bash
  start_daemon before-kubelet bash -c 'set -a; source "$1"; set +a; eval "$2"' before-kubelet \
    "$DIR/env" "$(<"$DIR/before-kubelet.cmd")"
}

cmd_restart_before_kubelet() {
  lock_dir
  daemon_pid before-kubelet >/dev/null || die "no KOORD_BEFORE_KUBELET process runs in $DIR"
  [[ -f $DIR/before-kubelet.cmd ]] || die "no $DIR/before-kubelet.cmd"
  local t0=$SECONDS log_file=$DIR/before-kubelet.log
  stop_daemon before-kubelet 20
  local cri
  cri=$(sed -n 's|^KOORD_CRI_ENDPOINT=unix://||p' "$DIR/node.env")
  rm -f "$cri"  # gone with a clean stop; after a kill it would look served at once
  # The previous process's log stays readable beside the new one's.
  [[ -f $log_file ]] && mv "$log_file" "$DIR/before-kubelet.previous.log"
  start_before_kubelet
  wait_for before-kubelet 30 "the CRI socket $cri" socket_exists "$cri"
  log "KOORD_BEFORE_KUBELET restarted in $((SECONDS - t0))s"
}

cmd_restart_apiserver() {
  lock_dir
  load_ports
  daemon_pid kube-apiserver >/dev/null || die "kube-apiserver is not running in $DIR"
  local t0=$SECONDS
  stop_daemon kube-apiserver 20
  start_apiserver
  log "kube-apiserver restarted in $((SECONDS - t0))s"
}

cmd_status() {
  local c pid rc=0
  for c in etcd kube-apiserver kube-controller-manager containerd before-kubelet kubelet; do
    if pid=$(daemon_pid "$c"); then
      printf '%-24s running (pid %s)\n' "$c" "$pid"
    elif [[ -f $DIR/$c.pid ]]; then
      printf '%-24s dead (see %s)\n' "$c" "$DIR/$c.log"
      rc=1
    else
      printf '%-24s stopped\n' "$c"
    fi
  done
  # Health only of what should be running: after `down` nothing should.
  if [[ -f $DIR/ports && -f $DIR/kube-apiserver.pid ]]; then
    load_ports
    if apiserver_ready; then
      echo "apiserver                https://127.0.0.1:$APISERVER_PORT ready"
    else
      echo "apiserver                https://127.0.0.1:$APISERVER_PORT not ready"
      rc=1
    fi
    if [[ -f $DIR/kubelet.pid ]]; then
      if node_ready; then echo "node                     $NODE_NAME Ready"; else
        echo "node                     $NODE_NAME not Ready"
        rc=1
      fi
    fi
  fi
  local name
  for name in $(hollow_names); do
    if ! pid=$(daemon_pid "$name"); then
      printf '%-24s dead (see %s)\n' "$name" "$DIR/$name.log"
      rc=1
    elif [[ -f $DIR/ports ]] && load_ports && node_ready_named "$name"; then
      printf '%-24s running (pid %s), Ready\n' "$name" "$pid"
    else
      printf '%-24s running (pid %s), not Ready\n' "$name" "$pid"
      rc=1
    fi
  done
  if have_binaries; then
    echo "binaries                 $BIN ($K8S_VERSION)"
  elif have_binaries "${CONTROL_PLANE[@]}" kube-scheduler kubelet; then
    echo "binaries                 $BIN ($K8S_VERSION); no kubemark (run '$0 build')"
  else
    echo "binaries                 not built (run '$0 build')"
  fi
  return "$rc"
}

cmd_env() {
  [[ -f $DIR/env ]] || die "no env file in $DIR: run '$0 up' first"
  cat "$DIR/env"
}

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
}

main() {
  local cmd=${1:-}
  case $cmd in
    build | up | node | nodedown | down | status | env) "cmd_$cmd" ;;
    hollow-nodes) cmd_hollow_nodes "${2:-}" ;;
    restart-apiserver) cmd_restart_apiserver ;;
    restart-before-kubelet) cmd_restart_before_kubelet ;;
    -h | --help | help) usage ;;
    *)
      usage >&2
      exit 2
      ;;
  esac
}

main "$@"
