#include "plugins/upstream/queuesort/register.h"

#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/queuesort/priority_sort.h"

namespace koord::roles::scheduler::upstream {

void registerPrioritySort(PluginRegistry& registry) {
  registry.add(std::string(kPrioritySortName), makePluginFactory<PrioritySort>(kPrioritySortName));
}

}  // namespace koord::roles::scheduler::upstream
