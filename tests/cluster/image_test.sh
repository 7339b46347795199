#!/usr/bin/env bash
# cluster/image: scripts/build-image.sh's OCI archive works in a real container runtime. Builds
# the image twice from the given koord (same digest, same bytes), checks the script refuses
# binaries that must not become images, then starts a private containerd of its own (socket,
# root, state and namespace under a temp dir; no CRI plugin), imports the archive with
# `ctr images import`, and runs koord, a role link and a look at the image's files in containers.
#
#   image_test.sh KOORD_BINARY SANITIZE
#
# SANITIZE is the build's KOORD_SANITIZE: ON builds the image with --allow-sanitizer (the ASan
# test build is the only koord CI has), so the sanitizer runtime travels into the image too.
# Needs root (containerd, runc); without it the test is skipped (exit 77).
set -euo pipefail

koord=${1:?usage: image_test.sh KOORD_BINARY SANITIZE}
sanitize=${2:?usage: image_test.sh KOORD_BINARY SANITIZE}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build_image=$here/../../scripts/build-image.sh
readonly TAG=koord.local/koord:image-test
readonly NS=koord-image-test
readonly SKIP=77

log() { printf 'image_test: %s\n' "$*" >&2; }
fail() {
  log "FAIL: $*"
  exit 1
}

if ((EUID != 0)); then
  log "SKIP: containerd and runc need root"
  exit "$SKIP"
fi
[[ -x $koord ]] || fail "no koord binary at $koord"

