// The cycle bench's fine-grained mode (--fine-grained): the real Scheduler loop binding the same
// pods without and with NodeNUMAResource and DeviceShare (LSR pods, GPU-sharing pods, plain pods).
#pragma once

#include <cstddef>

namespace koord::bench::scheduler {

struct FineGrainedOptions {
  std::size_t nodes = 5000;
  std::size_t pods = 10000;
  int parallelism = 16;
  int rounds = 1;
  bool run_without = true, run_with = true;
};

/// Runs the rounds (A then B each round, each in a child process of its own), prints each run and
/// the side-by-side table, and checks that every pod bound and, in B, that every LSR pod got a
/// whole-core cpuset and every GPU pod a device allocation. Returns 0, or 1 when a run failed or
/// a check did not hold.
int runFineGrained(const FineGrainedOptions& o);

}  // namespace koord::bench::scheduler
