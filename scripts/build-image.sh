#!/usr/bin/env bash
# Builds koord's container image without a Docker daemon: an OCI image layout in one tar file
# that `ctr images import` (containerd), `podman load` and `skopeo copy oci-archive:` all read.
# The image holds the stripped koord binary and koord-runtime-proxy (the role built on its own),
# the shared libraries they link (taken from this machine, found with ldd), the role symlinks,
# CA certificates and a minimal /etc; nothing else.
#
#   scripts/build-image.sh [--koord PATH] [--tag NAME:TAG] [--output FILE]
#   scripts/build-image.sh [--koord PATH] --rootfs-only DIR
#
#   --koord PATH        the koord binary (default build/src/koord under the checkout)
#   --tag NAME:TAG      the image's name (default koord.local/koord:dev)
#   --output FILE       the OCI archive to write (default build/koord-image.tar under the checkout)
#   --rootfs-only DIR   only assemble the image's file tree in DIR (empty or absent) and stop;
#                       deploy/docker/Dockerfile copies that tree, so both images hold the same
#   --allow-sanitizer   accept a binary built with ASan/UBSan (tests only: such an image is slow,
#                       large and prints sanitizer reports; it must never be deployed)
#
# The same binary, libraries and certificates give the same image digest: every file has mtime
# $SOURCE_DATE_EPOCH (default 0) and owner 0:0, tar entries are sorted, gzip stores no name or
# time, and the config's created time is that same epoch. The image's manifest digest (what
# `ctr images ls` shows) is printed on stdout.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

koord=$root/build/src/koord
tag=koord.local/koord:dev
output=$root/build/koord-image.tar
rootfs_only=
allow_sanitizer=0

readonly IMAGE_PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

log() { printf 'build-image: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}
usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
  exit "${1:-0}"
}

while (($#)); do
  case $1 in
    --koord) koord=${2:?--koord needs a path}; shift 2 ;;
    --koord=*) koord=${1#*=}; shift ;;
    --tag) tag=${2:?--tag needs a name}; shift 2 ;;
    --tag=*) tag=${1#*=}; shift ;;
    --output) output=${2:?--output needs a path}; shift 2 ;;
    --output=*) output=${1#*=}; shift ;;
    --rootfs-only) rootfs_only=${2:?--rootfs-only needs a directory}; shift 2 ;;
    --rootfs-only=*) rootfs_only=${1#*=}; shift ;;
    --allow-sanitizer) allow_sanitizer=1; shift ;;
    -h | --help) usage 0 ;;
    *) log "unknown argument: $1"; usage 2 >&2 ;;
  esac
done

