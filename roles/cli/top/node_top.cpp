#include "top/node_top.h"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "koord/apis/node_metric.h"
#include "koord/core/saturating.h"
#include "koord/kube/time.h"
#include "noderesource/node_view.h"
#include "output/table.h"
#include "qosmanager/cpusuppress/cpu_suppress_calculator.h"
#include "qosmanager/cpusuppress/suppress_strategy.h"
#include "snapshot/object_fields.h"
#include "top/pod_facts.h"
#include "top/quantity_text.h"

namespace koord::roles::cli {
namespace json = boost::json;
namespace noderesource = koord::roles::manager::noderesource;
namespace qos = koord::roles::koordlet::qosmanager;
namespace {

std::int64_t milliOf(const kube::ResourceList& list, std::string_view name) {
  auto it = list.find(name);
  return it == list.end() ? 0 : it->second.milliValue();
}

std::int64_t valueOf(const kube::ResourceList& list, std::string_view name) {
  auto it = list.find(name);
  return it == list.end() ? 0 : it->second.value();
}

std::optional<std::int64_t> optionalOf(const kube::ResourceList& list, std::string_view name) {
  auto it = list.find(name);
  if (it == list.end())
    return std::nullopt;
  return it->second.value();
}

// The koordlet's suppression formula over what the NodeMetric reports: the node's usage, each
// pod's, with the pods' QoS as the pods themselves say it.
std::optional<std::int64_t> beCpuLimit(const noderesource::NodeView& node,
                                       const apis::NodeMetric& metric,
                                       const qos::CPUSuppressStrategy& strategy,
                                       const std::map<std::string, const PodFacts*>& pods) {
  if (!metric.node_metric)
    return std::nullopt;
  qos::SuppressInput in;
  in.node_capacity_milli = milliOf(node.capacity, "cpu");
  in.node_used_milli = milliOf(metric.node_metric->node_usage, "cpu");
  const std::int64_t kubelet = std::max<std::int64_t>(
      0, saturatingSub(in.node_capacity_milli, milliOf(node.allocatable, "cpu")));
  const std::int64_t annotated = node.reservation ? milliOf(*node.reservation, "cpu") : 0;
  in.node_reserved_milli = std::max(kubelet, annotated);
  in.threshold_percent = strategy.threshold_percent;
  in.min_percent = strategy.min_percent;
  for (const auto& m : metric.pods_metric) {
    qos::PodCPUUsage u;
    u.used_milli = milliOf(m.pod_usage, "cpu");
    auto it = pods.find(m.namespace_ + "/" + m.name);
    if (it == pods.end()) {
      u.known = false;
    } else {
      u.koord_qos = it->second->qos;
      u.kube_qos = it->second->kube_qos;
    }
    in.pods.push_back(u);
  }
  return qos::calculateBESuppressCPU(in).suppress_milli;
}

}  // namespace

std::vector<NodeTopRow> topNodes(const ClusterSnapshot& snapshot) {
  std::unordered_map<std::string, const json::value*> metrics;
  for (const auto& m : snapshot.of("NodeMetric"))
    metrics.emplace(std::string(metaString(m, "name")), &m);
  std::unordered_map<std::string, const json::value*> slos;
  for (const auto& s : snapshot.of("NodeSLO"))
    slos.emplace(std::string(metaString(s, "name")), &s);

  std::vector<PodFacts> pods;
  std::unordered_map<std::string, std::vector<std::string>> pod_problems;
  for (const auto& p : snapshot.of("Pod")) {
    auto facts = podFacts(p);
    if (facts) {
      pods.push_back(std::move(*facts));
      continue;
    }
    // Counted nowhere, but said on the node it runs on.
    const json::object* spec = objectField(&p.get_object(), "spec");
    pod_problems[std::string(stringField(spec, "nodeName"))].push_back(facts.error().message);
  }
  std::unordered_map<std::string, std::map<std::string, const PodFacts*>> pods_by_node;
  for (const auto& p : pods) {
    if (!p.node_name.empty() && p.active())
      pods_by_node[p.node_name][p.namespace_ + "/" + p.name] = &p;
  }
  std::unordered_map<std::string, int> evictions;
  for (const auto& e : snapshot.of("Event")) {
    const json::object& o = e.get_object();
    if (stringField(&o, "reason") != "evictPodSuccess")
      continue;
    std::string_view host = stringField(objectField(&o, "source"), "host");
    if (host.empty())
      host = stringField(&o, "reportingInstance");
    if (!host.empty())
      ++evictions[std::string(host)];
  }
  std::unordered_map<std::string, int> reservations;
  for (const auto& r : snapshot.of("Reservation")) {
    const json::object* status = objectField(&r.get_object(), "status");
    if (stringField(status, "phase") == "Available" && !stringField(status, "nodeName").empty())
      ++reservations[std::string(stringField(status, "nodeName"))];
  }

  std::vector<NodeTopRow> rows;
  for (const auto& n : snapshot.of("Node")) {
    NodeTopRow row;
    row.name = std::string(metaString(n, "name"));
    auto node = noderesource::decodeNodeView(n);
    if (!node) {
      row.problems.push_back(fmt::format("Node: {}", node.error().message));
      rows.push_back(std::move(row));
      continue;
    }
    row.cpu_allocatable_milli = milliOf(node->allocatable, "cpu");
    row.memory_allocatable = valueOf(node->allocatable, "memory");
    row.batch_cpu_milli = optionalOf(node->allocatable, "kubernetes.io/batch-cpu");
    row.batch_memory = optionalOf(node->allocatable, "kubernetes.io/batch-memory");
    row.mid_cpu_milli = optionalOf(node->allocatable, "kubernetes.io/mid-cpu");
    row.mid_memory = optionalOf(node->allocatable, "kubernetes.io/mid-memory");
    if (auto it = pod_problems.find(row.name); it != pod_problems.end()) {
      for (const auto& problem : it->second)
        row.problems.push_back(problem);
    }
    static const std::map<std::string, const PodFacts*> kNoPods;
    auto on_node = pods_by_node.find(row.name);
    const auto& node_pods = on_node == pods_by_node.end() ? kNoPods : on_node->second;
    for (const auto& [key, p] : node_pods)
      ++(p->be() ? row.be_pods : row.ls_pods);
    if (auto it = evictions.find(row.name); it != evictions.end())
      row.evictions = it->second;
    if (auto it = reservations.find(row.name); it != reservations.end())
      row.reservations = it->second;

    std::optional<apis::NodeMetric> metric;
    if (auto it = metrics.find(row.name); it != metrics.end()) {
      auto decoded = apis::decodeNodeMetric(*it->second);
      if (decoded)
        metric = std::move(*decoded);
      else
        row.problems.push_back(fmt::format("NodeMetric: {}", decoded.error().message));
    }
    if (metric) {
      if (metric->update_time)
        row.metric_age = std::chrono::duration_cast<std::chrono::seconds>(snapshot.taken_at -
                                                                          *metric->update_time);
      if (metric->node_metric) {
        row.node_cpu_used_milli = milliOf(metric->node_metric->node_usage, "cpu");
        row.node_memory_used = valueOf(metric->node_metric->node_usage, "memory");
      }
      for (const auto& m : metric->pods_metric) {
        // The pod's own labels say its class when it is still listed; the koordlet's report
        // otherwise.
        auto it = node_pods.find(m.namespace_ + "/" + m.name);
        const bool be = it != node_pods.end() ? it->second->be() : isBestEffort(m.qos, m.priority);
        std::int64_t& cpu = be ? row.be_cpu_used_milli : row.ls_cpu_used_milli;
        std::int64_t& memory = be ? row.be_memory_used : row.ls_memory_used;
        cpu = saturatingAdd(cpu, milliOf(m.pod_usage, "cpu"));
        memory = saturatingAdd(memory, valueOf(m.pod_usage, "memory"));
      }
    }
    if (auto it = slos.find(row.name); it != slos.end()) {
      const json::object* spec = objectField(&it->second->get_object(), "spec");
      const json::object* threshold =
          spec ? objectField(spec, "resourceUsedThresholdWithBE") : nullptr;
      if (threshold != nullptr) {
        auto strategy = qos::decodeCPUSuppressStrategy(*threshold);
        if (!strategy) {
          row.problems.push_back(fmt::format("NodeSLO: {}", strategy.error().message));
        } else if (strategy->enable) {
          row.suppress_policy = std::string(qos::cpuSuppressPolicyName(strategy->policy));
          if (metric)
            row.be_cpu_limit_milli = beCpuLimit(*node, *metric, *strategy, node_pods);
        }
      }
    }
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(),
            [](const NodeTopRow& a, const NodeTopRow& b) { return a.name < b.name; });
  return rows;
}

std::string nodeTopTable(const std::vector<NodeTopRow>& rows) {
  Table table({"NAME", "CPU-ALLOC", "LS-CPU", "BE-CPU", "BATCH-CPU", "MID-CPU", "BE-CPU-LIMIT",
               "MEM-ALLOC", "LS-MEM", "BE-MEM", "BATCH-MEM", "MID-MEM", "PODS(LS/BE)", "EVICTIONS",
               "RESERVATIONS", "METRIC-AGE"});
  for (const auto& r : rows) {
    std::string limit = cpuText(r.be_cpu_limit_milli);
    if (!r.suppress_policy.empty() && !r.be_cpu_limit_milli)
      limit = r.suppress_policy + ", no metric";
    table.addRow(
        {r.name, cpuText(r.cpu_allocatable_milli), cpuText(r.ls_cpu_used_milli),
         cpuText(r.be_cpu_used_milli), cpuText(r.batch_cpu_milli), cpuText(r.mid_cpu_milli), limit,
         memoryText(r.memory_allocatable), memoryText(r.ls_memory_used),
         memoryText(r.be_memory_used), memoryText(r.batch_memory), memoryText(r.mid_memory),
         fmt::format("{}/{}", r.ls_pods, r.be_pods), fmt::format("{}", r.evictions),
         fmt::format("{}", r.reservations), r.metric_age ? ageText(*r.metric_age) : std::string()});
  }
  return table.render();
}

json::value nodeTopJson(const ClusterSnapshot& snapshot, const std::vector<NodeTopRow>& rows) {
  auto optional = [](const std::optional<std::int64_t>& v) {
    return v ? json::value(*v) : json::value(nullptr);
  };
  json::array nodes;
  for (const auto& r : rows) {
    json::array problems;
    for (const auto& p : r.problems)
      problems.emplace_back(p);
    nodes.push_back(json::object{
        {"name", r.name},
        {"cpu", json::object{{"allocatableMilli", r.cpu_allocatable_milli},
                             {"usedMilli", r.node_cpu_used_milli},
                             {"lsUsedMilli", r.ls_cpu_used_milli},
                             {"beUsedMilli", r.be_cpu_used_milli},
                             {"batchAllocatableMilli", optional(r.batch_cpu_milli)},
                             {"midAllocatableMilli", optional(r.mid_cpu_milli)},
                             {"beLimitMilli", optional(r.be_cpu_limit_milli)}}},
        {"memory", json::object{{"allocatable", r.memory_allocatable},
                                {"used", r.node_memory_used},
                                {"lsUsed", r.ls_memory_used},
                                {"beUsed", r.be_memory_used},
                                {"batchAllocatable", optional(r.batch_memory)},
                                {"midAllocatable", optional(r.mid_memory)}}},
        {"pods", json::object{{"ls", r.ls_pods}, {"be", r.be_pods}}},
        {"cpuSuppressPolicy",
         r.suppress_policy.empty() ? json::value(nullptr) : json::value(r.suppress_policy)},
        {"evictions", r.evictions},
        {"reservations", r.reservations},
        {"metricAgeSeconds",
         r.metric_age ? json::value(r.metric_age->count()) : json::value(nullptr)},
        {"problems", std::move(problems)},
    });
  }
  return json::object{{"takenAt", kube::formatTime(snapshot.taken_at)},
                      {"nodes", std::move(nodes)}};
}

}  // namespace koord::roles::cli
