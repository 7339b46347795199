#include "plugins/defaultprebind/register.h"

#include "framework/plugin_factory.h"
#include "plugins/defaultprebind/default_prebind.h"

namespace koord::roles::scheduler::defaultprebind {

void registerDefaultPreBind(PluginRegistry& registry) {
  registry.add(std::string(kPluginName), makePluginFactory<DefaultPreBind>(kPluginName));
}

}  // namespace koord::roles::scheduler::defaultprebind
