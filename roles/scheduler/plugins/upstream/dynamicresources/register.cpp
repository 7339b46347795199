#include "plugins/upstream/dynamicresources/register.h"

#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/dynamicresources/dynamic_resources.h"

namespace koord::roles::scheduler::upstream {

void registerDynamicResources(PluginRegistry& registry) {
  registry.add(std::string(kDynamicResourcesName),
               makePluginFactory<DynamicResources>(kDynamicResourcesName));
}

}  // namespace koord::roles::scheduler::upstream
