#include <catch2/catch.hpp>

#include "metriccache/metric_cache.h"
#include "metricsadvisor/usage_gauges.h"

using namespace koord::roles::koordlet;
namespace mc = koord::roles::koordlet::metriccache;

TEST_CASE("node and pod usage on /metrics; a pod that leaves takes its series along") {
  koord::metrics::Registry registry;
  UsageGauges gauges(registry, "node-a");
  mc::MetricCache cache;
  const mc::TimePoint t{std::chrono::seconds(1'800'000'000)};
  REQUIRE(cache.append(mc::MetricKind::kNodeCPUUsage, "", t, 1.25));
  REQUIRE(cache.append(mc::MetricKind::kPodCPUUsage, "uid-a", t, 0.5));
  REQUIRE(cache.append(mc::MetricKind::kPodMemoryUsage, "uid-a", t, 1024));
  PodMeta a;
  a.namespace_ = "web";
  a.name = "nginx";
  a.uid = "uid-a";
  gauges.update(cache, std::make_shared<const std::vector<PodMeta>>(std::vector<PodMeta>{a}));
  auto text = registry.render();
  CHECK(text.find("koordlet_node_used_cpu_cores{node=\"node-a\"} 1.25") != std::string::npos);
  CHECK(text.find("koordlet_pod_resource_usage{node=\"node-a\",pod_namespace=\"web\",pod_name="
                  "\"nginx\",pod_uid=\"uid-a\",resource=\"memory\"} 1024") != std::string::npos);
  gauges.update(cache, std::make_shared<const std::vector<PodMeta>>());
  CHECK(registry.render().find("pod_uid=\"uid-a\"") == std::string::npos);
}

TEST_CASE("the node's batch and mid allocatable as Koordinator's koordlet records them") {
  koord::metrics::Registry registry;
  UsageGauges gauges(registry, "node-a");
  NodeInfo node;
  node.name = "node-a";
  node.allocatable.emplace("kubernetes.io/batch-cpu", koord::kube::Quantity::parse("2500").value());
  node.allocatable.emplace("kubernetes.io/batch-memory",
                           koord::kube::Quantity::parse("4Gi").value());
  gauges.updateAllocatable(node);
  const auto text = registry.render();
  CHECK(text.find("koordlet_node_resource_allocatable{node=\"node-a\",resource=\"kubernetes.io/"
                  "batch-cpu\",unit=\"integer\"} 2500") != std::string::npos);
  CHECK(text.find("koordlet_node_resource_allocatable{node=\"node-a\",resource=\"kubernetes.io/"
                  "batch-memory\",unit=\"byte\"} 4294967296") != std::string::npos);
  // Absent ones read 0, so a node that lost its batch resources shows it.
  CHECK(text.find("koordlet_node_resource_allocatable{node=\"node-a\",resource=\"kubernetes.io/"
                  "mid-cpu\",unit=\"integer\"} 0") != std::string::npos);
}
