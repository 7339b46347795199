// The cycle bench's job-scheduling mode (--jobs): the real Scheduler loop binding the same pods
// without and with Coscheduling and ElasticQuota (gangs of 10 under a three-level quota tree).
#pragma once

#include <cstddef>

namespace koord::bench::scheduler {

struct JobsOptions {
  std::size_t nodes = 5000;
  std::size_t pods = 10000;
  std::size_t gang_size = 10;
  /// ElasticQuota objects below koordinator-root-quota, split over three levels 1 : 9 : 90.
  std::size_t quotas = 1000;
  int parallelism = 16;
  int rounds = 1;
  bool run_without = true, run_with = true;
  /// What B adds: gangs with Coscheduling, quotas with ElasticQuota (both unless one is asked
  /// for alone, to split B-A between the two plugins).
  bool with_gangs = true, with_quotas = true;
};

/// Runs the rounds (A then B each round, each in a child process of its own), prints each run
/// and the side-by-side table, and checks every pod bound and every gang bound whole. Returns
/// the process exit status: 0, or 1 when a run failed or a check did not hold.
int runJobs(const JobsOptions& o);

}  // namespace koord::bench::scheduler
