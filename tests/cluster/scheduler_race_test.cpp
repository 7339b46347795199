// koord-scheduler's loop (Scheduler, its informers and KubeSchedulerApi, wired as its main wires
// them) in this process against the real apiserver, where a test can hold one replica's view of
// the cluster still: two replicas binding the same pod, a binding that keeps failing, and
// concurrent creates on a node with room for half of them. A replica's informers reach the
// apiserver through a TcpRelay, so cutting it freezes what that replica sees while its bindings
// still go through; the apiserver's audit log shows each binding and its answer.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "audit_log.h"
#include "cache/scheduler_cache.h"
#include "cluster_api.h"
#include "cluster_env.h"
#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/core/metrics.h"
#include "kube_scheduler_api.h"
#include "manifests.h"
#include "scheduler.h"
#include "scheduler_informers.h"
#include "tcp_relay.h"

using namespace std::chrono_literals;
namespace json = boost::json;
namespace sched = koord::roles::scheduler;
using koord::kube::ResourceRef;
using koord::testing::auditEntries;
using koord::testing::AuditEntry;
using koord::testing::eventually;
using koord::testing::KubeApi;
using koord::testing::named;
using koord::testing::nodeOf;
using koord::testing::ok;
using koord::testing::str;
using koord::testing::TestNamespace;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;
using namespace koord::testing::resources;

namespace {

constexpr const char* kNodeLabel = "koord-e2e-race";

// An API-only node with 4 CPUs, labelled for one test.
json::object node(const std::string& name, const std::string& id) {
  json::object alloc{{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}};
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"metadata", {{"name", name}, {"labels", {{kNodeLabel, id}}}}},
                      {"status", {{"capacity", alloc}, {"allocatable", alloc}}}};
}

// A 1-CPU pod for this test's profile only (the scheduler name is the test's id, so no other
// scheduler takes it), kept to the test's node.
json::object pod(const std::string& name, const std::string& ns, const std::string& id) {
  json::object requests{{"cpu", "1"}, {"memory", "64Mi"}};
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"spec",
       {{"schedulerName", id},
        {"automountServiceAccountToken", false},
        {"nodeSelector", {{kNodeLabel, id}}},
        {"tolerations", json::array{json::object{{"operator", "Exists"}}}},
        {"containers", json::array{json::object{
                           {"name", "c"},
                           {"image", "registry.k8s.io/pause:3.2"},
                           {"resources", {{"requests", requests}, {"limits", requests}}}}}}}}};
}

// The node, and every pod left in the namespace (no kubelet confirms deletions on an API-only
// node, so they go with grace 0), removed however the test ends.
struct Cleanup {
  KubeApi& api;
  std::string node;
  std::string ns;
  ~Cleanup() {
    koord::testing::removeAllPodsNow(*api, ns);
    (void)api->removeSync(named(kNodes, node));
  }
};

// What each test starts from: the CRDs the replicas' NodeMetric informers need, a namespace whose
// default service account has its token, and one node for the test's own scheduler name, with
// the node and the namespace's pods removed at the end.
struct RaceSetup {
  RaceSetup(const std::string& ns_name, const std::string& id_prefix)
      : ns(*api, ns_name), id(uniqueName(id_prefix)), cleanup{api, id + "-n", ns.name()} {
    koord::testing::applyCrds(*api);
    ok(api->createSync(kNodes, node(cleanup.node, id)), "create node");
  }
  KubeApi api{tokenConfig()};
  koord::testing::PodNamespace ns;
  std::string id;
  Cleanup cleanup;
};

int portOf(const std::string& url) {
  return std::stoi(url.substr(url.rfind(':') + 1));
}

