#include "plugins/elasticquota/register.h"

#include <fmt/format.h>

#include "framework/declared_informer.h"
#include "framework/plugin_factory.h"
#include "koord/apis/elastic_quota.h"
#include "koord/apis/pod_group.h"
#include "plugins/elasticquota/args.h"
#include "plugins/elasticquota/elastic_quota_plugin.h"

namespace koord::roles::scheduler::elasticquota {

void registerElasticQuota(PluginRegistry& registry) {
  PluginFactory factory = makePluginFactory<ElasticQuotaPlugin, ElasticQuotaArgs>(
      decodeElasticQuotaArgs, fmt::format("{}: want args of type {}", kPluginName, kArgsKind));
  // Found by discovery: without the ElasticQuota CRD every pod is in the default quota.
  factory.objects.push_back(declareInformer<apis::ElasticQuota>({
      .key = std::string(kElasticQuotaSource),
      .resource = {std::string(apis::kSchedulingSigsGroup),
                   std::string(apis::kSchedulingSigsVersion),
                   std::string(apis::kElasticQuotaResource), "", "", ""},
      .project = apis::decodeElasticQuota,
      .versions = {std::string(apis::kSchedulingSigsVersion)},
  }));
  registry.add(std::string(kPluginName), std::move(factory));
}

}  // namespace koord::roles::scheduler::elasticquota
