// The scheduling loop with Koordinator's ElasticQuota plugin as the chart enables it: a quota's
// pods are placed while its used stays within its runtime quota, the next one waits with the
// quota's reason, preemption stays inside the quota, and an over-used quota gives pods back.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/apis/elastic_quota.h"
#include "koord/core/metrics.h"
#include "koord/kube/rest_client.h"
#include "loop_objects.h"
#include "plugins/elasticquota/elastic_quota_plugin.h"
#include "scheduler.h"
#include "scheduler/map_object_source.h"

namespace koord::roles::scheduler {
namespace {

using namespace std::chrono_literals;
using testkit::MapObjectSource;

class QuotaApi final : public SchedulerApi {
 public:
  const AnyObjectSource* objectSource(std::string_view key) const override {
    return key == elasticquota::kElasticQuotaSource ? &quotas : nullptr;
  }
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override {
    bindings[pod->key()] = node;
    done({});
  }
  kube::Expected<void> deletePod(const PodInfo& pod) const override {
    deleted.push_back(pod.key());
    return {};
  }
  kube::Expected<void> evictPod(const PodInfo& pod) const override {
    evicted.push_back(pod.key());
    return {};
  }
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override {
    auto it = pods.find(key);
    return it == pods.end() ? nullptr : it->second;
  }
  void reportScheduled(const PodInfo&, const std::string&, const std::string&) override {}
  void reportFailure(const PodInfo& pod, const std::string&, std::string_view,
                     const std::string& message, const std::string&) override {
    failures[pod.key()] = message;
  }
  void mergePatch(const kube::ResourceRef& ref, boost::json::value patch,
                  ApiCallback done) const override {
    patches.emplace_back(ref.name, boost::json::serialize(patch));
    done({});
  }

  MapObjectSource<apis::ElasticQuota> quotas;
  std::map<std::string, std::shared_ptr<const PodInfo>> pods;
  mutable std::map<std::string, std::string> bindings;
  mutable std::vector<std::string> deleted;
  mutable std::vector<std::string> evicted;
  mutable std::vector<std::pair<std::string, std::string>> patches;
  std::map<std::string, std::string> failures;
};

config::SchedulerConfig quotaConfig(bool monitor) {
  std::string text =
      "apiVersion: kubescheduler.config.k8s.io/v1beta2\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: koord-scheduler\n"
      "  plugins:\n"
      "    preFilter: {enabled: [{name: ElasticQuota}]}\n"
      "    postFilter: {disabled: [{name: '*'}], enabled: [{name: ElasticQuota}]}\n"
      "    reserve: {enabled: [{name: ElasticQuota}]}\n";
  if (monitor)
    text +=
        "  pluginConfig:\n"
        "  - name: ElasticQuota\n"
        "    args: {monitorAllQuotas: true, delayEvictTime: 0s}\n";
  auto cfg = config::parseSchedulerConfigText(text, inTreeRegistry());
  REQUIRE(cfg.has_value());
  return std::move(*cfg);
}

std::shared_ptr<apis::ElasticQuota> quota(const std::string& name, const std::string& min,
                                          const std::string& max, const std::string& parent = "") {
  auto q = std::make_shared<apis::ElasticQuota>();
  q->namespace_ = name;
  q->name = name;
  q->min["cpu"] = *kube::Quantity::parse(min);
  q->max["cpu"] = *kube::Quantity::parse(max);
  q->shared_weight = q->max;
  q->parent_name = parent.empty() ? std::string(apis::kRootQuotaName) : parent;
  return q;
}

struct Fixture {
  QuotaApi api;
  metrics::Registry registry;
  Scheduler scheduler;