epoch=${SOURCE_DATE_EPOCH:-0}
[[ $epoch =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH must be a number of seconds, not '$epoch'"

for tool in readelf strip ldd tar gzip sha256sum; do
  command -v "$tool" >/dev/null || die "$tool not found (scripts/install-deps.sh installs it)"
done

# ------------------------------------------------------------------------------------------------
# The binary: an x86-64 executable with a dynamic loader, and no sanitizer runtime unless asked.
# ------------------------------------------------------------------------------------------------

check_binary() {
  [[ -f $koord ]] || die "$koord: no such file (build koord first, or pass --koord)"
  local magic header
  magic=$(head -c 4 "$koord" | od -An -c | tr -d ' ')
  [[ $magic == '177ELF' ]] || die "$koord is not an ELF file"
  header=$(LC_ALL=C readelf -h "$koord") || die "$koord: readelf cannot read its header"
  if ! grep -Eq 'Class:[[:space:]]+ELF64' <<<"$header" ||
    ! grep -Eq 'Machine:[[:space:]]+Advanced Micro Devices X86-64' <<<"$header"; then
    die "$koord is not an x86-64 ELF binary; the image is linux/amd64"
  fi
  grep -Eq 'Type:[[:space:]]+(EXEC|DYN)' <<<"$header" || die "$koord is not an executable"
  # A shared library is DYN too; only an executable asks for a program interpreter.
  interp=$(LC_ALL=C readelf -l "$koord" | sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p')
  [[ -n $interp ]] || die "$koord has no program interpreter: not a dynamically linked executable"
  [[ $interp == /* ]] || die "$koord: interpreter '$interp' is not an absolute path"

  ldd_out=$(LC_ALL=C ldd "$koord" 2>&1) || die "ldd $koord failed: $ldd_out"
  if grep -q 'not found' <<<"$ldd_out"; then
    die "$koord links libraries this machine lacks:"$'\n'"$(grep 'not found' <<<"$ldd_out")"
  fi
  # The roles with executables of their own sit beside koord, which runs them from there; their
  # libraries (gRPC for the runtime-proxy) join the list.
  local own own_ldd
  while read -r own; do
    [[ -f $(dirname "$koord")/$own && ! -L $(dirname "$koord")/$own ]] ||
      die "$(dirname "$koord")/$own: no such executable (building koord builds it)"
    own_ldd=$(LC_ALL=C ldd "$(dirname "$koord")/$own" 2>&1) || die "ldd $own failed: $own_ldd"
    ! grep -q 'not found' <<<"$own_ldd" || die "$own links libraries this machine lacks"
    ldd_out+=$'\n'$own_ldd
  done < <(own_executable_roles)
  # ldd shows a dynamically linked runtime; the dynamic symbols also catch -static-libasan.
  local sanitizer
  sanitizer=$(grep -Eo 'lib(a|ub|t|l|hwa)san\.so[.0-9]*' <<<"$ldd_out" | sort -u | tr '\n' ' ' || true)
  if [[ -z $sanitizer ]] &&
    LC_ALL=C readelf --dyn-syms -W "$koord" | grep -Eq ' (__asan_init|__tsan_init|__hwasan_init)'; then
    sanitizer='a statically linked sanitizer runtime'
  fi
  if [[ -n $sanitizer ]]; then
    ((allow_sanitizer)) ||
      die "$koord is a sanitizer build (${sanitizer% }); images are built from a release build (cmake -DKOORD_SANITIZE=OFF -DCMAKE_BUILD_TYPE=Release)"
    log "warning: $koord is a sanitizer build (${sanitizer% }); this image is for tests only"
  fi
}

# ------------------------------------------------------------------------------------------------
# The image's file tree
# ------------------------------------------------------------------------------------------------

# The argv[0] names come from the role table, so a new role gets its link without touching this.
role_binaries() {
  local def=$root/roles/roles.def names
  [[ -f $def ]] || die "$def not found: run this script from a koord checkout"
  names=$(sed -n 's/^KOORD_ROLE([^,]*, *"[^"]*", *"\([^"]*\)".*/\1/p' "$def")
  [[ -n $names ]] || die "no KOORD_ROLE entries in $def"
  echo "$names"
}

# The argv[0] names of the roles built as executables of their own.
own_executable_roles() {
  sed -n 's/^KOORD_ROLE_OWN_EXECUTABLE([^,]*, *"[^"]*", *"\([^"]*\)".*/\1/p' "$root/roles/roles.def"
}

# Every library ldd resolves, as "path-in-image host-file" lines. A library lands at the path
# ldd names (where the loader looks for it) with the content of the file that path resolves to
# here; the loader also at the interpreter path the binary asks for, if ldd named it otherwise.
library_list() {
  local line path
  local -A seen=()
  while IFS= read -r line; do
    case $line in
      *'=>'*) path=${line#*=> } ;;
      *) path=${line#"${line%%[![:space:]]*}"} ;;
    esac
    path=${path%% (*}
    [[ $path == /* && -z ${seen[$path]:-} ]] || continue # linux-vdso.so.1 lives in the kernel
    seen[$path]=1
    echo "$path $(readlink -f "$path")"
  done <<<"$ldd_out"
  [[ -n ${seen[$interp]:-} ]] || echo "$interp $(readlink -f "$interp")"
}

assemble_rootfs() {
  local dir=$1
  if [[ -e $dir ]]; then
    [[ -d $dir && -z $(ls -A "$dir") ]] || die "$dir exists and is not an empty directory"
  fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)

  local d
  for d in etc etc/ssl/certs usr/local/bin root tmp; do
    mkdir -p "$dir/$d"
  done

  # strip keeps the build-id note, so a crash can still be matched to the unstripped binary.
  strip --strip-all -o "$dir/usr/local/bin/koord" "$koord"
  # The role names in /usr/local/bin (on PATH), and at / as well: Koordinator's manifests run
  # `command: [/koord-manager]` and the like, and keep working with this image in place of theirs.
  local b
  while read -r b; do
    ln -s koord "$dir/usr/local/bin/$b"
    ln -s usr/local/bin/koord "$dir/$b"
  done < <(role_binaries)
  while read -r b; do
    strip --strip-all -o "$dir/usr/local/bin/$b" "$(dirname "$koord")/$b"
    ln -s "usr/local/bin/$b" "$dir/$b"
  done < <(own_executable_roles)

  local target source
  while read -r target source; do
    [[ -f $source ]] || die "library $target resolves to $source, which is not a file"
    mkdir -p "$dir$(dirname "$target")"
    cp -L "$source" "$dir$target"
  done < <(library_list)

  local certs=/etc/ssl/certs/ca-certificates.crt
  [[ -s $certs ]] || die "$certs missing: install the ca-certificates package (scripts/install-deps.sh)"
  cp -L "$certs" "$dir$certs"
  # koord's TLS client trusts OpenSSL's default paths, which live under the OPENSSLDIR compiled
  # into libcrypto; Debian points them at /etc/ssl/certs with these two links, and so do we.
  local ssldir=/usr/lib/ssl
  if command -v openssl >/dev/null; then
    ssldir=$(openssl version -d | sed -n 's/^OPENSSLDIR: "\(.*\)"$/\1/p')
    [[ $ssldir == /* ]] || die "cannot read OPENSSLDIR from 'openssl version -d'"
  fi
  mkdir -p "$dir$ssldir"
  ln -s /etc/ssl/certs "$dir$ssldir/certs"
  ln -s "$certs" "$dir$ssldir/cert.pem"

  # Only root and nobody: koord runs as root on nodes (cgroups, the CRI socket) and as anything
  # its Deployment says elsewhere (deploy/ runs manager and scheduler as 65534, with a read-only
  # root filesystem: the modes below let any uid run koord); a name for uid 65534 keeps tools
  # that look it up quiet.
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
    'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' >"$dir/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$dir/etc/group"
  # Without this file glibc would try DNS before /etc/hosts, which Kubernetes writes per pod.
  printf '%s\n' 'passwd: files' 'group: files' 'hosts: files dns' >"$dir/etc/nsswitch.conf"

  # Modes are set here, not left to the umask, so the digest does not depend on who builds it.
  # Debian ships the loader executable (it can run programs directly), the libraries not.
  find "$dir" -type f -exec chmod 0644 {} +
  find "$dir" -type d -exec chmod 0755 {} +
  chmod 0755 "$dir$interp" "$dir/usr/local/bin/koord"
  while read -r b; do
    chmod 0755 "$dir/usr/local/bin/$b"
  done < <(own_executable_roles)
  chmod 0700 "$dir/root"
  chmod 1777 "$dir/tmp"
}

# ------------------------------------------------------------------------------------------------
# The OCI image layout
# ------------------------------------------------------------------------------------------------

# Docker's reference rules: a first component without a dot, a colon or "localhost" is a Docker
# Hub name. Kubelet asks containerd for the normalized name, so the image is stored under it.
normalize_tag() {
  local t=$1 first
  [[ $t =~ ^[a-z0-9]([a-z0-9._/-]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]([a-z0-9._-]*[a-z0-9])?)*:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] ||
    die "--tag '$t' is not an image reference of the form [registry/]name:tag (lower-case name)"
  first=${t%%/*}
  if [[ $t != */* ]]; then
    t=docker.io/library/$t
  elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then
    t=docker.io/$t
  fi
  echo "$t"
}

# tar with everything that could vary between builders pinned.
repro_tar() {
  tar --format=gnu --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    --no-acls --no-xattrs --no-selinux "$@"
}

# Moves FILE into $layout's blobs; sets blob_digest ("sha256:<hex>") and blob_size.
blob() {
  local sum
  sum=$(sha256sum "$1" | cut -d' ' -f1)
  blob_size=$(stat -c %s "$1")
  blob_digest=sha256:$sum
  mv "$1" "$layout/blobs/sha256/$sum"
}

# One gzip'd layer from rootfs paths (tar arguments); sets layer_digest, layer_size, layer_diff.
add_layer() {
  local raw=$work/layer.tar
  repro_tar -C "$rootfs" -cf "$raw" "$@"
  layer_diff=sha256:$(sha256sum "$raw" | cut -d' ' -f1)
  gzip -n -6 -c "$raw" >"$raw.gz"
  rm -f "$raw"
  blob "$raw.gz"
  layer_digest=$blob_digest
  layer_size=$blob_size
}

created() { date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ; }

build_image() {
  mkdir -p "$(dirname "$output")"
  output=$(cd "$(dirname "$output")" && pwd)/$(basename "$output")
  # Next to the output, so the final rename stays on one filesystem.
  work=$(mktemp -d "$(dirname "$output")/.build-image.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  rootfs=$work/rootfs
  layout=$work/oci
  mkdir -p "$layout/blobs/sha256"
  assemble_rootfs "$rootfs"

  # Two layers: the runtime (loader, libraries, certificates, /etc), which changes with Debian's
  # packages, and koord with its links, which changes with every commit; a node that has the
  # first fetches only the second.
  local base_digest base_size base_diff
  local -a top koord_files
  mapfile -t top < <(cd "$rootfs" && find . -mindepth 1 -maxdepth 1 ! -name 'koord*' -printf '%P\n' |
    LC_ALL=C sort)
  add_layer --exclude='usr/local/bin/*' "${top[@]}"
  base_digest=$layer_digest base_size=$layer_size base_diff=$layer_diff
  mapfile -t koord_files < <(cd "$rootfs" && {
    printf '%s\n' usr usr/local
    find usr/local/bin . -mindepth 1 -maxdepth 1 -name 'koord*' -printf '%h/%f\n' | sed 's|^\./||'
    echo usr/local/bin
  } | LC_ALL=C sort)
  add_layer --no-recursion "${koord_files[@]}"

  local when config_digest config_size
  when=$(created)
  printf '%s' \
    '{"created":"'"$when"'","architecture":"amd64","os":"linux",' \
    '"config":{"Env":["PATH='"$IMAGE_PATH"'"],"Entrypoint":["/usr/local/bin/koord"],' \
    '"Cmd":["--help"],"WorkingDir":"/"},' \
    '"rootfs":{"type":"layers","diff_ids":["'"$base_diff"'","'"$layer_diff"'"]},' \
    '"history":[{"created":"'"$when"'","created_by":"scripts/build-image.sh: loader, shared libraries, CA certificates, /etc"},' \
    '{"created":"'"$when"'","created_by":"scripts/build-image.sh: /usr/local/bin/koord and the role links"}]}' \
    >"$work/config.json"
  blob "$work/config.json"
  config_digest=$blob_digest config_size=$blob_size
  printf '%s' \
    '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",' \
    '"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"'"$config_digest"'","size":'"$config_size"'},' \
    '"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"'"$base_digest"'","size":'"$base_size"'},' \
    '{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"'"$layer_digest"'","size":'"$layer_size"'}]}' \
    >"$work/manifest.json"
  blob "$work/manifest.json"
  local manifest_digest=$blob_digest manifest_size=$blob_size
  # Both annotations carry the full name: org.opencontainers.image.ref.name is the OCI field
  # podman and skopeo read (ctr 1.6 takes it too when it is a full reference), and containerd's
  # own io.containerd.image.name is the one ctr reads first.
  printf '%s' \
    '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[' \
    '{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"'"$manifest_digest"'","size":'"$manifest_size"',' \
    '"platform":{"architecture":"amd64","os":"linux"},' \
    '"annotations":{"io.containerd.image.name":"'"$name"'","org.opencontainers.image.ref.name":"'"$name"'"}}]}' \
    >"$layout/index.json"
  printf '%s' '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"

  chmod 0755 "$layout/blobs" "$layout/blobs/sha256"
  chmod 0644 "$layout"/blobs/sha256/* "$layout/index.json" "$layout/oci-layout"
  # Names without a leading ./: containerd matches "index.json" literally.
  (cd "$layout" && repro_tar -cf "$work/image.tar" oci-layout index.json blobs)
  mv "$work/image.tar" "$output"
  log "wrote $output ($(stat -c %s "$output") bytes): $name, manifest $manifest_digest"
  echo "$manifest_digest"
}

# The tag first: a typo should not wait for the binary's checks.
[[ -n $rootfs_only ]] || name=$(normalize_tag "$tag")
check_binary
if [[ -n $rootfs_only ]]; then
  assemble_rootfs "$rootfs_only"
  log "assembled the image's file tree in $rootfs_only"
else
  build_image
fi
