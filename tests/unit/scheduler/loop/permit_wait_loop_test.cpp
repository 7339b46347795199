// The scheduling loop with a Permit plugin that holds pods (as Coscheduling holds a gang's
// members): a held pod keeps its assumed room, binds once allowed, and on a rejection, a
// timeout or its deletion gives the room back and is requeued as unschedulable.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "config/scheduler_config.h"
#include "framework/plugin_factory.h"
#include "framework/plugin_registry.h"
#include "koord/core/metrics.h"
#include "loop_objects.h"
#include "scheduler.h"

namespace koord::roles::scheduler {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kHold = "HoldAtPermit";

// Holds pods whose name starts with "held" (for 60 s, or 50 ms for "held-short").
class HoldAtPermit final : public PermitPlugin {
 public:
  explicit HoldAtPermit(FrameworkHandle& handle) : handle_(handle) {}
  std::string_view name() const override { return kHold; }
  PermitResult permit(CycleState&, const PodInfo& pod, const std::string&) override {
    if (pod.name.rfind("held", 0) != 0)
      return {};
    return {Status(Code::kWait), pod.name == "held-short" ? 50ms : 60000ms};
  }
  FrameworkHandle& handle_;
};

class RecordingApi final : public SchedulerApi {
 public:
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override {
    {
      std::lock_guard lock(mu);
      bindings.emplace_back(pod->key(), node);
    }
    done({});
  }
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override {
    std::lock_guard lock(mu);
    auto it = pods.find(key);
    return it == pods.end() ? nullptr : it->second;
  }
  void reportScheduled(const PodInfo& pod, const std::string& node, const std::string&) override {
    std::lock_guard lock(mu);
    reports.emplace_back(pod.key(), "scheduled " + node);
  }
  void reportFailure(const PodInfo& pod, const std::string&, std::string_view reason,
                     const std::string& message, const std::string&) override {
    std::lock_guard lock(mu);
    reports.emplace_back(pod.key(), std::string(reason) + ": " + message);
  }
  std::size_t reportCount() const {
    std::lock_guard lock(mu);
    return reports.size();
  }

  mutable std::mutex mu;
  std::map<std::string, std::shared_ptr<const PodInfo>> pods;
  mutable std::vector<std::pair<std::string, std::string>> bindings;
  std::vector<std::pair<std::string, std::string>> reports;
};

std::shared_ptr<const Node> node(const std::string& name, std::int64_t milli_cpu) {
  return testing::loopNode(name, milli_cpu);
}

std::shared_ptr<const PodInfo> pod(const std::string& name, std::int64_t milli_cpu) {
  return testing::loopPod(name, milli_cpu);
}

const PluginRegistry& registryWithHold() {
  static const PluginRegistry registry = [] {
    PluginRegistry r = inTreeRegistry();
    r.add(std::string(kHold), makePluginFactory<HoldAtPermit>(kHold));
    return r;
  }();
  return registry;
}

config::SchedulerConfig holdConfig() {
  auto cfg = config::parseSchedulerConfigText(
      "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: koord-scheduler\n"
      "  plugins:\n    permit: {enabled: [{name: HoldAtPermit}]}\n",
      registryWithHold());
  REQUIRE(cfg.has_value());
  return std::move(*cfg);
}

struct Fixture {
  RecordingApi api;
  metrics::Registry registry;
  Scheduler scheduler{holdConfig(), registryWithHold(), api, registry};
  Fixture() { scheduler.onNodeAdd(node("n1", 4000)); }

  void addPending(std::shared_ptr<const PodInfo> p) {
    {
      std::lock_guard lock(api.mu);
      api.pods[p->key()] = p;
    }
    scheduler.onPendingPodAdd(p);
  }
  WaitingPods& waiting() {
    auto* plugin = dynamic_cast<HoldAtPermit*>(scheduler.findPlugin(kHold));
    REQUIRE(plugin != nullptr);
    REQUIRE(plugin->handle_.waitingPods() != nullptr);
    return *plugin->handle_.waitingPods();
  }
  std::int64_t requestedOnNode() { return scheduler.cache().nodeInfo("n1")->requested.milli_cpu; }
};

bool eventually(const std::function<bool()>& f) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!f()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

TEST_CASE("scheduler loop: a pod held at Permit keeps its room and binds once allowed",
          "[scheduler][loop][permit]") {
  Fixture f;
  f.addPending(pod("held-a", 3000));
  REQUIRE(f.scheduler.scheduleOne());
  CHECK(f.api.bindings.empty());
  CHECK(f.waiting().size() == 1);
  CHECK(f.scheduler.cache().isAssumedPod("uid-held-a"));
  CHECK(f.requestedOnNode() == 3000);
  // The room is held: a pod that needs it finds none.
  f.addPending(pod("other", 2000));
  REQUIRE(f.scheduler.scheduleOne());
  REQUIRE(f.api.reports.size() == 1);
  CHECK(f.api.reports[0].first == "default/other");
  CHECK(f.api.reports[0].second.find("Unschedulable") != std::string::npos);

  CHECK(f.waiting().allow("uid-held-a", kHold));
  REQUIRE(f.api.bindings.size() == 1);
  CHECK(f.api.bindings[0] == std::make_pair(std::string("default/held-a"), std::string("n1")));
  CHECK(f.waiting().size() == 0);
}

TEST_CASE("scheduler loop: a rejected held pod gives its room back and is requeued",
          "[scheduler][loop][permit]") {
  Fixture f;
  f.addPending(pod("held-a", 3000));
  REQUIRE(f.scheduler.scheduleOne());
  CHECK(f.waiting().reject("uid-held-a", kHold, "gang rejected"));
  CHECK(f.api.bindings.empty());
  CHECK_FALSE(f.scheduler.cache().isAssumedPod("uid-held-a"));
  CHECK(f.requestedOnNode() == 0);
  REQUIRE(f.api.reports.size() == 1);
  CHECK(f.api.reports[0].second == "Unschedulable: gang rejected");
  const auto sizes = f.scheduler.queue().sizes();
  CHECK(sizes.active + sizes.backoff + sizes.unschedulable == 1);
}

TEST_CASE("scheduler loop: a held pod past its Permit timeout is rejected",
          "[scheduler][loop][permit]") {
  Fixture f;
  f.addPending(pod("held-short", 3000));
  REQUIRE(f.scheduler.scheduleOne());
  REQUIRE(eventually([&] { return f.api.reportCount() == 1; }));
  CHECK(f.api.bindings.empty());
  CHECK(f.requestedOnNode() == 0);
  std::lock_guard lock(f.api.mu);
  CHECK(f.api.reports[0].second.find("timeout") != std::string::npos);
}

TEST_CASE("scheduler loop: a held pod that is deleted gives its room back at once",
          "[scheduler][loop][permit]") {
  Fixture f;
  auto p = pod("held-a", 3000);
  f.addPending(p);
  REQUIRE(f.scheduler.scheduleOne());
  {
    std::lock_guard lock(f.api.mu);
    f.api.pods.erase(p->key());
  }
  f.scheduler.onPendingPodDelete(*p);
  CHECK(f.waiting().size() == 0);
  CHECK(f.requestedOnNode() == 0);
  CHECK(f.api.bindings.empty());
  const auto sizes = f.scheduler.queue().sizes();
  CHECK(sizes.active + sizes.backoff + sizes.unschedulable == 0);
}

}  // namespace
}  // namespace koord::roles::scheduler
