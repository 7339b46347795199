// The projections the informers make of the API server's objects, which any pod or node writer
// (and the koordlet, for NodeMetric) shapes: the scheduler's Pod and Node, the koordlet's Pod,
// PodList and Node, the manager's NodeView and PodView, NodeMetric, and the manager's batch
// calculation over a decoded node, its pods and its metric. Byte 0 picks the projection, the rest
// is the object's JSON (for the batch calculation {"node": ..., "pods": [...], "metric": ...}).
// Each checks what its header promises: non-negative, bounded resource sums that a node can add
// and remove again without residue, checked host ports, a list that agrees with its items,
// batch resources never below zero.
#include <boost/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "api_object_input.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "koord/apis/node_metric.h"
#include "koord/apis/node_resource_topology.h"
#include "koord/apis/slo_config.h"
#include "noderesource/batch_resource.h"
#include "noderesource/node_view.h"
#include "statesinformer/node_info.h"
#include "statesinformer/pod_meta.h"

namespace {

namespace json = boost::json;
namespace sched = koord::roles::scheduler;
namespace koordlet = koord::roles::koordlet;
namespace noderesource = koord::roles::manager::noderesource;

void check(bool ok) {
  if (!ok)
    std::abort();
}

// Every amount at least zero; scalars sorted by name with no zero entries (Resource's contract).
void checkResource(const sched::Resource& r) {
  check(r.milli_cpu >= 0 && r.memory >= 0 && r.ephemeral_storage >= 0 && r.allowed_pod_number >= 0);
  for (std::size_t i = 0; i < r.scalar.size(); ++i) {
    check(r.scalar[i].second > 0);
    check(i == 0 || r.scalar[i - 1].first < r.scalar[i].first);
  }
}

void schedulerPod(const json::value& v) {
  auto pod = sched::decodePodInfo(v);
  if (!pod)
    return;
  checkResource(pod->requests);
  checkResource(pod->non_zero_requests);
  checkResource(pod->limits);
  // Non-zero requests only fill in absent cpu and memory requests.
  check(pod->non_zero_requests.milli_cpu >= pod->requests.milli_cpu);
  check(pod->non_zero_requests.memory >= pod->requests.memory);
  for (const auto& p : pod->host_ports) {
    check(p.port > 0 && p.port <= 65535 && !p.host_ip.empty());
    check(p.protocol == "TCP" || p.protocol == "UDP" || p.protocol == "SCTP");
  }
  for (const auto* rules : {&pod->pod_affinity, &pod->pod_anti_affinity}) {
    for (const auto& term : rules->required)
      check(!term.namespaces.empty());
    for (const auto& term : rules->preferred)
      check(!term.term.namespaces.empty());
  }
  for (const auto& c : pod->topology_spread_constraints)
    check(c.max_skew > 0);
  // A node takes the pod in and gives it back without residue.
  sched::NodeInfo node;
  auto shared = std::make_shared<const sched::PodInfo>(std::move(*pod));
  node.addPod(shared);
  node.addPod(shared);
  check(node.removePod(shared->uid) && node.removePod(shared->uid));
  check(node.requested == sched::Resource{} && node.non_zero_requested == sched::Resource{});
  check(node.used_ports.empty() && node.pods.empty() && node.pods_with_affinity.empty());
}

void schedulerNode(const json::value& v) {
  auto node = sched::decodeNode(v);
  if (!node)
    return;
  checkResource(node->allocatable);
  checkResource(node->capacity);
}

void koordletPod(const json::value& v) {
  auto pod = koordlet::decodePodMeta(v);
  for (const auto& c : pod ? pod->containers : std::vector<koordlet::ContainerMeta>{})
    check(c.id.empty() || c.id_error.empty());
  // One bad pod in a list is skipped with its error, never dropped silently or fatal.
  const json::value list = json::object{{"items", json::array{v}}};
  auto decoded = koordlet::decodePodList(list);
  check(decoded.has_value());
  check(decoded->pods.size() + decoded->errors.size() == 1);
  check(decoded->pods.size() == (pod ? 1u : 0u));
}

void koordletPodList(const json::value& v) {
  auto list = koordlet::decodePodList(v);
  if (!list || !v.is_object())
    return;
  const json::value* items = v.get_object().if_contains("items");
  if (items != nullptr && items->is_array())
    check(list->pods.size() + list->errors.size() == items->get_array().size());
}

void koordletNode(const json::value& v) {
  auto node = koordlet::decodeNodeInfo(v);
  if (!node)
    return;
  check(node->kubelet_port >= 0 && node->kubelet_port <= 65535);
  for (const auto& [type, address] : node->addresses)
    check(!address.empty());
  check(koordlet::kubeletAddress(*node, "InternalIP").empty() == node->addresses.empty());
}

void managerNode(const json::value& v) {
  auto node = noderesource::decodeNodeView(v);
  if (!node)
    return;
  check(!node->reservation || node->reservation_error.empty());
}

void nodeMetric(const json::value& v) {
  (void)koord::apis::decodeNodeMetric(v);
}

// Both cpu policies Koordinator resolves to, with every memory policy, once with thresholds.
void batch(const json::value& v) {
  if (!v.is_object())
    return;
  const json::object& o = v.get_object();
  const json::value* node_json = o.if_contains("node");
  if (node_json == nullptr)
    return;
  auto node = noderesource::decodeNodeView(*node_json);
  if (!node)
    return;
  std::vector<noderesource::PodView> pods;
  if (const json::value* list = o.if_contains("pods"); list && list->is_array()) {
    for (const auto& item : list->get_array()) {
      if (auto pod = noderesource::decodePodView(item))
        pods.push_back(std::move(*pod));
    }
  }
  std::vector<const noderesource::PodView*> pointers;
  for (const auto& p : pods)
    pointers.push_back(&p);
  std::optional<koord::apis::NodeMetric> metric;
  if (const json::value* m = o.if_contains("metric")) {
    if (auto decoded = koord::apis::decodeNodeMetric(*m))
      metric = std::move(*decoded);
  }
  // Fresh: the metric's own update time (a missing one degrades whatever the clock says).
  const auto now = metric && metric->update_time ? *metric->update_time
                                                 : std::chrono::system_clock::time_point{};
  using koord::apis::CalculatePolicy;
  int round = 0;
  for (auto cpu : {CalculatePolicy::kUsage, CalculatePolicy::kMaxUsageRequest}) {
    for (auto memory :
         {CalculatePolicy::kUsage, CalculatePolicy::kRequest, CalculatePolicy::kMaxUsageRequest}) {
      koord::apis::ColocationStrategy strategy;
      strategy.enable = true;
      strategy.cpu_calculate_policy = cpu;
      strategy.memory_calculate_policy = memory;
      if (round++ == 0) {
        strategy.batch_cpu_threshold_percent = 80;
        strategy.batch_memory_threshold_percent = 70;
      }
      auto result = noderesource::calculateBatchResource(
          *node, pointers, metric ? &*metric : nullptr, strategy, now);
      if (result.state != noderesource::BatchState::kCalculated)
        continue;
      check(result.desired.cpu && result.desired.cpu->sign() >= 0);
      check(result.desired.memory && result.desired.memory->sign() >= 0);
    }
  }
}

void managerPod(const json::value& v) {
  (void)noderesource::decodePodView(v);
}

// The NodeResourceTopology the scheduler's informer decodes, and Koordinator's CPU annotations
// on it: what decodes encodes to an object that decodes the same, and each annotation that
// parses is written back to text that parses the same.
void nodeResourceTopology(const json::value& v) {
  namespace apis = koord::apis;
  auto nrt = apis::decodeNodeResourceTopology(v);
  if (!nrt)
    return;
  check(nrt->zones.size() <= apis::kMaxNRTZones);
  auto again = apis::decodeNodeResourceTopology(apis::encodeNodeResourceTopology(*nrt));
  check(again.has_value() && again->zones == nrt->zones && again->annotations == nrt->annotations &&
        again->topology_policies == nrt->topology_policies);
  const auto& a = nrt->annotations;
  auto written = [](std::string_view key, std::string value) {
    return koord::kube::Labels{{std::string(key), std::move(value)}};
  };
  if (auto t = apis::parseCPUTopologyAnnotation(a)) {
    auto back = apis::parseCPUTopologyAnnotation(
        written(apis::kAnnotationNodeCPUTopology, apis::formatCPUTopology(*t)));
    check(back.has_value() && *back == *t);
  }
  for (std::string_view key :
       {apis::kAnnotationNodeCPUSharedPools, apis::kAnnotationNodeBECPUSharedPools}) {
    if (auto pools = apis::parseCPUSharedPools(a, key)) {
      auto back = apis::parseCPUSharedPools(written(key, apis::formatCPUSharedPools(*pools)), key);
      check(back.has_value() && *back == *pools);
    }
  }
  if (auto allocs = apis::parsePodCPUAllocs(a)) {
    auto back = apis::parsePodCPUAllocs(
        written(apis::kAnnotationNodeCPUAllocs, apis::formatPodCPUAllocs(*allocs)));
    check(back.has_value() && *back == *allocs);
  }
  if (auto policy = apis::parseKubeletCPUManagerPolicy(a)) {
    auto back = apis::parseKubeletCPUManagerPolicy(written(
        apis::kAnnotationKubeletCPUManagerPolicy, apis::formatKubeletCPUManagerPolicy(*policy)));
    check(back.has_value() && *back == *policy);
  }
  if (auto info = apis::parseCPUBasicInfo(a); info && *info) {
    auto back = apis::parseCPUBasicInfo(
        written(apis::kAnnotationCPUBasicInfo, apis::formatCPUBasicInfo(**info)));
    check(back.has_value() && *back == *info);
  }
}

// In the order of the selector byte.
constexpr koord::fuzz::ApiObjectCheck kChecks[] = {
    schedulerPod, schedulerNode, koordletPod, koordletPodList, koordletNode,
    managerNode,  managerPod,    nodeMetric,  batch,           nodeResourceTopology,
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return koord::fuzz::runApiObjectCheck(data, size, kChecks);
}
