#include "plugins/upstream/defaultpreemption/register.h"

#include <memory>
#include <random>
#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/defaultpreemption/default_preemption.h"

namespace koord::roles::scheduler::upstream {

void registerDefaultPreemption(PluginRegistry& registry) {
  registry.add(std::string(kDefaultPreemptionName),
               makePluginFactory<DefaultPreemptionArgs>(
                   decodeDefaultPreemptionArgs,
                   [](std::shared_ptr<const DefaultPreemptionArgs> args, FrameworkHandle& handle) {
                     return std::make_shared<DefaultPreemption>(std::move(args), handle,
                                                                std::random_device{}());
                   },
                   "DefaultPreemption: args are not DefaultPreemptionArgs"));
}

}  // namespace koord::roles::scheduler::upstream
