#!/usr/bin/env bash
# Installs every build and test dependency of koord from Debian 12 packages. Idempotent: when
# everything is present it only asks dpkg and returns in well under a second.
set -euo pipefail

packages=(
  g++ cmake ninja-build ccache pkg-config git clang-format
  libboost1.81-dev libboost-json1.81-dev libboost-program-options1.81-dev
  libboost-url1.81-dev libboost-system1.81-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libssl-dev libfmt-dev catch2 libyaml-cpp-dev
  # scripts/build-image.sh: strip and readelf, and the CA bundle the image carries.
  binutils ca-certificates
  # tests/helm-render: renders deploy/charts/koordinator without Helm (Go in GOPATH mode).
  golang-go golang-github-masterminds-sprig-dev golang-gopkg-yaml.v2-dev
  # scripts/fuzz.sh: clang and libFuzzer's runtime (libclang_rt.fuzzer, in Debian's compiler-rt).
  clang-14 libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to apt-get install" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have no package lists yet; refresh them at most once per run.
if ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
