// The ElasticQuota plugin's entry in the plugin registry: Koordinator's name, ElasticQuotaArgs
// and the ElasticQuota informer it reads. The in-tree registry table calls it.
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::elasticquota {

void registerElasticQuota(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::elasticquota