// One koord-scheduler replica with the profile `id`. Its informers go through `relay` when one
// is given; its bindings, status patches and Events go straight to the apiserver with the user
// agent `name`.
class Replica {
 public:
  Replica(const std::string& name, const std::string& id, koord::testing::TcpRelay* relay)
      : user_agent_(name),
        informer_api_(informerConfig(name, relay)),
        binder_api_(binderConfig(name)),
        informers_(*informer_api_, informer_api_.io),
        api_(*binder_api_, binder_api_.io, informers_, name),
        scheduler_(config(id), sched::inTreeRegistry(), api_, registry_) {
    api_.setQueue(&scheduler_.queue());
    informers_.connect(scheduler_);
    informers_.pods.addHandlers(
        {nullptr, nullptr,
         [this](const std::string&, const sched::PodInfo& p) { api_.forgetPod(p.uid); }});
    informers_.start();
    REQUIRE(informers_.waitForSync(60s));
  }
  ~Replica() {
    scheduler_.stop();
    // A binding's answer calls back into the scheduler: it must come before the scheduler goes.
    (void)eventually(
        30s, [&] { return scheduler_.bindingsInFlight() == 0; }, 50ms);
    informers_.stop();
  }
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  sched::Scheduler& scheduler() { return scheduler_; }
  bool pending(const std::string& key) {
    for (const auto& p : scheduler_.queue().pendingPods()) {
      if (p->key() == key)
        return true;
    }
    return false;
  }
  /// CPU this replica counts as taken on `node` (bound and assumed pods), in millicores.
  std::int64_t requestedMilliCpu(const std::string& node) {
    auto info = scheduler_.cache().nodeInfo(node);
    return info ? info->requested.milli_cpu : -1;
  }
  std::vector<std::string> podsOn(const std::string& node) {
    auto dump = scheduler_.cache().dump();
    auto it = dump.nodes.find(node);
    return it == dump.nodes.end() ? std::vector<std::string>{} : it->second.pods;
  }
  /// This replica's pods/binding requests for `pod` the apiserver answered, oldest first.
  std::vector<AuditEntry> bindings(const std::string& pod) const {
    std::vector<AuditEntry> out;
    for (auto& e : auditEntries(user_agent_)) {
      if (e.resource == "pods" && e.subresource == "binding" && e.name == pod)
        out.push_back(std::move(e));
    }
    return out;
  }
  /// Waits for the scheduling cycle of the pod at the head of the queue and for its binding.
  void scheduleOne() {
    REQUIRE(scheduler_.scheduleOne());
    REQUIRE(eventually(
        30s, [&] { return scheduler_.bindingsInFlight() == 0; }, 50ms));
  }

 private:
  static sched::config::SchedulerConfig config(const std::string& id) {
    auto c = sched::config::parseSchedulerConfigText(
        "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: " +
            id + "\n",
        sched::inTreeRegistry());
    if (!c)
      FAIL("scheduler configuration: " << c.error().message);
    return std::move(*c);
  }
  static koord::kube::RestConfig informerConfig(const std::string& name,
                                                koord::testing::TcpRelay* relay) {
    auto c = tokenConfig();
    c.user_agent = name + "-informers";
    if (relay != nullptr)
      c.host = "https://127.0.0.1:" + std::to_string(relay->port());
    return c;
  }
  static koord::kube::RestConfig binderConfig(const std::string& name) {
    auto c = tokenConfig();
    c.user_agent = name;
    return c;
  }

  std::string user_agent_;
  KubeApi informer_api_;
  KubeApi binder_api_;
  sched::SchedulerInformers informers_;
  sched::KubeSchedulerApi api_;
  koord::metrics::Registry registry_;
  sched::Scheduler scheduler_;
};

// Whether the scheduler has written the pod's PodScheduled=False condition (Unschedulable).
bool refused(KubeApi& api, const std::string& ns, const std::string& name) {
  auto p = api->getSync(named(kPods, name, ns));
  if (!p)
    return false;
  const auto* status = p->as_object().if_contains("status");
  const auto* conditions = status != nullptr && status->is_object()
                               ? status->as_object().if_contains("conditions")
                               : nullptr;
  if (conditions == nullptr || !conditions->is_array())
    return false;
  for (const auto& c : conditions->as_array()) {
    if (str(c, {"type"}) == "PodScheduled")
      return str(c, {"status"}) == "False" && str(c, {"reason"}) == "Unschedulable";
  }
  return false;
}

std::string codes(const std::vector<AuditEntry>& entries) {
  std::string out;
  for (const auto& e : entries)
    out += std::to_string(e.code) + " ";
  return out;
}

}  // namespace

