#include "plugins/elasticquota/overuse_revoke.h"

#include <catch2/catch.hpp>

#include "plugins/elasticquota/group_quota_manager.h"
#include "quota_test_util.h"

using namespace koord::roles::scheduler::elasticquota;
using namespace elasticquota_test;
using namespace std::chrono_literals;

namespace {

const std::chrono::system_clock::time_point t0{std::chrono::hours(1000)};

std::vector<std::string> names(const std::vector<QuotaPod>& pods) {
  std::vector<std::string> out;
  for (const QuotaPod& p : pods)
    out.push_back(p.name);
  return out;
}

QuotaPod started(QuotaPod p, std::chrono::system_clock::time_point at) {
  p.start_time = at;
  return p;
}

}  // namespace

TEST_CASE("Revoke: least important first, given back when they still fit",
          "[scheduler][elasticquota]") {
  QuotaPod pinned = pod("pinned", cores(2), true, 0);
  pinned.non_preemptible = true;
  const std::vector<QuotaPod> pods = {
      started(pod("high", cores(6), true, 10), t0),
      started(pod("mid-old", cores(3), true, 5), t0 + 1s),
      started(pod("mid-new", cores(3), true, 5), t0 + 2s),
      started(pod("low", cores(2), true, 1), t0),
      pinned,
  };
  // Used 16 over a runtime of 10: low, mid-new and mid-old come out (8 left); then, most
  // important first, mid-old and mid-new would not fit back but low does.
  CHECK(names(choosePodsToRevoke({{"cpu", cores(16)}}, {{"cpu", cores(10)}}, pods, t0 + 1h)) ==
        std::vector<std::string>{"mid-old", "mid-new"});
  // Within runtime: nothing.
  CHECK(choosePodsToRevoke({{"cpu", cores(16)}}, {{"cpu", cores(16)}}, pods, t0 + 1h).empty());
  // Even all preemptible pods out leave it over: all of them go.
  CHECK(names(choosePodsToRevoke({{"cpu", cores(16)}}, {{"cpu", cores(1)}}, pods, t0 + 1h)) ==
        std::vector<std::string>{"low", "mid-new", "mid-old", "high"});
  // A pod not started yet counts as the newest.
  CHECK(lessImportantPod(pod("pending", 1, true, 5), started(pod("old", 1, true, 5), t0), t0 + 1h));
}

TEST_CASE("Revoke: a pod already terminating counts as given back before any other",
          "[scheduler][elasticquota]") {
  QuotaPod going = started(pod("going", cores(3), true, 10), t0);
  going.terminating = true;
  const std::vector<QuotaPod> pods = {
      going,
      started(pod("low", cores(3), true, 1), t0),
      started(pod("mid", cores(4), true, 5), t0),
  };
  // Used 10 over a runtime of 7: the terminating pod alone brings it back, although it is the
  // most important; low keeps running.
  CHECK(names(choosePodsToRevoke({{"cpu", cores(10)}}, {{"cpu", cores(7)}}, pods, t0 + 1h)) ==
        std::vector<std::string>{"going"});
  // Over by more: the terminating pod, then the least important, and the terminating one is
  // never handed back even where it would fit.
  CHECK(names(choosePodsToRevoke({{"cpu", cores(10)}}, {{"cpu", cores(4)}}, pods, t0 + 1h)) ==
        std::vector<std::string>{"low", "going"});
}

TEST_CASE("Revoke: only after delayEvictTime over runtime", "[scheduler][elasticquota]") {
  GroupQuotaManager m{ElasticQuotaArgs{}};  // delayEvictTime 120s
  REQUIRE(m.updateQuota(quota({.name = "q1", .max_cores = 20})).has_value());
  REQUIRE(m.updateQuota(quota({.name = "q2", .min_cores = 10, .max_cores = 20})).has_value());
  m.setClusterTotalResource({{"cpu", cores(20)}});
  for (int i = 1; i <= 3; ++i)
    m.onPodAdd("q1", started(pod(fmt::format("q1-{}", i), cores(5), true, i), t0));
  CHECK(m.revokeOverUsedQuotas(t0).empty());
  // q2 claims its min: q1's runtime drops to 10 while it uses 15.
  m.onPodAdd("q2", pod("q2-pod", cores(10), false));
  CHECK(valueOf(m.summary("q1")->runtime, "cpu") == cores(10));
  CHECK(names(m.podsToRevoke("q1", t0)) == std::vector<std::string>{"q1-1"});
  CHECK(m.revokeOverUsedQuotas(t0 + 1s).empty());
  CHECK(m.revokeOverUsedQuotas(t0 + 60s).empty());
  CHECK(m.revokeOverUsedQuotas(t0 + 120s).empty());
  CHECK(names(m.revokeOverUsedQuotas(t0 + 121s)) == std::vector<std::string>{"q1-1"});
  // The clock starts again after a revocation.
  CHECK(m.revokeOverUsedQuotas(t0 + 122s).empty());
  // Back within runtime for a moment resets it too.
  m.onPodDelete("ns", "q2-pod");
  CHECK(m.revokeOverUsedQuotas(t0 + 200s).empty());
  m.onPodAdd("q2", pod("q2-pod", cores(10), false));
  CHECK(m.revokeOverUsedQuotas(t0 + 300s).empty());
  CHECK(names(m.revokeOverUsedQuotas(t0 + 321s)) == std::vector<std::string>{"q1-1"});
}
