// The koordlet's PodEvictor against the real apiserver: an eviction a PodDisruptionBudget forbids,
// and one aimed at a pod that was recreated under the same name. What the evictor sent, and what
// each request got, is read from the apiserver's audit log: a DELETE sent in place of an
// Eviction shows there even if it failed.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit_log.h"
#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "koord/kube/discovery.h"
#include "koord/kube/event_recorder.h"
#include "qosmanager/evict/pod_evictor.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::ResourceRef;
using koord::roles::koordlet::PodMeta;
using koord::testing::auditEntries;
using koord::testing::AuditEntry;
using koord::testing::eventually;
using koord::testing::KubeApi;
using koord::testing::named;
using koord::testing::ok;
using koord::testing::PodNamespace;
using koord::testing::str;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;
using namespace koord::testing::resources;

namespace {

constexpr const char* kReason = "trigger by koordlet feature BEMemoryEvict";

// An unbound pod (nothing schedules it: no kube-scheduler runs, and its scheduler is not koord's),
// so a DELETE or an eviction removes it at once instead of waiting for a kubelet.
PodMeta createPod(KubeApi& api, const std::string& ns, const std::string& name,
                  const std::string& app) {
  auto created = ok(
      api->createSync(
          named(kPods, "", ns),
          json::object{{"apiVersion", "v1"},
                       {"kind", "Pod"},
                       {"metadata", {{"name", name}, {"labels", {{"app", app}}}}},
                       {"spec",
                        {{"automountServiceAccountToken", false},
                         {"containers",
                          json::array{{{"name", "c"}, {"image", "koord.local/busybox:local"}}}}}}}),
      "create pod");
  PodMeta p;
  p.namespace_ = ns;
  p.name = name;
  p.uid = str(created, {"metadata", "uid"});
  REQUIRE_FALSE(p.uid.empty());
  return p;
}

// The apiserver evicts Pending pods whatever a budget says; Running and Ready pods count as
// healthy for it.
void markRunningAndReady(KubeApi& api, const PodMeta& p) {
  auto status = named(kPods, p.name, p.namespace_);
  status.subresource = "status";
  ok(api->patchSync(
         status, koord::kube::PatchType::kMergePatch,
         json::object{{"status",
                       {{"phase", "Running"},
                        {"conditions", json::array{{{"type", "Ready"}, {"status", "True"}}}}}}}),
     "mark the pod Running and Ready");
}

// The pod's UID, "" once it is gone, "deleting" once a deletion has begun.
std::string liveUid(KubeApi& api, const std::string& ns, const std::string& name) {
  auto p = api->getSync(named(kPods, name, ns));
  if (!p) {
    if (p.error().code != 404)
      FAIL("get pod " << name << ": " << p.error().message);
    return "";
  }
  if (p->at("metadata").as_object().contains("deletionTimestamp"))
    return "deleting";
  return str(*p, {"metadata", "uid"});
}

std::string pdbVersion(KubeApi& api) {
  auto promise =
      std::make_shared<std::promise<koord::kube::ApiResult<std::optional<std::string>>>>();
  auto answer = promise->get_future();
  koord::kube::servedVersionOf(*api, "policy", "poddisruptionbudgets", {"v1", "v1beta1"},
                               [promise](auto r) { promise->set_value(std::move(r)); });
  REQUIRE(answer.wait_for(30s) == std::future_status::ready);
  auto r = answer.get();
  if (!r || !*r)
    FAIL("this apiserver serves no PodDisruptionBudget API");
  return **r;
}

// The budget's status once the disruption controller has caught up with its spec.
bool budgetAllows(KubeApi& api, const ResourceRef& pdb, std::int64_t healthy,
                  std::int64_t disruptions) {
  auto b = api->getSync(pdb);
  if (!b)
    return false;
  const auto* status = b->as_object().if_contains("status");
  if (status == nullptr || !status->is_object())
    return false;
  auto number = [&](const char* key) {
    const auto* v = status->as_object().if_contains(key);
    return v != nullptr && v->is_int64() ? v->as_int64() : -1;
  };
  return number("observedGeneration") == b->at("metadata").at("generation").as_int64() &&
         number("currentHealthy") == healthy && number("disruptionsAllowed") == disruptions;
}

// Every koord log line, kept for the test and still written to stderr.
class LogCapture {
 public:
  LogCapture() {
    koord::log::setSink([this](std::string_view line) {
      std::cerr << line;
      std::lock_guard lock(mu_);
      lines_.emplace_back(line);
    });
  }
  ~LogCapture() { koord::log::setSink(nullptr); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  std::vector<std::string> matching(std::string_view needle) const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const auto& l : lines_) {
      if (l.find(needle) != std::string::npos)
        out.push_back(l);
    }
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

// The koordlet's evictor as its main wires it (RestClient, EventRecorder, metrics), on a client
// of its own whose user agent picks its requests out of the audit log.
class Evictor {
 public:
  explicit Evictor(const std::string& id)
      : user_agent_("koord-evictor-test/" + id),
        api_(config(user_agent_)),
        recorder_(*api_, api_.io, {"koordlet", "node-evict"}),
        evictor_(*api_, recorder_, registry_, "node-evict") {
    evictor_.discoverEvictionVersion(api_.io);
    REQUIRE(eventually(30s, [&] { return evictor_.evictionVersion().has_value(); }));
  }
  ~Evictor() {
    evictor_.stop();
    (void)recorder_.flush(10s);
  }
  Evictor(const Evictor&) = delete;
  Evictor& operator=(const Evictor&) = delete;

