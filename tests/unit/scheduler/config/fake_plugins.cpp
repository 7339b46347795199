#include "fake_plugins.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <memory>

#include "koord/kube/error.h"

namespace koord::roles::scheduler::configtest {
namespace {

namespace json = boost::json;
using config::ExtensionPoint;

kube::Expected<std::shared_ptr<const PluginArgs>> decodeStrictX(const json::value* args,
                                                                std::string_view api_version) {
  auto out = std::make_shared<FakeArgs>();
  out->api_version = std::string(api_version);
  if (args == nullptr)
    return std::shared_ptr<const PluginArgs>(out);
  out->raw = *args;
  if (!args->is_object())
    return kube::makeKubeError("expected an object");
  for (const auto& member : args->get_object()) {
    const std::string_view key(member.key().data(), member.key().size());
    if (key != "x")
      return kube::makeKubeError(fmt::format("unknown field {:?}", key));
    if (!member.value().is_int64())
      return kube::makeKubeError("x: expected an integer");
    out->x = member.value().get_int64();
  }
  return std::shared_ptr<const PluginArgs>(out);
}

kube::Expected<std::shared_ptr<const PluginArgs>> decodeAnyObject(const json::value* args,
                                                                  std::string_view api_version) {
  auto out = std::make_shared<FakeArgs>();
  out->api_version = std::string(api_version);
  if (args != nullptr) {
    if (!args->is_object())
      return kube::makeKubeError("expected an object");
    out->raw = *args;
  }
  return std::shared_ptr<const PluginArgs>(out);
}

}  // namespace

PluginRegistry fakeRegistry(const std::vector<std::string_view>& names, Decoder decoder) {
  PluginRegistry r;
  for (std::string_view name : names) {
    PluginFactory f;
    f.decode_args = decoder == Decoder::kStrictX ? decodeStrictX : decodeAnyObject;
    f.create = [](std::shared_ptr<const PluginArgs>,
                  FrameworkHandle&) -> kube::Expected<std::shared_ptr<Plugin>> {
      return kube::makeKubeError("fake plugins are not built");
    };
    r.add(std::string(name), std::move(f));
  }
  return r;
}

std::vector<std::string_view> koordUpstreamPlugins() {
  return {
      "AzureDiskLimits",
      "CinderLimits",
      "DefaultBinder",
      "DefaultPreemption",
      "DynamicResources",
      "EBSLimits",
      "GCEPDLimits",
      "ImageLocality",
      "InterPodAffinity",
      "NodeAffinity",
      "NodeName",
      "NodePorts",
      "NodePreferAvoidPods",
      "NodeResourcesBalancedAllocation",
      "NodeResourcesFit",
      "NodeResourcesLeastAllocated",
      "NodeUnschedulable",
      "NodeVolumeLimits",
      "PodTopologySpread",
      "PrioritySort",
      "SchedulingGates",
      "SelectorSpread",
      "TaintToleration",
      "VolumeBinding",
      "VolumeRestrictions",
      "VolumeZone",
  };
}

const PointTable& realPointTable() {
  using EP = ExtensionPoint;
  static const PointTable kTable = {
      {"PrioritySort", {EP::kQueueSort}},
      {"SchedulingGates", {EP::kPreEnqueue}},
      {"NodeUnschedulable", {EP::kFilter}},
      {"NodeName", {EP::kFilter}},
      {"TaintToleration", {EP::kFilter, EP::kPreScore, EP::kScore}},
      {"NodeAffinity", {EP::kPreFilter, EP::kFilter, EP::kPreScore, EP::kScore}},
      {"NodePorts", {EP::kPreFilter, EP::kFilter}},
      {"NodeResourcesFit", {EP::kPreFilter, EP::kFilter, EP::kPreScore, EP::kScore}},
      {"PodTopologySpread", {EP::kPreFilter, EP::kFilter, EP::kPreScore, EP::kScore}},
      {"InterPodAffinity", {EP::kPreFilter, EP::kFilter, EP::kPreScore, EP::kScore}},
      {"DefaultPreemption", {EP::kPostFilter}},
      {"NodeResourcesBalancedAllocation", {EP::kPreScore, EP::kScore}},
      {"NodeResourcesLeastAllocated", {EP::kScore}},
      {"DefaultBinder", {EP::kBind}},
      {"VolumeRestrictions", {EP::kPreFilter, EP::kFilter}},
      {"EBSLimits", {EP::kPreFilter, EP::kFilter}},
      {"GCEPDLimits", {EP::kPreFilter, EP::kFilter}},
      {"NodeVolumeLimits", {EP::kPreFilter, EP::kFilter}},
      {"AzureDiskLimits", {EP::kPreFilter, EP::kFilter}},
      {"VolumeBinding", {EP::kPreFilter, EP::kFilter, EP::kReserve, EP::kPreBind}},
      {"VolumeZone", {EP::kPreFilter, EP::kFilter}},
      {"ImageLocality", {EP::kScore}},
      {"NodePreferAvoidPods", {EP::kScore}},
      {"SelectorSpread", {EP::kPreScore, EP::kScore}},
      {"DynamicResources", {EP::kPreFilter}},
      // Koordinator's, as its scheduler-config enables them.
      {"Coscheduling",
       {EP::kPreEnqueue, EP::kPreFilter, EP::kPostFilter, EP::kPreScore, EP::kScore, EP::kReserve,
        EP::kPermit, EP::kPreBind, EP::kPostBind}},
      {"SchedulingHint", {EP::kPreFilter}},
      {"Reservation",
       {EP::kPreFilter, EP::kFilter, EP::kPostFilter, EP::kPreScore, EP::kScore, EP::kReserve,
        EP::kPreBind, EP::kBind}},
      {"NodeNUMAResource", {EP::kPreFilter, EP::kFilter, EP::kScore, EP::kReserve, EP::kPreBind}},
      {"DeviceShare", {EP::kPreFilter, EP::kFilter, EP::kScore, EP::kReserve, EP::kPreBind}},
      {"ElasticQuota", {EP::kPreFilter, EP::kPostFilter, EP::kReserve}},
      {"LoadAwareScheduling", {EP::kFilter, EP::kScore, EP::kReserve}},
      {"DefaultPreBind", {EP::kPreBind}},
  };
  return kTable;
}

bool implementsIn(const PointTable& table, std::string_view plugin, config::ExtensionPoint p) {
  const auto it = table.find(plugin);
  return it != table.end() && it->second.contains(p);
}

}  // namespace koord::roles::scheduler::configtest