TEST_CASE("two schedulers bind one pod: one gets 201, the loser 409 and forgets it",
          "[cluster][scheduler-race]") {
  RaceSetup setup("koord-race", "race");
  KubeApi& api = setup.api;
  TestNamespace& ns = setup.ns;
  const std::string& id = setup.id;
  Cleanup& cleanup = setup.cleanup;

  const auto target = tokenConfig().host;
  koord::testing::TcpRelay relay("127.0.0.1", portOf(target));
  Replica winner("koord-race-winner/" + id, id, nullptr);
  Replica loser("koord-race-loser/" + id, id, &relay);
  REQUIRE(eventually(30s, [&] {
    return winner.requestedMilliCpu(cleanup.node) == 0 &&
           loser.requestedMilliCpu(cleanup.node) == 0;
  }));

  ok(api->createSync(named(kPods, "", ns.name()), pod("contested", ns.name(), id)), "create pod");
  const std::string key = ns.name() + "/contested";
  REQUIRE(eventually(30s, [&] { return winner.pending(key) && loser.pending(key); }));

  // The loser sees nothing from here on, so it goes on taking the pod for unbound.
  relay.cut();
  winner.scheduleOne();
  REQUIRE(nodeOf(*api, ns.name(), "contested") == cleanup.node);
  loser.scheduleOne();

  auto won = winner.bindings("contested");
  REQUIRE(eventually(10s, [&] { return !loser.bindings("contested").empty(); }));
  auto lost = loser.bindings("contested");
  CHECK(codes(won) == "201 ");
  CHECK(codes(lost) == "409 ");
  // The loser forgot its assumption: its node is as empty as before it tried.
  auto& loser_cache = loser.scheduler().cache();
  CHECK(loser.requestedMilliCpu(cleanup.node) == 0);
  CHECK(loser.podsOn(cleanup.node).empty());
  CHECK(loser_cache.dump().assumed.empty());

  // Once it sees the cluster again, the pod counts once, where the winner bound it, and is no
  // longer pending.
  relay.restore();
  CHECK(eventually(30s, [&] {
    return loser.podsOn(cleanup.node) == std::vector<std::string>{key} &&
           loser.requestedMilliCpu(cleanup.node) == 1000 && !loser.pending(key);
  }));
  CHECK(eventually(10s, [&] {
    return winner.podsOn(cleanup.node) == std::vector<std::string>{key} &&
           winner.requestedMilliCpu(cleanup.node) == 1000;
  }));
  CHECK(codes(loser.bindings("contested")) == "409 ");
}

TEST_CASE("a binding that keeps failing is retried after 1, 2, 4 s of backoff",
          "[cluster][scheduler-race]") {
  RaceSetup setup("koord-race-backoff", "backoff");
  KubeApi& api = setup.api;
  TestNamespace& ns = setup.ns;
  const std::string& id = setup.id;
  Cleanup& cleanup = setup.cleanup;

  koord::testing::TcpRelay relay("127.0.0.1", portOf(tokenConfig().host));
  Replica replica("koord-race-backoff/" + id, id, &relay);
  ok(api->createSync(named(kPods, "", ns.name()), pod("doomed", ns.name(), id)), "create pod");
  const std::string key = ns.name() + "/doomed";
  REQUIRE(eventually(30s, [&] { return replica.pending(key); }));

  // Deleted where the replica cannot see it: every binding gets 404, and the pod stays pending
  // in the replica's view, as one a webhook keeps refusing would.
  relay.cut();
  ok(koord::testing::removePodNow(*api, ns.name(), "doomed"), "delete pod");
  replica.scheduler().start();

  // Four tries take 1 + 2 + 4 s of backoff, plus up to a second each for the backoff flush.
  CHECK(eventually(
      20s, [&] { return replica.bindings("doomed").size() >= 4; }, 250ms));
  auto tries = replica.bindings("doomed");
  INFO("answers: " << codes(tries));
  REQUIRE(tries.size() >= 4);
  for (const auto& t : tries)
    CHECK(t.code == 404);
  const double expected[] = {1, 2, 4};
  for (std::size_t i = 0; i < 3; ++i) {
    const double gap = tries[i + 1].received - tries[i].received;
    INFO("gap before try " << i + 2 << ": " << gap << " s");
    CHECK(gap >= expected[i] - 0.05);
    // The backoff flush runs every second; more slack for a loaded machine.
    CHECK(gap <= expected[i] + 3);
  }
  CHECK(replica.requestedMilliCpu(cleanup.node) == 0);
  CHECK(replica.scheduler().cache().dump().assumed.empty());
}