  /// What evict() reported.
  bool evict(const PodMeta& pod) {
    auto promise = std::make_shared<std::promise<bool>>();
    auto answer = promise->get_future();
    evictor_.evict(pod, kReason, "evictor test",
                   [promise](bool accepted) { promise->set_value(accepted); });
    REQUIRE(answer.wait_for(30s) == std::future_status::ready);
    return answer.get();
  }
  koord::roles::koordlet::qosmanager::PodEvictor& operator*() { return evictor_; }
  koord::roles::koordlet::qosmanager::PodEvictor* operator->() { return &evictor_; }

  /// This evictor's writes the apiserver has answered, oldest first.
  std::vector<AuditEntry> writes() const { return auditEntries(user_agent_); }
  std::vector<AuditEntry> evictionsOf(const std::string& name) const {
    std::vector<AuditEntry> out;
    for (auto& e : writes()) {
      if (e.resource == "pods" && e.subresource == "eviction" && e.name == name)
        out.push_back(std::move(e));
    }
    return out;
  }
  /// Every write that was not an Eviction or an Event: a DELETE in place of an Eviction, say.
  std::vector<std::string> otherWrites() const {
    std::vector<std::string> out;
    for (const auto& e : writes()) {
      const bool eviction =
          e.verb == "create" && e.resource == "pods" && e.subresource == "eviction";
      const bool event = e.resource == "events" && (e.verb == "create" || e.verb == "patch");
      if (!eviction && !event)
        out.push_back(e.verb + " " + e.resource + "/" + e.subresource + " " + e.namespace_ + "/" +
                      e.name + " -> " + std::to_string(e.code));
    }
    return out;
  }
  /// The rendered koordlet_pod_eviction_failed sample for this test's reason, "" if none.
  std::string failuresCounted() const {
    const std::string text = registry_.render();
    const std::string key = "koordlet_pod_eviction_failed{node=\"node-evict\",reason=\"";
    auto at = text.find(key);
    if (at == std::string::npos)
      return "";
    auto eol = text.find('\n', at);
    auto sample = text.substr(at, eol - at);
    return sample.substr(sample.rfind(' ') + 1);
  }
  void flushEvents() { REQUIRE(recorder_.flush(10s)); }

 private:
  static koord::kube::RestConfig config(const std::string& user_agent) {
    auto c = tokenConfig();
    c.user_agent = user_agent;
    return c;
  }
  std::string user_agent_;
  KubeApi api_;
  koord::kube::EventRecorder recorder_;
  koord::metrics::Registry registry_;
  koord::roles::koordlet::qosmanager::PodEvictor evictor_;
};

// The Events recorded on a pod with `reason`, their messages.
std::vector<std::string> eventMessages(KubeApi& api, const std::string& ns, const std::string& pod,
                                       const std::string& reason) {
  koord::kube::ListOptions options;
  options.field_selector = "involvedObject.name=" + pod + ",reason=" + reason;
  auto list = ok(api->listSync(named(kEvents, "", ns), options), "list events");
  std::vector<std::string> out;
  for (const auto& e : list.at("items").as_array())
    out.push_back(str(e, {"message"}));
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines)
    out += l + "\n";
  return out;
}

}  // namespace

