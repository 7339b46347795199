#!/usr/bin/env bash
# The ThreadSanitizer step of scripts/test.sh (docs/thread-sanitizer.md): builds the unit tests of
# koord's concurrent parts with GCC's -fsanitize=thread in a tree of their own (KOORD_TSAN=ON),
# then runs each test executable whole. A data race, a lock-order inversion or a misused mutex
# that TSan reports fails the step, as does a failed test; the log of each run is kept.
#   scripts/tsan.sh                        the executables listed below
#   scripts/tsan.sh koord_kube_tests       only these
# Environment: KOORD_TSAN_BUILD_DIR (default build-tsan); TSAN_OPTIONS (default below).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

build=${KOORD_TSAN_BUILD_DIR:-$root/build-tsan}
source "$root/scripts/lib/build-env.sh"
# The first report ends the process with TSan's exit code, so it cannot scroll past unnoticed;
# a deadlock report shows where both locks were taken.
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

if [[ $# -gt 0 ]]; then
  tests=("$@")
else
  # The informer, reflector and watch, work queue, event recorder and leader election (kube); the
  # HTTP client's pool and the server (http); the reactor and metrics (core); the scheduler's
  # parallelizer (runtime), scheduling queue and load-aware assign cache, the pods waiting at
  # Permit (framework) and the loop deciding them from other threads (loop); the koordlet's metric
  # cache; the leader gate's thread (app); the descheduler's eviction limiter and migration caps;
  # DeviceShare's per-node GPU views read while published.
  tests=(koord_core_tests koord_http_tests koord_kube_tests koord_app_tests
    koord_scheduler_runtime_tests koord_scheduler_queue_tests koord_scheduler_loadaware_tests
    koord_scheduler_framework_tests koord_scheduler_loop_tests
    koord_koordlet_metriccache_tests koord_descheduler_runtime_tests
    koord_descheduler_migration_tests koord_scheduler_deviceshare_tests)
fi

# No ASan here: one sanitizer runtime per process (cmake/KoordCompilerOptions.cmake).
cmake -S "$root" -B "$build" -G Ninja -DKOORD_TSAN=ON -DKOORD_SANITIZE=OFF -DKOORD_WERROR=ON \
  -DKOORD_CLUSTER_TESTS=OFF >/dev/null
start=$(date +%s)
ninja -C "$build" -j "$(nproc)" "${tests[@]}"
echo "tsan: built ${#tests[@]} test executables in $(($(date +%s) - start)) s"

# GCC 12's TSan runtime wants the address-space layout of the kernels it knew; with more mmap
# randomization (vm.mmap_rnd_bits above 28) it stops with "unexpected memory mapping". Newer
# runtimes re-execute themselves without ASLR; this does the same for them.
run=()
if setarch "$(uname -m)" -R true 2>/dev/null; then
  run=(setarch "$(uname -m)" -R)
fi

logs=$build/tsan-logs
rm -rf "$logs"
mkdir -p "$logs"
start=$(date +%s)
failed=()
for name in "${tests[@]}"; do
  exe=$(find "$build/tests" -type f -name "$name" -perm -u+x | head -n 1)
  if [[ -z $exe ]]; then
    echo "tsan: no executable $name under $build/tests" >&2
    failed+=("$name")
    continue
  fi
  t0=$(date +%s)
  if timeout 900 "${run[@]}" "$exe" >"$logs/$name.log" 2>&1; then
    echo "tsan: $name passed in $(($(date +%s) - t0)) s"
  else
    echo "tsan: $name FAILED (exit $?) in $(($(date +%s) - t0)) s" >&2
    failed+=("$name")
  fi
done
echo "tsan: ran ${#tests[@]} test executables in $(($(date +%s) - start)) s"
if ((${#failed[@]} > 0)); then
  for name in "${failed[@]}"; do
    log=$logs/$name.log
    [[ -f $log ]] || continue
    echo "tsan: $name, from $log:" >&2
    # The report when there is one, else the end of the test output.
    if grep -q "ThreadSanitizer" "$log"; then
      sed -n '/^WARNING: ThreadSanitizer\|^FATAL: ThreadSanitizer/,/^SUMMARY: ThreadSanitizer/p' \
        "$log" | head -n 120 >&2
    else
      grep -v '^[IWE][0-9]\{4\} ' "$log" | tail -n 60 >&2
    fi
  done
  echo "tsan: rerun one with: ${run[*]} $build/tests/.../<name> [test name]" >&2
  exit 1
fi
