// MigrationController as a plugin without a cluster: which pods its Filter lets go (the evictor
// rules its args state), and that its Evict point makes no job where there is no controller.
#include <catch2/catch.hpp>

#include <string>

#include "controllers/migration/plugin.h"
#include "fake_handle.h"

using namespace koord::roles::descheduler;
using namespace koord::roles::descheduler::migration;
namespace testkit = koord::roles::descheduler::testkit;

TEST_CASE("MigrationController's filter applies the evictor rules of its args") {
  struct Case {
    const char* name;
    std::function<void(Pod&)> pod;
    std::function<void(MigrationControllerArgs&)> args;
    bool allowed;
  };
  const Case cases[] = {
      {"a ReplicaSet's pod", [](Pod&) {}, [](MigrationControllerArgs&) {}, true},
      {"a mirror pod", [](Pod& p) { p.mirror = true; }, [](MigrationControllerArgs&) {}, false},
      {"a static pod", [](Pod& p) { p.static_pod = true; }, [](MigrationControllerArgs&) {}, false},
      {"a DaemonSet pod",
       [](Pod& p) {
         p.owner_refs = {{"apps/v1", "DaemonSet", "ds", "u", true}};
       },
       [](MigrationControllerArgs&) {}, false},
      {"a bare pod", [](Pod& p) { p.owner_refs.clear(); }, [](MigrationControllerArgs&) {}, false},
      {"a failed bare pod with evictFailedBarePods",
       [](Pod& p) {
         p.owner_refs.clear();
         p.phase = PodPhase::kFailed;
       },
       [](MigrationControllerArgs& a) { a.evict_failed_bare_pods = true; }, true},
      {"a system-critical pod", [](Pod& p) { p.priority = 2'000'001'000; },
       [](MigrationControllerArgs&) {}, false},
      {"a system-critical pod with evictSystemCriticalPods",
       [](Pod& p) { p.priority = 2'000'001'000; },
       [](MigrationControllerArgs& a) { a.evict_system_critical_pods = true; }, true},
      {"local storage", [](Pod& p) { p.has_local_storage = true; }, [](MigrationControllerArgs&) {},
       false},
      {"local storage with evictLocalStoragePods", [](Pod& p) { p.has_local_storage = true; },
       [](MigrationControllerArgs& a) { a.evict_local_storage_pods = true; }, true},
      {"a PVC pod with ignorePvcPods", [](Pod& p) { p.has_pvc = true; },
       [](MigrationControllerArgs& a) { a.ignore_pvc_pods = true; }, false},
      {"at the priority threshold", [](Pod& p) { p.priority = 9000; },
       [](MigrationControllerArgs& a) {
         a.priority_threshold = PriorityThreshold{9000, ""};
       },
       false},
      {"below the priority threshold", [](Pod& p) { p.priority = 8999; },
       [](MigrationControllerArgs& a) {
         a.priority_threshold = PriorityThreshold{9000, ""};
       },
       true},
      {"an excluded namespace", [](Pod&) {},
       [](MigrationControllerArgs& a) {
         a.namespaces = Namespaces{{}, {"default"}};
       },
       false},
      {"outside the included namespaces", [](Pod&) {},
       [](MigrationControllerArgs& a) {
         a.namespaces = Namespaces{{"batch"}, {}};
       },
       false},
      {"being deleted", [](Pod& p) { p.deletion_timestamp = std::chrono::system_clock::now(); },
       [](MigrationControllerArgs&) {}, false},
  };
  for (const auto& tc : cases) {
    SECTION(tc.name) {
      auto args = std::make_shared<MigrationControllerArgs>(defaultMigrationControllerArgs());
      tc.args(*args);
      testkit::FakeHandle handle;
      koord::metrics::Registry metrics;
      MigrationControllerPlugin plugin(args, handle, metrics);
      auto pod = testkit::makePod("p", "n1");
      tc.pod(*pod);
      CHECK(plugin.filter(*pod) == tc.allowed);
      std::string why;
      CHECK(migratable(*args, std::nullopt, *pod, &why) == tc.allowed);
      CHECK(why.empty() == tc.allowed);
    }
  }
}

TEST_CASE("without a cluster MigrationController makes no job and evicts nothing") {
  auto args = std::make_shared<MigrationControllerArgs>(defaultMigrationControllerArgs());
  testkit::FakeHandle handle;
  koord::metrics::Registry metrics;
  MigrationControllerPlugin plugin(args, handle, metrics);
  CHECK(plugin.controller() == nullptr);
  CHECK_FALSE(plugin.evict(*testkit::makePod("p", "n1"), {"LowNodeLoad", "hot"}));
}