# The same packages cluster.sh installs for its node; this test does not wait for cluster/up.
install_packages() {
  local -a missing=()
  local p
  for p in containerd runc busybox-static; do
    [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  log "installing ${missing[*]}"
  local -a apt=(apt-get -y -q -o DPkg::Lock::Timeout=600)
  export DEBIAN_FRONTEND=noninteractive
  if ! "${apt[@]}" install --no-install-recommends "${missing[@]}" >/dev/null; then
    "${apt[@]}" update >/dev/null
    "${apt[@]}" install --no-install-recommends "${missing[@]}" >/dev/null
  fi
}
install_packages

# A short path: containerd's sockets must fit in sun_path (108 bytes).
tmp=$(mktemp -d /tmp/koord-image-test.XXXXXX)
sock=$tmp/containerd.sock
containerd_pid=

ctr_() { ctr --address "$sock" --namespace "$NS" "$@"; }

# Everything this test started, whatever state it failed in: containers and their shims,
# containerd, the rootfs mounts under $tmp, the cgroups runc made, the temp dir.
cleanup() {
  local rc=$?
  set +e
  if [[ -n $containerd_pid ]] && kill -0 "$containerd_pid" 2>/dev/null; then
    local id
    for id in $(ctr_ tasks ls -q 2>/dev/null); do
      ctr_ tasks kill --all --signal SIGKILL "$id" >/dev/null 2>&1
      ctr_ tasks delete --force "$id" >/dev/null 2>&1
    done
    for id in $(ctr_ containers ls -q 2>/dev/null); do
      ctr_ containers delete "$id" >/dev/null 2>&1
    done
    kill -TERM "$containerd_pid"
    local i
    for ((i = 0; i < 50; i++)); do
      kill -0 "$containerd_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$containerd_pid" 2>/dev/null
    wait "$containerd_pid" 2>/dev/null
  fi
  # Shims detach from containerd; ours name our socket on their command line.
  local pid
  for pid in $(pgrep -f -- "-address $sock( |$)" 2>/dev/null); do
    kill -KILL "$pid" 2>/dev/null
  done
  local mp
  while read -r mp; do
    umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || log "could not unmount $mp"
  done < <(awk -v r="$tmp" 'index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r)
  local d
  for d in /sys/fs/cgroup/*/"$NS" /sys/fs/cgroup/"$NS"; do
    [[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  if ((rc != 0 && rc != SKIP)) && [[ -f $tmp/containerd.log ]]; then
    log "---- last lines of containerd's log ----"
    tail -n 30 "$tmp/containerd.log" >&2
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT

# ------------------------------------------------------------------------------------------------
# The script: refusals, then two builds of the same image
# ------------------------------------------------------------------------------------------------

# expect_refusal WHAT PATTERN ARGS...: build-image.sh must exit non-zero naming the problem.
expect_refusal() {
  local what=$1 pattern=$2 out
  shift 2
  if out=$("$build_image" --output "$tmp/refused.tar" "$@" 2>&1); then
    fail "build-image.sh accepted $what"
  fi
  grep -q -- "$pattern" <<<"$out" || fail "refusing $what, build-image.sh said: $out (expected: $pattern)"
  [[ ! -e $tmp/refused.tar ]] || fail "build-image.sh wrote an image for $what"
  log "ok: refuses $what"
}

printf '#!/bin/sh\necho hi\n' >"$tmp/script"
chmod +x "$tmp/script"
expect_refusal "a shell script" 'is not an ELF file' --koord "$tmp/script"
# An arm64 ELF header on an x86-64 executable: only e_machine (offset 18) differs.
cp /bin/busybox "$tmp/arm64"
printf '\xb7\x00' | dd of="$tmp/arm64" bs=1 seek=18 conv=notrunc status=none
expect_refusal "an arm64 binary" 'not an x86-64 ELF binary' --koord "$tmp/arm64"
expect_refusal "a shared library" 'no program interpreter' --koord "$(readlink -f /lib/x86_64-linux-gnu/libz.so.1)"
expect_refusal "a bad tag" 'is not an image reference' --koord "$koord" --tag 'Koord:dev'

sanitizer_args=()
if [[ $sanitize == ON ]]; then
  expect_refusal "a sanitizer build without --allow-sanitizer" 'is a sanitizer build' --koord "$koord"
  sanitizer_args=(--allow-sanitizer)
fi

build() { # build OUTPUT: prints the manifest digest
  "$build_image" --koord "$koord" --tag "$TAG" --output "$1" "${sanitizer_args[@]}"
}
digest=$(build "$tmp/image.tar") || fail "build-image.sh failed"
[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || fail "build-image.sh printed '$digest', not a digest"
# Another umask and another output name must not change a byte.
digest2=$( (umask 077 && build "$tmp/again.tar")) || fail "second build-image.sh failed"
[[ $digest2 == "$digest" ]] || fail "two builds of one binary gave $digest and $digest2"
cmp -s "$tmp/image.tar" "$tmp/again.tar" || fail "two builds of one binary differ in bytes"
rm -f "$tmp/again.tar"
log "ok: reproducible, manifest $digest, $(($(stat -c %s "$tmp/image.tar") / 1024)) KiB"

# ------------------------------------------------------------------------------------------------
# A private containerd
# ------------------------------------------------------------------------------------------------

# Only what ctr needs: no CRI plugin (it would want CNI and a sandbox image), the native
# snapshotter (no overlay mounts to leak), and every path containerd writes under $tmp.
cat >"$tmp/config.toml" <<EOF
version = 2
root = "$tmp/root"
state = "$tmp/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "$sock"

[ttrpc]
  address = "$sock.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "$tmp/opt"
EOF
containerd --config "$tmp/config.toml" >"$tmp/containerd.log" 2>&1 &
containerd_pid=$!
for ((i = 0; ; i++)); do
  ctr_ version >/dev/null 2>&1 && break
  kill -0 "$containerd_pid" 2>/dev/null || fail "containerd exited at start"
  ((i < 300)) || fail "containerd did not serve $sock in 30 s"
  sleep 0.1
done

ctr_ images import --snapshotter native "$tmp/image.tar" >"$tmp/import.out" 2>&1 ||
  fail "ctr images import failed: $(cat "$tmp/import.out")"
listed=$(ctr_ images ls | awk -v t="$TAG" '$1 == t { print $3 }')
[[ -n $listed ]] || fail "$TAG not listed after import: $(ctr_ images ls)"
[[ $listed == "$digest" ]] || fail "$TAG imported as $listed, build-image.sh said $digest"
log "ok: imported as $TAG $listed"

# ------------------------------------------------------------------------------------------------
# Containers
# ------------------------------------------------------------------------------------------------

# run [ctr run options...] -- [args...]: the container's output; fails the test when it exits
# non-zero. No args: the image's own Entrypoint and Cmd.
run() {
  local -a opts=()
  while [[ $1 != -- ]]; do
    opts+=("$1")
    shift
  done
  shift
  # Called in $(...): the subshell's pid names the container.
  local id=$NS-$BASHPID out
  # The host's ASAN_OPTIONS do not reach the container: sanitizer defaults apply, leaks included.
  if ! out=$(timeout 120 ctr --address "$sock" --namespace "$NS" run --rm --snapshotter native \
    "${opts[@]}" "$TAG" "$id" "$@" 2>&1); then
    fail "container '$*' failed: $out"
  fi
  printf '%s\n' "$out"
}

want_version=$("$koord" version 2>&1) || fail "$koord version failed on the host: $want_version"
got=$(run -- /usr/local/bin/koord version)
[[ $got == "$want_version" ]] || fail "koord version in the container: '$got', on the host: '$want_version'"
log "ok: $got"

# The role link found on the image's PATH, and the root-level link Koordinator's manifests name.
got=$(run -- koord-manager --help)
grep -q '^  koord-manager \[flags\]' <<<"$got" || fail "koord-manager --help printed: $got"
grep -q -- '--health-probe-addr' <<<"$got" || fail "koord-manager --help lacks its flags: $got"
got=$(run -- /koord-scheduler --help)
grep -q '^  koord-scheduler \[flags\]' <<<"$got" || fail "/koord-scheduler --help printed: $got"
log "ok: koord-manager and /koord-scheduler run their roles"

# Entrypoint koord, Cmd --help: the bare image lists the roles.
got=$(run --)
if ! grep -q 'koordlet' <<<"$got" || ! grep -q 'runtime-proxy' <<<"$got"; then
  fail "the image's default command printed: $got"
fi
log "ok: the image's default command lists the roles"

# The image has no shell; a static busybox mounted read-only looks at its files from inside.
# shellcheck disable=SC2016 # expanded by the container's shell
got=$(run --mount type=bind,src=/bin/busybox,dst=/.test/busybox,options=rbind:ro -- /.test/busybox sh -c '
  b=/.test/busybox
  $b test -s /etc/ssl/certs/ca-certificates.crt && echo certs=ok
  $b grep -c "BEGIN CERTIFICATE" /usr/lib/ssl/cert.pem
  $b stat -c "tmp=%a" /tmp
  $b grep -c -E "^(root:x:0:0|nobody:x:65534:65534):" /etc/passwd
  $b grep -c -E "^(root:x:0|nogroup:x:65534):" /etc/group
  echo "user=$($b id -un) cwd=$($b pwd)"
  echo "path=$PATH"
  $b readlink /usr/local/bin/koordlet
  $b ls /lib/x86_64-linux-gnu | $b grep -c "^libc\.so\.6$"')
mapfile -t lines <<<"$got"
[[ ${lines[0]:-} == certs=ok ]] || fail "no CA certificates in the container: $got"
((${lines[1]:-0} > 50)) || fail "OpenSSL's cert.pem in the container holds ${lines[1]:-no} certificates"
[[ ${lines[2]:-} == tmp=1777 ]] || fail "/tmp in the container: ${lines[2]:-}"
[[ ${lines[3]:-} == 2 ]] || fail "/etc/passwd lacks root or nobody: $got"
[[ ${lines[4]:-} == 2 ]] || fail "/etc/group lacks root or nogroup: $got"
[[ ${lines[5]:-} == 'user=root cwd=/' ]] || fail "user and working dir in the container: ${lines[5]:-}"
[[ ${lines[6]:-} == path=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin ]] || fail "${lines[6]:-}"
[[ ${lines[7]:-} == koord ]] || fail "/usr/local/bin/koordlet links to '${lines[7]:-}', not koord"
[[ ${lines[8]:-} == 1 ]] || fail "libc.so.6 missing from /lib/x86_64-linux-gnu: $got"
log "ok: CA certificates (${lines[1]} in cert.pem), /tmp 1777, passwd, group, PATH, links"
log "PASS"
