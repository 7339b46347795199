#include "plugins/upstream/schedulinggates/register.h"

#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/schedulinggates/scheduling_gates.h"

namespace koord::roles::scheduler::upstream {

void registerSchedulingGates(PluginRegistry& registry) {
  registry.add(std::string(kSchedulingGatesName),
               makePluginFactory<SchedulingGates>(kSchedulingGatesName));
}

}  // namespace koord::roles::scheduler::upstream
