#include "plugins/deviceshare/args.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::deviceshare {

namespace json = boost::json;
namespace jf = kube::jsonfields;

config::KoordScoringStrategy defaultDeviceScoring() {
  return {config::KoordScoringType::kLeastAllocated,
          {{"koordinator.sh/gpu-memory-ratio", 1},
           {"koordinator.sh/rdma", 1},
           {"koordinator.sh/fpga", 1}}};
}

GpuSharedResourceTemplatesConfig defaultGpuSharedResourceTemplatesConfig() {
  return {"koordinator-system", "gpu-shared-resource-templates", {"huawei.com/npu-core"}};
}

namespace {

kube::Expected<std::vector<GpuShareUnsupportedModel>> decodeUnsupportedModels(
    const json::object& a) {
  std::vector<GpuShareUnsupportedModel> out;
  auto models = jf::objectList(a, "gpuShareUnsupportedModels", "");
  if (!models)
    return models.error();
  if (models->size() > kMaxDeviceShareArgsItems)
    return kube::makeKubeError(
        fmt::format("gpuShareUnsupportedModels: more than {} entries", kMaxDeviceShareArgsItems));
  for (std::size_t i = 0; i < models->size(); ++i) {
    const std::string path = jf::indexPath("gpuShareUnsupportedModels", i);
    const json::object& m = *(*models)[i];
    if (auto known = upstream::checkKnownFields(m, {"vendor", "model"}, path); !known)
      return known.error();
    auto vendor = jf::stringField(m, "vendor", path);
    if (!vendor)
      return vendor.error();
    auto model = jf::stringField(m, "model", path);
    if (!model)
      return model.error();
    out.push_back({std::move(*vendor), std::move(*model)});
  }
  return out;
}

kube::Expected<std::optional<GpuSharedResourceTemplatesConfig>> decodeTemplatesConfig(
    const json::object& a) {
  constexpr std::string_view path = "gpuSharedResourceTemplatesConfig";
  auto templates = jf::objectField(a, path, "");
  if (!templates)
    return templates.error();
  if (*templates == nullptr)
    return std::optional<GpuSharedResourceTemplatesConfig>();
  const json::object& t = **templates;
  if (auto known = upstream::checkKnownFields(
          t, {"configMapNamespace", "configMapName", "matchedResources"}, path);
      !known)
    return known.error();
  GpuSharedResourceTemplatesConfig config;
  auto ns = jf::stringField(t, "configMapNamespace", path);
  if (!ns)
    return ns.error();
  config.config_map_namespace = std::move(*ns);
  auto name = jf::stringField(t, "configMapName", path);
  if (!name)
    return name.error();
  config.config_map_name = std::move(*name);
  auto matched = jf::stringList(t, "matchedResources", path);
  if (!matched)
    return matched.error();
  if (matched->size() > kMaxDeviceShareArgsItems)
    return kube::makeKubeError(
        fmt::format("{}.matchedResources: more than {} entries", path, kMaxDeviceShareArgsItems));
  config.matched_resources = std::move(*matched);
  return std::optional<GpuSharedResourceTemplatesConfig>(std::move(config));
}

}  // namespace

kube::Expected<DeviceShareArgs> decodeDeviceShareArgs(const json::value* args,
                                                      std::string_view /*api_version*/) {
  DeviceShareArgs out;
  auto o = upstream::argsObject(args);
  if (!o)
    return o.error();
  if (*o == nullptr)
    return out;
  const json::object& a = **o;
  if (auto known = upstream::checkKnownFields(
          a,
          {"apiVersion", "kind", "allocator", "scoringStrategy",
           "disableDeviceNUMATopologyAlignment", "gpuShareUnsupportedModels",
           "gpuSharedResourceTemplatesConfig"},
          "");
      !known)
    return known.error();
  auto allocator = jf::stringField(a, "allocator", "");
  if (!allocator)
    return allocator.error();
  out.allocator = std::move(*allocator);
  auto scoring = config::decodeKoordScoringStrategy(a, "scoringStrategy", out.scoring_strategy);
  if (!scoring)
    return scoring.error();
  out.scoring_strategy = std::move(*scoring);
  auto disable = jf::boolField(a, "disableDeviceNUMATopologyAlignment", "");
  if (!disable)
    return disable.error();
  out.disable_device_numa_topology_alignment = *disable;
  auto models = decodeUnsupportedModels(a);
  if (!models)
    return models.error();
  out.gpu_share_unsupported_models = std::move(*models);
  auto templates = decodeTemplatesConfig(a);
  if (!templates)
    return templates.error();
  out.gpu_shared_resource_templates = std::move(*templates);
  return out;
}

}  // namespace koord::roles::scheduler::deviceshare
