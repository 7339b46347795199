#include "default_plugins.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

namespace koord::roles::scheduler::config {
namespace {

using EP = ExtensionPoint;

// {name, weight}: weight 0 where upstream gives none.
using Entries = std::initializer_list<std::pair<std::string_view, std::int32_t>>;

void set(Plugins& p, EP point, Entries entries) {
  for (const auto& [name, weight] : entries)
    p[point].enabled.push_back(PluginRef{std::string(name), weight, {}});
}

Plugins v1beta1Defaults() {
  Plugins p;
  set(p, EP::kQueueSort, {{"PrioritySort", 0}});
  set(p, EP::kPreFilter,
      {{"NodeResourcesFit", 0},
       {"NodePorts", 0},
       {"PodTopologySpread", 0},
       {"InterPodAffinity", 0},
       {"VolumeBinding", 0}});
  set(p, EP::kFilter,
      {{"NodeUnschedulable", 0},
       {"NodeName", 0},
       {"TaintToleration", 0},
       {"NodeAffinity", 0},
       {"NodePorts", 0},
       {"NodeResourcesFit", 0},
       {"VolumeRestrictions", 0},
       {"EBSLimits", 0},
       {"GCEPDLimits", 0},
       {"NodeVolumeLimits", 0},
       {"AzureDiskLimits", 0},
       {"VolumeBinding", 0},
       {"VolumeZone", 0},
       {"PodTopologySpread", 0},
       {"InterPodAffinity", 0}});
  set(p, EP::kPostFilter, {{"DefaultPreemption", 0}});
  set(p, EP::kPreScore,
      {{"InterPodAffinity", 0}, {"PodTopologySpread", 0}, {"TaintToleration", 0}});
  set(p, EP::kScore,
      {{"NodeResourcesBalancedAllocation", 1},
       {"ImageLocality", 1},
       {"InterPodAffinity", 1},
       {"NodeResourcesLeastAllocated", 1},
       {"NodeAffinity", 1},
       {"NodePreferAvoidPods", 10000},
       {"PodTopologySpread", 2},
       {"TaintToleration", 1}});
  set(p, EP::kReserve, {{"VolumeBinding", 0}});
  set(p, EP::kPreBind, {{"VolumeBinding", 0}});
  set(p, EP::kBind, {{"DefaultBinder", 0}});
  return p;
}

Plugins v1beta2Defaults() {
  Plugins p;
  set(p, EP::kQueueSort, {{"PrioritySort", 0}});
  set(p, EP::kPreFilter,
      {{"NodeResourcesFit", 0},
       {"NodePorts", 0},
       {"VolumeRestrictions", 0},
       {"PodTopologySpread", 0},
       {"InterPodAffinity", 0},
       {"VolumeBinding", 0},
       {"NodeAffinity", 0}});
  set(p, EP::kFilter,
      {{"NodeUnschedulable", 0},
       {"NodeName", 0},
       {"TaintToleration", 0},
       {"NodeAffinity", 0},
       {"NodePorts", 0},
       {"NodeResourcesFit", 0},
       {"VolumeRestrictions", 0},
       {"EBSLimits", 0},
       {"GCEPDLimits", 0},
       {"NodeVolumeLimits", 0},
       {"AzureDiskLimits", 0},
       {"VolumeBinding", 0},
       {"VolumeZone", 0},
       {"PodTopologySpread", 0},
       {"InterPodAffinity", 0}});
  set(p, EP::kPostFilter, {{"DefaultPreemption", 0}});
  set(p, EP::kPreScore,
      {{"InterPodAffinity", 0},
       {"PodTopologySpread", 0},
       {"TaintToleration", 0},
       {"NodeAffinity", 0}});
  set(p, EP::kScore,
      {{"NodeResourcesBalancedAllocation", 1},
       {"ImageLocality", 1},
       {"InterPodAffinity", 1},
       {"NodeResourcesFit", 1},
       {"NodeAffinity", 1},
       {"PodTopologySpread", 2},
       {"TaintToleration", 1}});
  set(p, EP::kReserve, {{"VolumeBinding", 0}});
  set(p, EP::kPreBind, {{"VolumeBinding", 0}});
  set(p, EP::kBind, {{"DefaultBinder", 0}});
  return p;
}

// The MultiPoint list v1beta3 and v1 share, in upstream's order.
constexpr std::pair<std::string_view, std::int32_t> kMultiPointCore[] = {
    {"PrioritySort", 0},     {"NodeUnschedulable", 0},  {"NodeName", 0},
    {"TaintToleration", 3},  {"NodeAffinity", 2},       {"NodePorts", 0},
    {"NodeResourcesFit", 1}, {"VolumeRestrictions", 0}, {"EBSLimits", 0},
    {"GCEPDLimits", 0},      {"NodeVolumeLimits", 0},   {"AzureDiskLimits", 0},
    {"VolumeBinding", 0},    {"VolumeZone", 0},         {"PodTopologySpread", 2},
    {"InterPodAffinity", 2}, {"DefaultPreemption", 0},  {"NodeResourcesBalancedAllocation", 1},
    {"ImageLocality", 1},    {"DefaultBinder", 0},
};

void addMultiPoint(Plugins& p, std::string_view name, std::int32_t weight) {
  p[EP::kMultiPoint].enabled.push_back(PluginRef{std::string(name), weight, {}});
}

Plugins v1beta3Defaults() {
  Plugins p;
  for (const auto& [name, weight] : kMultiPointCore)
    addMultiPoint(p, name, weight);
  addMultiPoint(p, "SchedulingGates", 0);
  return p;
}

Plugins v1Defaults() {
  Plugins p;
  addMultiPoint(p, "SchedulingGates", 0);
  for (const auto& [name, weight] : kMultiPointCore) {
    // DynamicResourceAllocation is on: a claim is deallocated before any pod is preempted.
    if (name == "DefaultPreemption")
      addMultiPoint(p, "DynamicResources", 0);
    addMultiPoint(p, name, weight);
  }
  return p;
}

constexpr std::string_view kUpstreamNames[] = {
    "AzureDiskLimits",
    "CinderLimits",
    "DefaultBinder",
    "DefaultPodTopologySpread",
    "DefaultPreemption",
    "DynamicResources",
    "EBSLimits",
    "GCEPDLimits",
    "ImageLocality",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeLabel",
    "NodeName",
    "NodePorts",
    "NodePreferAvoidPods",
    "NodeResourceLimits",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "NodeResourcesLeastAllocated",
    "NodeResourcesMostAllocated",
    "NodeUnschedulable",
    "NodeVolumeLimits",
    "PodTopologySpread",
    "PrioritySort",
    "RequestedToCapacityRatio",
    "SchedulingGates",
    "SelectorSpread",
    "ServiceAffinity",
    "TaintToleration",
    "VolumeBinding",
    "VolumeRestrictions",
    "VolumeZone",
};

}  // namespace

Plugins defaultPlugins(ApiVersion version) {
  switch (version) {
    case ApiVersion::kV1beta1:
      return v1beta1Defaults();
    case ApiVersion::kV1beta2:
      return v1beta2Defaults();
    case ApiVersion::kV1beta3:
      return v1beta3Defaults();
    case ApiVersion::kV1:
      return v1Defaults();
  }
  return {};
}

bool isUpstreamPluginName(std::string_view name) {
  return std::find(std::begin(kUpstreamNames), std::end(kUpstreamNames), name) !=
         std::end(kUpstreamNames);
}

}  // namespace koord::roles::scheduler::config
