#include "plugins/upstream/defaultbinder/register.h"

#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/defaultbinder/default_binder.h"

namespace koord::roles::scheduler::upstream {

void registerDefaultBinder(PluginRegistry& registry) {
  registry.add(std::string(kDefaultBinderName),
               makePluginFactory<DefaultBinder>(kDefaultBinderName));
}

}  // namespace koord::roles::scheduler::upstream
