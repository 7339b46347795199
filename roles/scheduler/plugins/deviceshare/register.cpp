#include "plugins/deviceshare/register.h"

#include <fmt/format.h>

#include "framework/declared_informer.h"
#include "framework/plugin_factory.h"
#include "koord/apis/device.h"
#include "plugins/deviceshare/args.h"
#include "plugins/deviceshare/device.h"
#include "plugins/deviceshare/device_share_plugin.h"
#include "plugins/deviceshare/gpu_shared_resource_templates.h"

namespace koord::roles::scheduler::deviceshare {

void registerDeviceShare(PluginRegistry& registry) {
  PluginFactory factory = makePluginFactory<DeviceSharePlugin, DeviceShareArgs>(
      decodeDeviceShareArgs, fmt::format("{}: want args of type {}", kPluginName, kArgsKind));
  // Found by discovery: without the Device CRD no node has devices, and DeviceShare lets every
  // pod through.
  factory.objects.push_back(declareInformer<apis::Device>({
      .key = std::string(kDeviceSource),
      .resource = {std::string(apis::kDeviceGroup), std::string(apis::kDeviceVersion),
                   std::string(apis::kDeviceResource), "", "", ""},
      .project = apis::decodeDevice,
      .versions = {std::string(apis::kDeviceVersion)},
  }));
  factory.objects.push_back(declareInformer<TemplatesConfigMap>({
      .key = std::string(kTemplatesConfigMapSource),
      .resource = {"", "v1", "configmaps", "", "", ""},
      .project = decodeTemplatesConfigMap,
      .namespace_from_plugins = true,
  }));
  registry.add(std::string(kPluginName), std::move(factory));
}

}  // namespace koord::roles::scheduler::deviceshare
