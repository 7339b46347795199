#include "plugins/upstream/helper/spread_informers.h"

#include <string>

#include "framework/declared_informer.h"
#include "framework/plugin_registry.h"
#include "plugins/upstream/helper/spread_selectors.h"

namespace koord::roles::scheduler::upstream::helper {

namespace {

ObjectDeclaration declare(std::string_view key, std::string group, std::string resource,
                          kube::Projection<SpreadingSelector> project) {
  return declareInformer<SpreadingSelector>({
      .key = std::string(key),
      .resource = {std::move(group), "v1", std::move(resource), "", "", ""},
      .project = std::move(project),
  });
}

}  // namespace

void declareSpreadSelectorInformers(PluginFactory& factory) {
  // Built-in kinds every supported API server serves at v1: no discovery.
  factory.objects.push_back(declare(kServiceSource, "", "services", decodeServiceSelector));
  factory.objects.push_back(declare(kReplicationControllerSource, "", "replicationcontrollers",
                                    decodeReplicationControllerSelector));
  factory.objects.push_back(
      declare(kReplicaSetSource, "apps", "replicasets", decodeReplicaSetSelector));
  factory.objects.push_back(
      declare(kStatefulSetSource, "apps", "statefulsets", decodeStatefulSetSelector));
}

}  // namespace koord::roles::scheduler::upstream::helper
