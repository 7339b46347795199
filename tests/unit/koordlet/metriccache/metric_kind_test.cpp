#include "metriccache/metric_kind.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace koord::roles::koordlet::metriccache;

TEST_CASE("metric kinds use Koordinator's series names") {
  CHECK(toString(MetricKind::kNodeCPUUsage) == "node_cpu_usage");
  CHECK(toString(MetricKind::kNodeMemoryUsage) == "node_memory_usage");
  CHECK(toString(MetricKind::kSystemCPUUsage) == "sys_cpu_usage");
  CHECK(toString(MetricKind::kSystemMemoryUsage) == "sys_memory_usage");
  CHECK(toString(MetricKind::kPodCPUUsage) == "pod_cpu_usage");
  CHECK(toString(MetricKind::kContainerMemoryUsage) == "container_memory_usage");
  CHECK(toString(MetricKind::kHostAppCPUUsage) == "host_application_cpu_usage");
  CHECK(toString(MetricKind::kBECPULimit) == "node_be_cpu_real_limit");
}

TEST_CASE("every metric kind has a distinct name that parses back") {
  std::set<std::string> names;
  for (MetricKind kind : allMetricKinds()) {
    const auto name = std::string(toString(kind));
    CHECK(names.insert(name).second);
    CHECK(metricKindFromString(name) == kind);
  }
  CHECK(names.size() == kMetricKindCount);
  CHECK_FALSE(metricKindFromString("node_cpu").has_value());
}
