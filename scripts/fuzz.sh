#!/usr/bin/env bash
# The fuzz step of scripts/test.sh (docs/fuzzing.md): builds the libFuzzer targets of tests/fuzz
# with clang-14 under ASan/UBSan in a tree of their own, then runs each one for a bounded time,
# starting from its checked-in seed corpus. Any crash, leak, UB report, timeout or out-of-memory
# fails the step; the input that caused it is saved under <build>/fuzz-artifacts/.
#   scripts/fuzz.sh                     every target, about KOORD_FUZZ_SECONDS of wall time
#   scripts/fuzz.sh quantity hpack      only these targets
# Environment: KOORD_FUZZ_SECONDS (default 150) is the wall time shared by all the runs;
# KOORD_FUZZ_BUILD_DIR (default build-fuzz); KOORD_FUZZ_JOBS (default: 2, or nproc if less).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

build=${KOORD_FUZZ_BUILD_DIR:-$root/build-fuzz}
budget=${KOORD_FUZZ_SECONDS:-150}
jobs=${KOORD_FUZZ_JOBS:-$(($(nproc) < 2 ? $(nproc) : 2))}
# libFuzzer checks for leaks after each input that allocated more than it freed; UBSan must stop
# at the first report so that libFuzzer saves the input.
source "$root/scripts/lib/build-env.sh"

if [[ $# -gt 0 ]]; then
  targets=("$@")
else
  targets=()
  for f in tests/fuzz/*_fuzz.cpp; do
    name=${f##*/}
    targets+=("${name%_fuzz.cpp}")
  done
fi

# KOORD_SANITIZE=OFF: the fuzz tree brings its own sanitizers (cmake/KoordFuzz.cmake).
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja -DKOORD_FUZZ=ON \
  -DKOORD_SANITIZE=OFF -DKOORD_BUILD_TESTS=OFF -DKOORD_WERROR=ON >/dev/null
start=$(date +%s)
ninja -C "$build" -j "$(nproc)" "${targets[@]/%/_fuzz}"
echo "fuzz: built ${#targets[@]} targets in $(($(date +%s) - start)) s"

# Each run gets an equal share of the budget, `jobs` of them at a time.
per=$((budget * jobs / ${#targets[@]}))
((per >= 5)) || per=5
# Artifacts of earlier runs would be taken for this run's.
rm -rf "$build/fuzz-artifacts"
mkdir -p "$build/fuzz-artifacts" "$build/fuzz-logs"
run_one() {
  local name=$1
  # New inputs go to a scratch corpus in the build tree (kept between local runs, so later runs
  # start from what earlier ones found); the checked-in seeds are only read.
  mkdir -p "$build/fuzz-corpus/$name"
  "$build/tests/fuzz/${name}_fuzz" -max_total_time="$per" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$name-" \
    "$build/fuzz-corpus/$name" "tests/fuzz/corpus/$name" >"$build/fuzz-logs/$name.log" 2>&1
}

start=$(date +%s)
failed=()
running=()
names=()
for name in "${targets[@]}"; do
  run_one "$name" &
  running+=($!)
  names+=("$name")
  if ((${#running[@]} >= jobs)); then
    wait "${running[0]}" || failed+=("${names[0]}")
    running=("${running[@]:1}")
    names=("${names[@]:1}")
  fi
done
for i in "${!running[@]}"; do
  wait "${running[$i]}" || failed+=("${names[$i]}")
done

for name in "${targets[@]}"; do
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz-logs/$name.log")
  echo "fuzz: $name ${runs:-?} runs in ${per} s"
done
echo "fuzz: ran ${#targets[@]} targets in $(($(date +%s) - start)) s"
if ((${#failed[@]} > 0)); then
  for name in "${failed[@]}"; do
    echo "fuzz: $name FAILED; the reproducer is in $build/fuzz-artifacts/ ($name-*):" >&2
    tail -n 40 "$build/fuzz-logs/$name.log" >&2
  done
  echo "fuzz: rerun one input with: $build/tests/fuzz/<name>_fuzz <file>" >&2
  exit 1
fi
