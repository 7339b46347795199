#!/usr/bin/env bash
# The test command: installs what is missing, builds koord with -Werror under AddressSanitizer
# and UndefinedBehaviorSanitizer (KOORD_SANITIZE=OFF for a plain build), and runs every test
# with CTest. Compiler output is cached by ccache under ~/.cache so rebuilds take seconds.
#   scripts/test.sh                 all tests
#   scripts/test.sh -L unit         only the unit label (ctest arguments pass through)
# After the tests, the fuzz step (scripts/fuzz.sh, docs/fuzzing.md) builds the libFuzzer targets
# with clang-14 in build-fuzz/ and runs each for a bounded time (KOORD_FUZZ_SECONDS, 150 s in
# all); it runs by default only without ctest arguments. KOORD_FUZZ=OFF skips it, ON forces it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

scripts/install-deps.sh

sanitize=${KOORD_SANITIZE:-ON}
build=${KOORD_BUILD_DIR:-$root/build-test}
[[ $sanitize == ON ]] || build=${KOORD_BUILD_DIR:-$root/build}
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/koord-ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
# Paths under the checkout are hashed relative to it, so a fresh clone elsewhere (CI) reuses the
# objects of an earlier build instead of recompiling everything.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
# Sanitizer builds: every leak and every UB report fails the test that caused it.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

jobs=$(nproc)
cmake -S "$root" -B "$build" -G Ninja -DKOORD_SANITIZE="$sanitize" -DKOORD_WERROR=ON >/dev/null
ninja -C "$build" -j "$jobs"
fuzz=${KOORD_FUZZ:-$([[ $# -eq 0 ]] && echo ON || echo OFF)}
(cd "$build" && ctest --output-on-failure -j "$jobs" "$@")
[[ $fuzz == ON ]] || exit 0
exec "$root/scripts/fuzz.sh"
