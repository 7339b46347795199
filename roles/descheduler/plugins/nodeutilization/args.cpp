// Node utilization args: the checks upstream's validation makes (thresholds required, within
// 0-100, the same resources in both sets, low not above target) and its cpu/memory/pods filling.
#include "plugins/nodeutilization/args.h"

#include <boost/json.hpp>

#include "koord/kube/strict_fields.h"
#include "plugins/pluginkit/args_reader.h"

namespace koord::roles::descheduler::nodeutilization {

namespace json = boost::json;
namespace strict = kube::strict;

namespace {

// The thresholds member `name`, which must name at least one resource.
auto requiredThresholds(std::string_view name) {
  return [name](const json::object& o) -> Expected<Thresholds> {
    auto t = utilization::thresholdsField(o, name, "");
    if (!t)
      return t.error();
    if (!*t || (*t)->empty())
      return strict::fieldError(name, "no resource threshold is configured");
    return std::move(**t);
  };
}

Expected<std::optional<utilization::Namespaces>> evictableNamespaces(const json::object& o) {
  return utilization::namespacesField(o, "evictableNamespaces", "");
}

// Upstream's check that both sets name the same resources, each low one not above its target.
Expected<void> validatePair(const Thresholds& low, const Thresholds& high) {
  for (const auto& [name, pct] : low) {
    auto it = high.find(name);
    if (it == high.end())
      return strict::fieldError("thresholds[" + name + "]",
                                "thresholds and targetThresholds configured different resources");
    if (pct > it->second)
      return strict::fieldError("thresholds[" + name + "]",
                                "percentage is greater than targetThresholds'");
  }
  for (const auto& [name, pct] : high) {
    if (low.count(name) == 0)
      return strict::fieldError("targetThresholds[" + name + "]",
                                "thresholds and targetThresholds configured different resources");
  }
  return {};
}

void fillBasics(Thresholds& t, double fill) {
  for (const char* name : {"cpu", "memory", "pods"})
    t.try_emplace(name, fill);
}

}  // namespace

// Absent args read as {}: refused for the missing thresholds, as upstream's validation does.
Expected<LowNodeUtilizationArgs> decodeLowNodeUtilizationArgs(const json::value* args) {
  LowNodeUtilizationArgs a;
  pluginkit::ArgsReader r(args, {"useDeviationThresholds", "thresholds", "targetThresholds",
                                 "numberOfNodes", "evictableNamespaces"});
  r.boolean("useDeviationThresholds", a.use_deviation_thresholds)
      .decoded(a.thresholds, requiredThresholds("thresholds"))
      .decoded(a.target_thresholds, requiredThresholds("targetThresholds"))
      .then([&] { return validatePair(a.thresholds, a.target_thresholds); })
      .decoded(a.number_of_nodes, utilization::numberOfNodesField)
      .decoded(a.evictable_namespaces, evictableNamespaces);
  const double fill =
      a.use_deviation_thresholds ? utilization::kMinPercent : utilization::kMaxPercent;
  fillBasics(a.thresholds, fill);
  fillBasics(a.target_thresholds, fill);
  return r.finish(std::move(a));
}

Expected<HighNodeUtilizationArgs> decodeHighNodeUtilizationArgs(const json::value* args) {
  HighNodeUtilizationArgs a;
  pluginkit::ArgsReader r(args, {"thresholds", "numberOfNodes", "evictableNamespaces"});
  r.decoded(a.thresholds, requiredThresholds("thresholds"))
      .decoded(a.number_of_nodes, utilization::numberOfNodesField)
      .decoded(a.evictable_namespaces, evictableNamespaces);
  fillBasics(a.thresholds, utilization::kMaxPercent);
  return r.finish(std::move(a));
}

}  // namespace koord::roles::descheduler::nodeutilization
