#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <string>

#include "collector_fixture.h"
#include "koord/apis/features.h"
#include "koord/core/feature_gate.h"
#include "metricsadvisor/metrics_advisor.h"

using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::testing;
namespace ma = koord::roles::koordlet::metricsadvisor;

namespace {

const ma::CollectorSpec* find(std::string_view name) {
  for (const auto& spec : ma::koordletCollectors()) {
    if (spec.name == name)
      return &spec;
  }
  return nullptr;
}

std::vector<std::string> built(const std::string& gates, bool pagecache_flag) {
  boost::asio::io_context io;
  koord::FeatureGate gate(koord::apis::koordletFeatures());
  gate.set(gates);
  CollectorFixture f(koord::cgroup::CgroupVersion::kV1, *find("pod throttled collector"));
  f.options.enable_pagecache_collector = pagecache_flag;
  ma::MetricsAdvisor advisor(
      io, [] { return StatesSnapshot{}; }, gate,
      ma::CollectorContext{
          .cgroups = f.cgroups, .cache = f.cache, .metrics = f.registry, .options = f.options});
  std::vector<std::string> names;
  for (auto n : advisor.collectors())
    names.emplace_back(n);
  return names;
}

bool has(const std::vector<std::string>& v, std::string_view name) {
  return std::find(v.begin(), v.end(), name) != v.end();
}

}  // namespace

TEST_CASE("collectors: PSI, throttling and page cache lines with Koordinator's gates and intervals",
          "[collectors]") {
  KoordletOptions o;
  o.collect_res_used_interval = std::chrono::milliseconds(1500);
  o.psi_collector_interval = std::chrono::milliseconds(7000);
  const auto* psi = find("psi collector");
  REQUIRE(psi != nullptr);
  CHECK(psi->gate == "PSICollector");
  CHECK(psi->interval(o) == std::chrono::milliseconds(7000));
  const auto* throttled = find("pod throttled collector");
  REQUIRE(throttled != nullptr);
  CHECK(throttled->gate.empty());
  CHECK(throttled->wanted == nullptr);
  CHECK(throttled->interval(o) == std::chrono::milliseconds(1500));
  const auto* pagecache = find("page cache collector");
  REQUIRE(pagecache != nullptr);
  CHECK(pagecache->gate.empty());
  REQUIRE(pagecache->wanted != nullptr);
  CHECK_FALSE(pagecache->wanted(o));
  o.enable_pagecache_collector = true;
  CHECK(pagecache->wanted(o));
  CHECK(pagecache->interval(o) == std::chrono::milliseconds(1500));
}

TEST_CASE("collectors: a line without a gate always runs; the others follow gate and flag",
          "[collectors]") {
  auto defaults = built("", false);
  CHECK(has(defaults, "pod throttled collector"));
  CHECK_FALSE(has(defaults, "psi collector"));
  CHECK_FALSE(has(defaults, "page cache collector"));

  auto all = built("PSICollector=true", true);
  CHECK(has(all, "pod throttled collector"));
  CHECK(has(all, "psi collector"));
  CHECK(has(all, "page cache collector"));
}
