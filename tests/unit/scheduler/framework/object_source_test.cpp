// Plugin-declared objects as plugins reach them: ClusterView::source<T> by key (typed, null for
// an undeclared key or another type), and the registry's declarations, one per key.
#include "framework/object_source.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "framework/framework_handle.h"
#include "framework/plugin_registry.h"
#include "scheduler/fake_cluster.h"

namespace koord::roles::scheduler {
namespace {

struct Quota {
  std::string name;
  int max = 0;
};

TEST_CASE("ClusterView::source finds a declared kind by key and type", "[scheduler][framework]") {
  const ClusterView bare{};
  CHECK(bare.source<Quota>("quotas") == nullptr);  // a scheduler without declared kinds

  testkit::FakeCluster cluster;
  cluster.declare<Quota>("scheduling.sigs.k8s.io/v1alpha1/elasticquotas");
  const ObjectSource<Quota>* quotas =
      cluster.source<Quota>("scheduling.sigs.k8s.io/v1alpha1/elasticquotas");
  REQUIRE(quotas != nullptr);
  CHECK(quotas->get("team-a") == nullptr);

  // Found once; later changes show through the same source.
  cluster.setObject("scheduling.sigs.k8s.io/v1alpha1/elasticquotas", "team-a",
                    std::make_shared<const Quota>(Quota{"team-a", 4}));
  REQUIRE(quotas->get("team-a") != nullptr);
  CHECK(quotas->get("team-a")->max == 4);
  cluster.removeObject<Quota>("scheduling.sigs.k8s.io/v1alpha1/elasticquotas", "team-a");
  CHECK(quotas->get("team-a") == nullptr);

  CHECK(cluster.source<Quota>("undeclared") == nullptr);
  CHECK(cluster.source<int>("scheduling.sigs.k8s.io/v1alpha1/elasticquotas") == nullptr);
}

TEST_CASE("PluginRegistry::objects lists each declared key once", "[scheduler][framework]") {
  auto declaring = [](std::string key) {
    PluginFactory f;
    f.objects.push_back(ObjectDeclaration{std::move(key), nullptr});
    return f;
  };
  PluginRegistry r;
  r.add("ElasticQuota", declaring("quotas"));
  r.add("Coscheduling", declaring("podgroups"));
  r.add("QuotaReader", declaring("quotas"));
  r.add("NodeName", PluginFactory{});
  std::vector<std::string> keys;
  for (const ObjectDeclaration* d : r.objects())
    keys.push_back(d->key);
  CHECK(keys == std::vector<std::string>{"podgroups", "quotas"});
}

}  // namespace
}  // namespace koord::roles::scheduler
