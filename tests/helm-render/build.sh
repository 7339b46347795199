#!/usr/bin/env bash
# Builds tests/helm-render (the `helm template` stand-in koord's install test renders its chart
# with) into OUT_DIR (default ${TMPDIR:-/tmp}/koord-helm-render) and prints the binary's path.
# Offline, from Debian's Go packages in GOPATH mode: golang-go,
# golang-github-masterminds-sprig-dev and golang-gopkg-yaml.v2-dev (scripts/install-deps.sh).
# Nothing is written into the source tree: the Go build cache goes under OUT_DIR too.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-${TMPDIR:-/tmp}/koord-helm-render}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# No modules and no proxy: the imports resolve to /usr/share/gocode or the build fails.
export GO111MODULE=off GOFLAGS='' GOPROXY=off
export GOPATH=/usr/share/gocode
export GOCACHE=$out/go-cache
(cd "$src" && go build -o "$out/helm-render" .)
echo "$out/helm-render"
