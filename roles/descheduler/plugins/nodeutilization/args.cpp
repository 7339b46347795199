// Node utilization args: the checks upstream's validation makes (thresholds required, within
// 0-100, the same resources in both sets, low not above target) and its cpu/memory/pods filling.
#include "plugins/nodeutilization/args.h"

#include <boost/json.hpp>

#include "koord/kube/strict_fields.h"

namespace koord::roles::descheduler::nodeutilization {

namespace json = boost::json;
namespace strict = kube::strict;

namespace {

Expected<const json::object*> rootOf(const json::value* args) {
  if (args == nullptr || args->is_null())
    return strict::fieldError("thresholds", "no resource threshold is configured");
  return strict::asObject(*args, "args");
}

Expected<Thresholds> requiredThresholds(const json::object& o, std::string_view name) {
  auto t = utilization::thresholdsField(o, name, "");
  if (!t)
    return t.error();
  if (!*t || (*t)->empty())
    return strict::fieldError(name, "no resource threshold is configured");
  return std::move(**t);
}

Expected<std::int32_t> numberOfNodes(const json::object& o) {
  auto n = strict::int32Field(o, "numberOfNodes", "");
  if (!n)
    return n.error();
  if (n->value_or(0) < 0)
    return strict::fieldError("numberOfNodes", "must be greater than or equal to 0");
  return n->value_or(0);
}

void fillBasics(Thresholds& t, double fill) {
  for (const char* name : {"cpu", "memory", "pods"})
    t.try_emplace(name, fill);
}

}  // namespace

Expected<LowNodeUtilizationArgs> decodeLowNodeUtilizationArgs(const json::value* args) {
  auto root = rootOf(args);
  if (!root)
    return root.error();
  const json::object& o = **root;
  if (auto ok =
          strict::rejectUnknownFields(o,
                                      {"useDeviationThresholds", "thresholds", "targetThresholds",
                                       "numberOfNodes", "evictableNamespaces"},
                                      "");
      !ok)
    return ok.error();
  LowNodeUtilizationArgs a;
  auto dev = strict::boolField(o, "useDeviationThresholds", "");
  if (!dev)
    return dev.error();
  a.use_deviation_thresholds = dev->value_or(false);
  auto low = requiredThresholds(o, "thresholds");
  if (!low)
    return low.error();
  auto high = requiredThresholds(o, "targetThresholds");
  if (!high)
    return high.error();
  for (const auto& [name, pct] : *low) {
    auto it = high->find(name);
    if (it == high->end())
      return strict::fieldError("thresholds[" + name + "]",
                                "thresholds and targetThresholds configured different resources");
    if (pct > it->second)
      return strict::fieldError("thresholds[" + name + "]",
                                "percentage is greater than targetThresholds'");
  }
  for (const auto& [name, pct] : *high) {
    if (low->count(name) == 0)
      return strict::fieldError("targetThresholds[" + name + "]",
                                "thresholds and targetThresholds configured different resources");
  }
  auto nodes = numberOfNodes(o);
  if (!nodes)
    return nodes.error();
  a.number_of_nodes = *nodes;
  auto ns = utilization::namespacesField(o, "evictableNamespaces", "");
  if (!ns)
    return ns.error();
  a.evictable_namespaces = std::move(*ns);
  const double fill =
      a.use_deviation_thresholds ? utilization::kMinPercent : utilization::kMaxPercent;
  a.thresholds = std::move(*low);
  a.target_thresholds = std::move(*high);
  fillBasics(a.thresholds, fill);
  fillBasics(a.target_thresholds, fill);
  return a;
}

Expected<HighNodeUtilizationArgs> decodeHighNodeUtilizationArgs(const json::value* args) {
  auto root = rootOf(args);
  if (!root)
    return root.error();
  const json::object& o = **root;
  if (auto ok = strict::rejectUnknownFields(
          o, {"thresholds", "numberOfNodes", "evictableNamespaces"}, "");
      !ok)
    return ok.error();
  HighNodeUtilizationArgs a;
  auto low = requiredThresholds(o, "thresholds");
  if (!low)
    return low.error();
  a.thresholds = std::move(*low);
  fillBasics(a.thresholds, utilization::kMaxPercent);
  auto nodes = numberOfNodes(o);
  if (!nodes)
    return nodes.error();
  a.number_of_nodes = *nodes;
  auto ns = utilization::namespacesField(o, "evictableNamespaces", "");
  if (!ns)
    return ns.error();
  a.evictable_namespaces = std::move(*ns);
  return a;
}

}  // namespace koord::roles::descheduler::nodeutilization
