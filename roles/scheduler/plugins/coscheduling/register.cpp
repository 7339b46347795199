#include "plugins/coscheduling/register.h"

#include <fmt/format.h>

#include "framework/declared_informer.h"
#include "framework/plugin_factory.h"
#include "koord/apis/pod_group.h"
#include "plugins/coscheduling/args.h"
#include "plugins/coscheduling/coscheduling.h"

namespace koord::roles::scheduler::coscheduling {

void registerCoscheduling(PluginRegistry& registry) {
  PluginFactory factory = makePluginFactory<Coscheduling, CoschedulingArgs>(
      decodeCoschedulingArgs, fmt::format("{}: want args of type {}", kPluginName, kArgsKind));
  // Found by discovery: without the PodGroup CRD, gangs come from pod annotations only.
  factory.objects.push_back(declareInformer<apis::PodGroup>({
      .key = std::string(kPodGroupSource),
      .resource = {std::string(apis::kSchedulingSigsGroup),
                   std::string(apis::kSchedulingSigsVersion), std::string(apis::kPodGroupResource),
                   "", "", ""},
      .project = apis::decodePodGroup,
      .versions = {std::string(apis::kSchedulingSigsVersion)},
  }));
  registry.add(std::string(kPluginName), std::move(factory));
}

}  // namespace koord::roles::scheduler::coscheduling
