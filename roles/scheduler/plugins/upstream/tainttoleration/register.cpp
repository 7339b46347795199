#include "plugins/upstream/tainttoleration/register.h"

#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/tainttoleration/taint_toleration.h"

namespace koord::roles::scheduler::upstream {

void registerTaintToleration(PluginRegistry& registry) {
  registry.add(std::string(kTaintTolerationName),
               makePluginFactory<TaintToleration>(kTaintTolerationName));
}

}  // namespace koord::roles::scheduler::upstream
