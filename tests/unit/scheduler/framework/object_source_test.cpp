// Plugin-declared objects as plugins reach them: ClusterView::source<T> by key (typed, null for
// an undeclared key or another type), and the registry's declarations, one per key.
#include "framework/object_source.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include <boost/json.hpp>

#include "framework/declared_informer.h"
#include "framework/framework_handle.h"
#include "framework/plugin_registry.h"
#include "koord/apis/node_metric.h"
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
    ObjectDeclaration d;
    d.key = std::move(key);
    f.objects.push_back(std::move(d));
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

namespace koord::roles::scheduler {
namespace {

struct RecordingSink final : NodeObjectSink {
  std::map<std::string, std::function<void(NodeInfo&)>> attached;
  void onNodeObject(const std::string&, const std::string& node,
                    std::function<void(NodeInfo&)> attach, bool) override {
    attached[node] = std::move(attach);
  }
  void onNodeObjectDelete(const std::string&, const std::string&,
                          std::function<void(NodeInfo&)>) override {}
};

kube::Expected<apis::NodeMetric> projectMetric(const boost::json::value& v) {
  return apis::decodeNodeMetric(v);
}

TEST_CASE("a declared kind over a recorded list: decoded once, handed out at start",
          "[scheduler][framework]") {
  ObjectDeclaration d = declareInformer<apis::NodeMetric>(
      {.key = "slo.koordinator.sh/v1alpha1/nodemetrics",
       .resource = {"slo.koordinator.sh", "v1alpha1", "nodemetrics", "", "", ""},
       .project = projectMetric,
       .node_slot = &NodeInfo::node_metric});
  CHECK(d.group == "slo.koordinator.sh");
  CHECK(d.resource == "nodemetrics");
  const auto items = boost::json::parse(R"([
    {"metadata": {"name": "n1"}, "status": {"updateTime": "2026-01-01T00:00:00Z"}},
    {"metadata": {"name": "n2"}, "status": {"podsMetric": "many"}},
    {"metadata": {}},
    7
  ])")
                         .as_array();
  std::vector<std::string> errors;
  auto fixed = d.make_fixed({items.begin(), items.end()}, errors);
  REQUIRE(errors.size() == 3);
  CHECK_THAT(errors[0], Catch::Contains("n2") && Catch::Contains("status.podsMetric"));
  CHECK_THAT(errors[1], Catch::Contains("no metadata.name"));
  CHECK_THAT(errors[2], Catch::Contains("not an object"));

  const auto& source = static_cast<const ObjectSource<apis::NodeMetric>&>(fixed->source());
  REQUIRE(source.get("n1") != nullptr);
  CHECK(source.get("n2") == nullptr);
  CHECK(source.list().size() == 1);
  int added = 0;
  ObjectHandlers<apis::NodeMetric> handlers;
  handlers.on_add = [&](const std::shared_ptr<const apis::NodeMetric>&) { ++added; };
  source.subscribe(std::move(handlers));
  RecordingSink sink;
  fixed->connect(sink);
  CHECK(fixed->waitForSync(std::chrono::milliseconds(0)));
  fixed->start();
  CHECK(added == 1);
  REQUIRE(sink.attached.count("n1") == 1);
  NodeInfo info;
  sink.attached["n1"](info);
  CHECK(info.node_metric == source.get("n1"));
}

TEST_CASE("a recorded namespaced kind narrowed to one namespace", "[scheduler][framework]") {
  struct Named {
    std::string name;
  };
  ObjectDeclaration d =
      declareInformer<Named>({.key = "v1/configmaps",
                              .resource = {"", "v1", "configmaps", "", "", ""},
                              .project = [](const boost::json::value& v) -> kube::Expected<Named> {
                                return Named{std::string(v.at("metadata").at("name").as_string())};
                              },
                              .namespace_from_plugins = true});
  const auto items = boost::json::parse(R"([
    {"metadata": {"name": "a", "namespace": "koordinator-system"}},
    {"metadata": {"name": "b", "namespace": "kube-system"}}
  ])")
                         .as_array();
  std::vector<std::string> errors;
  auto fixed = d.make_fixed({items.begin(), items.end()}, errors);
  CHECK(errors.empty());
  const auto& source = static_cast<const ObjectSource<Named>&>(fixed->source());
  CHECK(source.list().size() == 2);
  CHECK(source.narrowToNamespace("koordinator-system"));
  CHECK_FALSE(source.narrowToNamespace("kube-system"));
  CHECK(source.list().size() == 1);
  CHECK(source.get("koordinator-system/a") != nullptr);
  CHECK(source.get("kube-system/b") == nullptr);
}

}  // namespace
}  // namespace koord::roles::scheduler
