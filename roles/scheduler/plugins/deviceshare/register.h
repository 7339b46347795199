// The DeviceShare plugin's entry in the plugin registry: Koordinator's name, DeviceShareArgs and
// the Device informer it reads. The in-tree registry table calls it.
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::deviceshare {

void registerDeviceShare(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::deviceshare
