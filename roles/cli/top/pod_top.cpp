#include "top/pod_top.h"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <algorithm>
#include <unordered_map>

#include "koord/apis/node_metric.h"
#include "koord/core/saturating.h"
#include "koord/kube/time.h"
#include "output/table.h"
#include "snapshot/object_fields.h"
#include "top/pod_facts.h"
#include "top/quantity_text.h"

namespace koord::roles::cli {
namespace json = boost::json;
namespace {

struct Usage {
  std::int64_t cpu_milli = 0;
  std::int64_t memory = 0;
};

std::int64_t milliSum(const kube::ResourceList& list,
                      std::initializer_list<std::string_view> names) {
  std::int64_t sum = 0;
  for (auto name : names) {
    if (auto it = list.find(name); it != list.end())
      sum = saturatingAdd(sum, it->second.milliValue());
  }
  return sum;
}

std::int64_t valueSum(const kube::ResourceList& list,
                      std::initializer_list<std::string_view> names) {
  std::int64_t sum = 0;
  for (auto name : names) {
    if (auto it = list.find(name); it != list.end())
      sum = saturatingAdd(sum, it->second.value());
  }
  return sum;
}

}  // namespace

std::vector<PodTopRow> topPods(const ClusterSnapshot& snapshot, const PodTopOptions& options) {
  // Usage by namespace/name from every NodeMetric; a NodeMetric that does not decode adds none.
  std::unordered_map<std::string, Usage> usage;
  for (const auto& m : snapshot.of("NodeMetric")) {
    auto metric = apis::decodeNodeMetric(m);
    if (!metric)
      continue;
    for (const auto& p : metric->pods_metric) {
      // batch-cpu counts milli-cores as whole units: the koordlet reports cpu and memory only.
      usage[p.namespace_ + "/" + p.name] = {milliSum(p.pod_usage, {"cpu"}),
                                            valueSum(p.pod_usage, {"memory"})};
    }
  }
  std::vector<PodTopRow> rows;
  for (const auto& p : snapshot.of("Pod")) {
    PodTopRow row;
    row.namespace_ = std::string(metaString(p, "namespace"));
    row.name = std::string(metaString(p, "name"));
    if (!options.namespace_.empty() && row.namespace_ != options.namespace_)
      continue;
    auto facts = podFacts(p);
    if (!facts) {
      row.problem = facts.error().message;
      if (options.node.empty())
        rows.push_back(std::move(row));
      continue;
    }
    if (!options.node.empty() && facts->node_name != options.node)
      continue;
    row.node_name = facts->node_name;
    row.phase = facts->phase;
    row.qos = std::string(apis::qosClassName(facts->qos));
    row.priority = std::string(apis::priorityClassName(facts->priority));
    // Koordinator's batch and mid resources are milli-cores in whole units.
    row.cpu_request_milli = saturatingAdd(
        milliSum(facts->requests, {"cpu"}),
        valueSum(facts->requests, {"kubernetes.io/batch-cpu", "kubernetes.io/mid-cpu"}));
    row.memory_request = valueSum(
        facts->requests, {"memory", "kubernetes.io/batch-memory", "kubernetes.io/mid-memory"});
    if (auto it = usage.find(row.namespace_ + "/" + row.name); it != usage.end()) {
      row.cpu_used_milli = it->second.cpu_milli;
      row.memory_used = it->second.memory;
    }
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const PodTopRow& a, const PodTopRow& b) {
    return std::tie(a.namespace_, a.name) < std::tie(b.namespace_, b.name);
  });
  return rows;
}

std::string podTopTable(const std::vector<PodTopRow>& rows, bool one_namespace) {
  std::vector<std::string> headers = {"NAMESPACE", "NAME",     "NODE",    "QOS",      "PRIORITY",
                                      "CPU-REQ",   "CPU-USED", "MEM-REQ", "MEM-USED", "STATUS"};
  if (one_namespace)
    headers.erase(headers.begin());
  Table table(std::move(headers));
  for (const auto& r : rows) {
    std::vector<std::string> cells = {r.namespace_,
                                      r.name,
                                      r.node_name,
                                      r.qos,
                                      r.priority,
                                      cpuText(r.cpu_request_milli),
                                      cpuText(r.cpu_used_milli),
                                      memoryText(r.memory_request),
                                      memoryText(r.memory_used),
                                      r.problem.empty() ? r.phase : r.problem};
    if (one_namespace)
      cells.erase(cells.begin());
    table.addRow(std::move(cells));
  }
  return table.render();
}

json::value podTopJson(const ClusterSnapshot& snapshot, const std::vector<PodTopRow>& rows) {
  auto optional = [](const std::optional<std::int64_t>& v) {
    return v ? json::value(*v) : json::value(nullptr);
  };
  auto text = [](const std::string& s) {
    return s.empty() ? json::value(nullptr) : json::value(s);
  };
  json::array pods;
  for (const auto& r : rows) {
    pods.push_back(json::object{
        {"namespace", r.namespace_},
        {"name", r.name},
        {"nodeName", text(r.node_name)},
        {"phase", text(r.phase)},
        {"qosClass", text(r.qos)},
        {"priorityClass", text(r.priority)},
        {"cpu", json::object{{"requestMilli", r.cpu_request_milli},
                             {"usedMilli", optional(r.cpu_used_milli)}}},
        {"memory", json::object{{"request", r.memory_request}, {"used", optional(r.memory_used)}}},
        {"problem", text(r.problem)},
    });
  }
  return json::object{{"takenAt", kube::formatTime(snapshot.taken_at)}, {"pods", std::move(pods)}};
}

}  // namespace koord::roles::cli