// Check 8's other failure: a validating webhook on pods/binding that cannot be reached, under
// Fail, refuses every binding as a denying one does. The pod backs off, stays unbound and is
// bound by the first try after the webhook goes.
TEST_CASE("a binding a webhook refuses backs off 1, 2, 4 s and succeeds once it is allowed",
          "[cluster][scheduler-race]") {
  RaceSetup setup("koord-race-webhook", "denied");
  KubeApi& api = setup.api;
  TestNamespace& ns = setup.ns;
  const std::string& id = setup.id;
  Cleanup& cleanup = setup.cleanup;

  // Only this namespace's bindings reach the webhook: other tests run beside this one.
  ok(api->patchSync(named(kNamespaces, ns.name()), koord::kube::PatchType::kMergePatch,
                    json::object{{"metadata", {{"labels", {{"koord-deny-binding", id}}}}}}),
     "label the namespace");
  ok(api->createSync(
         kValidatingWebhooks,
         json::object{
             {"apiVersion", "admissionregistration.k8s.io/v1"},
             {"kind", "ValidatingWebhookConfiguration"},
             {"metadata", {{"name", id}}},
             {"webhooks",
              json::array{json::object{
                  {"name", "deny-binding.koord.test"},
                  {"admissionReviewVersions", json::array{"v1"}},
                  {"sideEffects", "None"},
                  {"failurePolicy", "Fail"},
                  {"timeoutSeconds", 2},
                  // Nothing listens on port 1: every call fails, and Fail refuses the request.
                  {"clientConfig", {{"url", "https://127.0.0.1:1/deny"}}},
                  {"namespaceSelector", {{"matchLabels", {{"koord-deny-binding", id}}}}},
                  {"rules",
                   json::array{json::object{{"apiGroups", json::array{""}},
                                            {"apiVersions", json::array{"v1"}},
                                            {"operations", json::array{"CREATE"}},
                                            {"resources", json::array{"pods/binding"}}}}}}}}}),
     "create the webhook");
  struct RemoveWebhook {
    KubeApi& api;
    ResourceRef ref;
    ~RemoveWebhook() { (void)api->removeSync(ref); }
  } remove_webhook{api, named(kValidatingWebhooks, id)};

  Replica replica("koord-race-webhook/" + id, id, nullptr);
  ok(api->createSync(named(kPods, "", ns.name()), pod("refused", ns.name(), id)), "create pod");
  const std::string key = ns.name() + "/refused";
  REQUIRE(eventually(30s, [&] { return replica.pending(key); }));
  replica.scheduler().start();

  CHECK(eventually(
      20s, [&] { return replica.bindings("refused").size() >= 4; }, 250ms));
  auto tries = replica.bindings("refused");
  INFO("answers: " << codes(tries));
  REQUIRE(tries.size() >= 4);
  for (const auto& t : tries)
    CHECK(t.code >= 400);
  const double expected[] = {1, 2, 4};
  for (std::size_t i = 0; i < 3; ++i) {
    const double gap = tries[i + 1].received - tries[i].received;
    INFO("gap before try " << i + 2 << ": " << gap << " s");
    CHECK(gap >= expected[i] - 0.05);
    CHECK(gap <= expected[i] + 3);
  }
  CHECK(nodeOf(*api, ns.name(), "refused").empty());
  CHECK(replica.requestedMilliCpu(cleanup.node) == 0);

  // Allowed again: the next try (after at most the 10 s cap and a flush) binds it.
  REQUIRE(api->removeSync(named(kValidatingWebhooks, id)).has_value());
  CHECK(eventually(
      30s, [&] { return nodeOf(*api, ns.name(), "refused") == cleanup.node; }, 250ms));
  CHECK(replica.bindings("refused").back().code == 201);
}

TEST_CASE("8 pods created at once on a node with room for 4: 4 are bound, never more",
          "[cluster][scheduler-race]") {
  RaceSetup setup("koord-race-burst", "burst");
  KubeApi& api = setup.api;
  TestNamespace& ns = setup.ns;
  const std::string& id = setup.id;
  Cleanup& cleanup = setup.cleanup;

  Replica replica("koord-race-burst/" + id, id, nullptr);
  REQUIRE(eventually(30s, [&] { return replica.requestedMilliCpu(cleanup.node) == 0; }));
  replica.scheduler().start();

  // Each create on a client and thread of its own, released together.
  std::promise<void> go;
  std::shared_future<void> start = go.get_future().share();
  std::vector<std::future<bool>> creates;
  for (int i = 0; i < 8; ++i) {
    creates.push_back(std::async(std::launch::async, [&, i] {
      KubeApi own(tokenConfig());
      start.wait();
      const std::string name = "burst-" + std::to_string(i);
      return own->createSync(named(kPods, "", ns.name()), pod(name, ns.name(), id)).has_value();
    }));
  }
  go.set_value();
  for (auto& c : creates)
    REQUIRE(c.get());

  auto count = [&](bool want_bound) {
    int n = 0;
    for (int i = 0; i < 8; ++i) {
      const std::string name = "burst-" + std::to_string(i);
      n += want_bound ? !nodeOf(*api, ns.name(), name).empty() : refused(api, ns.name(), name);
    }
    return n;
  };
  auto bound = [&] { return count(true); };
  // Every pod has had its try: 4 bound, the other 4 refused for want of CPU.
  REQUIRE(eventually(30s, [&] { return bound() + count(false) == 8; }));
  CHECK(bound() == 4);
  CHECK(replica.requestedMilliCpu(cleanup.node) == 4000);
  CHECK(replica.podsOn(cleanup.node).size() == 4);
  // The refused ones stay refused: nothing frees room.
  std::this_thread::sleep_for(2s);
  CHECK(bound() == 4);
  CHECK(replica.requestedMilliCpu(cleanup.node) == 4000);
}
