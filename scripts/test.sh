#!/usr/bin/env bash
# The test command: installs what is missing, builds koord with -Werror under AddressSanitizer
# and UndefinedBehaviorSanitizer (KOORD_SANITIZE=OFF for a plain build), and runs every test
# with CTest. Compiler output is cached by ccache under ~/.cache so rebuilds take seconds.
#   scripts/test.sh                 all tests
#   scripts/test.sh -L unit         only the unit label (ctest arguments pass through)
# After the tests, the ThreadSanitizer step (scripts/tsan.sh, docs/thread-sanitizer.md) builds the
# unit tests of the concurrent parts with -fsanitize=thread in build-tsan/ and runs them; then the
# fuzz step (scripts/fuzz.sh, docs/fuzzing.md) builds the libFuzzer targets with clang-14 in
# build-fuzz/ and runs each for a bounded time (KOORD_FUZZ_SECONDS, 150 s in all). Both run by
# default only without ctest arguments; KOORD_TSAN and KOORD_FUZZ =OFF skip them, =ON force them.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

scripts/install-deps.sh

sanitize=${KOORD_SANITIZE:-ON}
build=${KOORD_BUILD_DIR:-$root/build-test}
[[ $sanitize == ON ]] || build=${KOORD_BUILD_DIR:-$root/build}
source "$root/scripts/lib/build-env.sh"

jobs=$(nproc)
cmake -S "$root" -B "$build" -G Ninja -DKOORD_SANITIZE="$sanitize" -DKOORD_WERROR=ON >/dev/null
ninja -C "$build" -j "$jobs"
tsan=${KOORD_TSAN:-$([[ $# -eq 0 ]] && echo ON || echo OFF)}
fuzz=${KOORD_FUZZ:-$([[ $# -eq 0 ]] && echo ON || echo OFF)}
(cd "$build" && ctest --output-on-failure -j "$jobs" "$@")
if [[ $tsan == ON ]]; then
  "$root/scripts/tsan.sh"
fi
[[ $fuzz == ON ]] || exit 0
exec "$root/scripts/fuzz.sh"