  explicit Fixture(bool monitor = false)
      : scheduler(quotaConfig(monitor), inTreeRegistry(), api, registry) {
    scheduler.onNodeAdd(testing::loopNode("n1", 8000));
  }
  std::shared_ptr<PodInfo> pod(const std::string& ns, const std::string& name,
                               std::int64_t milli_cpu, std::int32_t priority = 0) {
    auto p = testing::loopPod(name, milli_cpu);
    p->namespace_ = ns;
    p->uid = "uid-" + ns + "-" + name;
    p->priority = priority;
    return p;
  }
  void add(std::shared_ptr<const PodInfo> p) {
    api.pods[p->key()] = p;
    scheduler.onPodAdd(*p);
    if (p->assigned())
      scheduler.onAssignedPodAdd(p);
    else
      scheduler.onPendingPodAdd(p);
  }
  void drainActive() {
    while (scheduler.queue().sizes().active > 0)
      scheduler.scheduleOne();
  }
  elasticquota::ElasticQuotaPlugin& plugin() {
    auto* p = dynamic_cast<elasticquota::ElasticQuotaPlugin*>(scheduler.findPlugin("ElasticQuota"));
    REQUIRE(p != nullptr);
    return *p;
  }
};

TEST_CASE("quota loop: a namespace quota of 2 CPU admits two 1-CPU pods, not a third",
          "[scheduler][loop][elasticquota]") {
  Fixture f;
  f.api.quotas.set("team-a/team-a", quota("team-a", "2", "2"));
  for (const char* name : {"p1", "p2", "p3"})
    f.add(f.pod("team-a", name, 1000));
  f.drainActive();
  CHECK(f.api.bindings.size() == 2);
  REQUIRE(f.api.failures.size() == 1);
  const std::string& why = f.api.failures.begin()->second;
  CHECK(why.find("Insufficient quotas") != std::string::npos);
  CHECK(why.find("team-a") != std::string::npos);
  CHECK(why.find("cpu") != std::string::npos);
  auto s = f.plugin().quotas().summary("team-a");
  REQUIRE(s.has_value());
  CHECK(s->used.at("cpu") == 2000);

  // The status pass writes status.used and the runtime annotation.
  f.plugin().syncStatusOnce();
  bool wrote = false;
  for (const auto& [name, patch] : f.api.patches) {
    if (name == "team-a") {
      wrote = true;
      CHECK(patch.find("\"used\":{\"cpu\":\"2\"") != std::string::npos);
      CHECK(patch.find(apis::kAnnotationRuntime) != std::string::npos);
    }
  }
  CHECK(wrote);
}

TEST_CASE("quota loop: a pod outside any quota is not held back",
          "[scheduler][loop][elasticquota]") {
  Fixture f;
  f.api.quotas.set("team-a/team-a", quota("team-a", "1", "1"));
  f.add(f.pod("elsewhere", "free", 4000));
  f.drainActive();
  CHECK(f.api.bindings.size() == 1);
}

TEST_CASE("quota loop: a higher-priority pod preempts only inside its own quota",
          "[scheduler][loop][elasticquota]") {
  Fixture f;
  f.api.quotas.set("team-a/team-a", quota("team-a", "2", "2"));
  f.api.quotas.set("team-b/team-b", quota("team-b", "4", "4"));
  auto low_a = f.pod("team-a", "low", 2000, 1);
  low_a->node_name = "n1";
  f.add(low_a);
  auto low_b = f.pod("team-b", "low", 2000, 1);
  low_b->node_name = "n1";
  f.add(low_b);
  // team-a is full: its high-priority pod may take team-a's low one, never team-b's.
  f.add(f.pod("team-a", "high", 2000, 100));
  f.drainActive();
  CHECK(f.api.deleted == std::vector<std::string>{"team-a/low"});
}

TEST_CASE("quota loop: a child borrowing its sibling's idle min gives it back",
          "[scheduler][loop][elasticquota]") {
  Fixture f(/*monitor=*/true);
  // Two children of 4 CPU min each under an 8 CPU parent, each able to borrow up to 8.
  auto parent = quota("parent", "8", "8");
  parent->is_parent = true;
  f.api.quotas.set("parent/parent", parent);
  f.api.quotas.set("a/a", quota("a", "4", "8", "parent"));
  f.api.quotas.set("b/b", quota("b", "4", "8", "parent"));
  // a uses all 8 while b is idle.
  for (int i = 0; i < 4; ++i)
    f.add(f.pod("a", "a" + std::to_string(i), 2000));
  f.drainActive();
  REQUIRE(f.api.bindings.size() == 4);
  for (const auto& [key, node] : f.api.bindings) {
    auto bound = std::make_shared<PodInfo>(*f.api.pods[key]);
    bound->node_name = node;
    f.scheduler.onPodUpdate(*f.api.pods[key], *bound);
    f.api.pods[key] = bound;
  }
  CHECK(f.plugin().revokeOnce(std::chrono::system_clock::now()).empty());
  // b's pods arrive: b's runtime comes back to its min, a is over its runtime and gives back
  // the newest of what it borrowed.
  f.add(f.pod("b", "b0", 2000));
  f.add(f.pod("b", "b1", 2000));
  f.plugin().revokeOnce(std::chrono::system_clock::now());
  auto revoked = f.plugin().revokeOnce(std::chrono::system_clock::now() + 1s);
  revoked.insert(revoked.end(), f.api.evicted.begin(), f.api.evicted.end());
  std::set<std::string> unique(revoked.begin(), revoked.end());
  CHECK(unique.size() == 2);
  // Evicted, as Koordinator's revoke does, so disruption budgets hold; never deleted.
  CHECK_FALSE(f.api.evicted.empty());
  CHECK(f.api.deleted.empty());
  for (const auto& key : unique)
    CHECK(key.rfind("a/", 0) == 0);

  // The evicted pods terminate slowly: still counted, they are not evicted again, and no other
  // pod of a is taken in their place.
  for (const auto& key : unique) {
    auto terminating = std::make_shared<PodInfo>(*f.api.pods[key]);
    terminating->terminating = true;
    f.scheduler.onPodUpdate(*f.api.pods[key], *terminating);
    f.api.pods[key] = terminating;
  }
  f.api.evicted.clear();
  f.plugin().revokeOnce(std::chrono::system_clock::now() + 2s);
  CHECK(f.plugin().revokeOnce(std::chrono::system_clock::now() + 3s).empty());
  CHECK(f.api.evicted.empty());
}

}  // namespace
}  // namespace koord::roles::scheduler