TEST_CASE("pod evictor: an eviction a budget forbids gets 429, is never a DELETE, and is retried",
          "[cluster][evictor]") {
  KubeApi api(tokenConfig());
  PodNamespace ns(*api, "koord-evict-pdb");
  const std::string id = uniqueName("pdb");
  std::vector<PodMeta> pods;
  for (const char* name : {"guarded-0", "guarded-1"}) {
    pods.push_back(createPod(api, ns.name(), name, id));
    markRunningAndReady(api, pods.back());
  }
  // minAvailable = replicas: no disruption is allowed while both are healthy.
  const std::string group_version = pdbVersion(api);  // "policy/v1beta1"
  const ResourceRef pdbs{"policy",
                         group_version.substr(group_version.find('/') + 1),
                         "poddisruptionbudgets",
                         ns.name(),
                         "",
                         ""};
  ok(api->createSync(
         pdbs,
         json::object{
             {"apiVersion", group_version},
             {"kind", "PodDisruptionBudget"},
             {"metadata", {{"name", "guard"}}},
             {"spec", {{"minAvailable", 2}, {"selector", {{"matchLabels", {{"app", id}}}}}}}}),
     "create PodDisruptionBudget");
  const ResourceRef pdb = named(pdbs, "guard", ns.name());
  // Until the disruption controller has processed the budget the apiserver refuses for that
  // reason instead; the refusal under test is the budget's own.
  REQUIRE(eventually(30s, [&] { return budgetAllows(api, pdb, 2, 0); }));

  LogCapture logs;
  Evictor evictor(id);
  const PodMeta& victim = pods[0];

  CHECK_FALSE(evictor.evict(victim));
  // A refused eviction is not remembered as done: the next round may try again.
  CHECK_FALSE(evictor->recentlyEvicted(victim.uid));
  CHECK(liveUid(api, ns.name(), victim.name) == victim.uid);

  // A later try goes to the apiserver again, and is refused again.
  CHECK_FALSE(evictor.evict(victim));
  CHECK_FALSE(evictor->recentlyEvicted(victim.uid));
  CHECK(liveUid(api, ns.name(), victim.name) == victim.uid);

  REQUIRE(eventually(10s, [&] { return evictor.evictionsOf(victim.name).size() >= 2; }));
  auto tries = evictor.evictionsOf(victim.name);
  CHECK(tries.size() == 2);
  for (const auto& t : tries)
    CHECK(t.code == 429);
  // Refused, and nothing else was tried in its place.
  CHECK(joined(evictor.otherWrites()) == "");
  CHECK(evictor.failuresCounted() == "2");
  auto failed = logs.matching("evict pod " + victim.key() + " failed");
  CHECK(failed.size() == 2);
  CHECK_THAT(joined(failed), Catch::Contains("disruption budget"));
  evictor.flushEvents();
  auto events = eventMessages(api, ns.name(), victim.name, "evictPodFail");
  REQUIRE_FALSE(events.empty());
  CHECK_THAT(events.front(), Catch::Contains("disruption budget"));

  // Relaxed by one: the next try is let through.
  ok(api->patchSync(pdb, koord::kube::PatchType::kMergePatch,
                    json::object{{"spec", {{"minAvailable", 1}}}}),
     "relax the budget");
  REQUIRE(eventually(30s, [&] { return budgetAllows(api, pdb, 2, 1); }));
  CHECK(evictor.evict(victim));
  CHECK(evictor->recentlyEvicted(victim.uid));
  CHECK(eventually(10s, [&] { return liveUid(api, ns.name(), victim.name).empty(); }));
  CHECK(liveUid(api, ns.name(), pods[1].name) == pods[1].uid);
  REQUIRE(eventually(10s, [&] { return evictor.evictionsOf(victim.name).size() >= 3; }));
  tries = evictor.evictionsOf(victim.name);
  CHECK(tries.size() == 3);
  CHECK(tries.back().code == 201);

  // Done now: answered from the evictor's memory, without a request.
  std::optional<bool> again;
  evictor->evict(victim, kReason, "evictor test", [&](bool accepted) { again = accepted; });
  CHECK(again == std::optional<bool>(true));

  // Nothing but Evictions and Events went out: no DELETE, refused or not.
  evictor.flushEvents();
  CHECK(joined(evictor.otherWrites()) == "");
  CHECK(evictor.evictionsOf(victim.name).size() == 3);
}

TEST_CASE("pod evictor: a pod recreated under the same name is not evicted: the UID gives 409",
          "[cluster][evictor]") {
  KubeApi api(tokenConfig());
  PodNamespace ns(*api, "koord-evict-uid");
  const std::string id = uniqueName("uid");

  // What the koordlet saw of the pod before it was replaced.
  const PodMeta snapshot = createPod(api, ns.name(), "reborn", id);
  ok(koord::testing::removePodNow(*api, ns.name(), "reborn"), "delete the first pod");
  REQUIRE(eventually(10s, [&] { return liveUid(api, ns.name(), "reborn").empty(); }));
  const PodMeta reborn = createPod(api, ns.name(), "reborn", id);
  REQUIRE(reborn.uid != snapshot.uid);

  LogCapture logs;
  Evictor evictor(id);
  CHECK_FALSE(evictor.evict(snapshot));
  CHECK_FALSE(evictor->recentlyEvicted(snapshot.uid));
  CHECK_FALSE(evictor->recentlyEvicted(reborn.uid));
  CHECK(liveUid(api, ns.name(), "reborn") == reborn.uid);

  REQUIRE(eventually(10s, [&] { return !evictor.evictionsOf("reborn").empty(); }));
  auto tries = evictor.evictionsOf("reborn");
  CHECK(tries.size() == 1);
  CHECK(tries.front().code == 409);
  CHECK(evictor.failuresCounted() == "1");
  auto failed = logs.matching("evict pod " + snapshot.key() + " failed");
  CHECK(failed.size() == 1);
  CHECK_THAT(joined(failed), Catch::Contains(snapshot.uid));
  evictor.flushEvents();
  auto events = eventMessages(api, ns.name(), "reborn", "evictPodFail");
  REQUIRE_FALSE(events.empty());
  CHECK_THAT(events.front(), Catch::Contains(snapshot.uid));
  CHECK(joined(evictor.otherWrites()) == "");
}
