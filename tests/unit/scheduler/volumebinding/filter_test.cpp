// VolumeBinding's PreFilter and Filter as kube-scheduler 1.20 decides them: claims that must
// exist and bind, bound volumes' node affinity, the smallest free PV that fits, pre-bound volumes,
// provisioning where the class allows it.
#include <catch2/catch.hpp>

#include "fixtures.h"

namespace vb_test {
namespace {

const std::string kNodeConflict(vb::kReasonNodeConflict);
const std::string kBindConflict(vb::kReasonBindConflict);

TEST_CASE("volumebinding: a pod without claims is skipped at no cost",
          "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  auto plugin = env.build();
  PodInfo pod = podWithClaims("p", {});
  CycleState state;
  CHECK(plugin->preFilter(state, pod).isSkip());
  CHECK(state.read<vb::VolumeBindingState>("VolumeBinding") == nullptr);
  CHECK(plugin->reserve(state, pod, "node-a").ok());
  bool answered = false;
  plugin->preBind(std::make_shared<CycleState>(), std::make_shared<const PodInfo>(pod), "node-a",
                  [&](Status s) {
                    answered = true;
                    CHECK(s.ok());
                  });
  CHECK(answered);
  CHECK(env.cluster.patches.empty());
}

TEST_CASE("volumebinding: PreFilter refuses claims that cannot be used",
          "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "local"}));
  env.add(makeClass({.name = "fast", .provisioner = "ebs", .wait_for_first_consumer = false}));
  env.add(makeClaim({.name = "gone", .storage_class = "local", .terminating = true}));
  env.add(makeClaim({.name = "immediate", .storage_class = "fast"}));
  env.add(makeClaim({.name = "classless"}));
  env.add(makeClaim({.name = "unknown-class", .storage_class = "nope"}));
  env.add(makeClaim({.name = "prebound", .storage_class = "local", .volume_name = "pv-x"}));
  env.add(makeClaim({.name = "eph-e", .storage_class = "local", .controller_uid = "someone"}));
  env.add(makeClaim({.name = "wffc", .storage_class = "local"}));
  auto plugin = env.build();

  struct Row {
    std::vector<std::string> claims;
    std::vector<std::string> ephemeral;
    std::string message;
  };
  const std::vector<Row> rows = {
      {{"missing"}, {}, R"(persistentvolumeclaim "missing" not found)"},
      {{"wffc", "missing"}, {}, R"(persistentvolumeclaim "missing" not found)"},
      {{"gone"}, {}, R"(persistentvolumeclaim "gone" is being deleted)"},
      {{}, {"e"}, R"(persistentvolumeclaim "eph-e" was not created for the pod)"},
      {{"immediate"}, {}, std::string(vb::kReasonUnboundImmediate)},
      {{"classless"}, {}, std::string(vb::kReasonUnboundImmediate)},
      {{"unknown-class"}, {}, std::string(vb::kReasonUnboundImmediate)},
      // A claim naming its volume already is the PV controller's to bind, whatever the class.
      {{"prebound"}, {}, std::string(vb::kReasonUnboundImmediate)},
      {{"wffc", "immediate"}, {}, std::string(vb::kReasonUnboundImmediate)},
  };
  for (const Row& row : rows) {
    CAPTURE(row.message);
    CycleState state;
    Status s = plugin->preFilter(state, podWithClaims("eph", row.claims, row.ephemeral));
    CHECK(s.code() == Code::kUnschedulableAndUnresolvable);
    CHECK(s.message() == row.message);
  }
}

TEST_CASE("volumebinding: an ephemeral volume's claim made for the pod is used",
          "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "local"}));
  env.add(makeClaim({.name = "p-scratch2", .storage_class = "local", .controller_uid = "uid-p"}));
  env.add(makePV({.name = "pv-a", .storage_class = "local", .host = "node-a"}));
  auto plugin = env.build();
  Cycle c = runCycle(*plugin, env, podWithClaims("p", {}, {"scratch2"}));
  REQUIRE(c.pre.ok());
  CHECK(c.filter.at("node-a").ok());
  CHECK(chosenVolume(c, "node-a", "p-scratch2") == "pv-a");
  CHECK(c.filter.at("node-b").message() == kBindConflict);
}

TEST_CASE("volumebinding: a bound claim's volume must allow the node",
          "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "local"}));
  env.add(makePV({.name = "pv-a",
                  .storage_class = "local",
                  .phase = "Bound",
                  .host = "node-a",
                  .claim = "data",
                  .claim_uid = "uid-data"}));
  env.add(makePV({.name = "pv-any",
                  .storage_class = "local",
                  .phase = "Bound",
                  .claim = "shared",
                  .claim_uid = "uid-shared"}));
  env.add(makeClaim(
      {.name = "data", .storage_class = "local", .volume_name = "pv-a", .bind_completed = true}));
  env.add(makeClaim({.name = "shared",
                     .storage_class = "local",
                     .volume_name = "pv-any",
                     .bind_completed = true}));
  env.add(makeClaim({.name = "lost",
                     .storage_class = "local",
                     .volume_name = "pv-gone",
                     .bind_completed = true}));
  auto plugin = env.build();

  SECTION("affinity") {
    Cycle c = runCycle(*plugin, env, podWithClaims("p", {"data", "shared"}));
    REQUIRE(c.pre.ok());
    CHECK(c.filter.at("node-a").ok());
    const Status& b = c.filter.at("node-b");
    CHECK(b.code() == Code::kUnschedulableAndUnresolvable);
    CHECK(b.message() == kNodeConflict);
    // Nothing to bind: Reserve leaves PreBind nothing to do.
    CHECK(plugin->reserve(*c.state, podWithClaims("p", {"data", "shared"}), "node-a").ok());
    bool answered = false;
    plugin->preBind(c.state, std::make_shared<const PodInfo>(podWithClaims("p", {"data"})),
                    "node-a", [&](Status s) {
                      answered = true;
                      CHECK(s.ok());
                    });
    CHECK(answered);
    CHECK(env.cluster.patches.empty());
  }
  SECTION("volumes fitting every node leave Filter out") {
    CycleState state;
    CHECK(plugin->preFilter(state, podWithClaims("p", {"shared"})).isSkip());
    CHECK(plugin->reserve(state, podWithClaims("p", {"shared"}), "node-b").ok());
  }
  SECTION("a bound claim whose volume does not exist is an error, as in 1.20") {
    Cycle c = runCycle(*plugin, env, podWithClaims("p", {"lost"}));
    REQUIRE(c.pre.ok());
    CHECK(c.filter.at("node-a").code() == Code::kError);
    CHECK(c.filter.at("node-a").message() == R"(could not find v1.PersistentVolume "pv-gone")");
  }
}

TEST_CASE("volumebinding: the smallest free volume that fits is chosen",
          "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "local"}));
  env.add(makeClass({.name = "other"}));
  // Added before the plugin is built (the cache takes what the source holds) and after.
  env.add(makePV({.name = "pv-5g", .storage_class = "local", .capacity = "5Gi"}));
  env.add(makePV({.name = "pv-1g", .storage_class = "local", .capacity = "1Gi"}));
  auto plugin = env.build();
  env.add(makePV({.name = "pv-3g", .storage_class = "local", .capacity = "3Gi"}));
  env.add(
      makePV({.name = "pv-2g-b", .storage_class = "local", .capacity = "2Gi", .host = "node-b"}));
  env.add(makeClaim({.name = "data", .storage_class = "local", .request = "2Gi"}));

  Cycle c = runCycle(*plugin, env, podWithClaims("p", {"data"}));
  REQUIRE(c.pre.ok());
  CHECK(c.filter.at("node-a").ok());
  CHECK(c.filter.at("node-b").ok());
  CHECK(chosenVolume(c, "node-a", "data") == "pv-3g");
  CHECK(chosenVolume(c, "node-b", "data") == "pv-2g-b");
}

TEST_CASE("volumebinding: free volumes that do not fit the claim are passed over",
          "[scheduler][volumebinding]") {
  struct Row {
    std::string what;
    PVSpec pv;
  };
  const std::vector<Row> rows = {
      {"too small", {.name = "pv", .storage_class = "local", .capacity = "512Mi"}},
      {"another class", {.name = "pv", .storage_class = "other"}},
      {"access modes", {.name = "pv", .storage_class = "local", .modes = {"ReadOnlyMany"}}},
      {"selector", {.name = "pv", .storage_class = "local", .labels = {{"tier", "cold"}}}},
      {"volume mode", {.name = "pv", .storage_class = "local", .volume_mode = "Block"}},
      {"not Available", {.name = "pv", .storage_class = "local", .phase = "Released"}},
      {"being deleted", {.name = "pv", .storage_class = "local", .terminating = true}},
      {"bound elsewhere",
       {.name = "pv", .storage_class = "local", .claim = "other", .claim_uid = "uid-other"}},
      {"claimRef of an earlier claim of that name",
       {.name = "pv", .storage_class = "local", .claim = "data", .claim_uid = "old-uid"}},
      {"affinity to the other node", {.name = "pv", .storage_class = "local", .host = "node-b"}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what);
    Env env;
    env.setNodes(twoNodes());
    env.add(makeClass({.name = "local"}));
    env.add(makePV(row.pv));
    env.add(makeClaim({.name = "data",
                       .storage_class = "local",
                       .modes = {"ReadWriteOnce"},
                       .selector = row.what == "selector"
                                       ? std::map<std::string, std::string>{{"tier", "hot"}}
                                       : std::map<std::string, std::string>{}}));
    auto plugin = env.build();
    Cycle c = runCycle(*plugin, env, podWithClaims("p", {"data"}));
    REQUIRE(c.pre.ok());
    const Status& a = c.filter.at("node-a");
    CHECK(a.code() == Code::kUnschedulableAndUnresolvable);
    CHECK(a.message() == kBindConflict);
  }
}

TEST_CASE("volumebinding: a volume pre-bound to the claim wins, and decides alone",
          "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "local"}));
  env.add(makePV({.name = "pv-small", .storage_class = "local", .capacity = "1Gi"}));
  env.add(makePV({.name = "pv-mine",
                  .storage_class = "local",
                  .capacity = "10Gi",
                  .host = "node-a",
                  .claim = "data"}));
  env.add(makeClaim({.name = "data", .storage_class = "local"}));
  auto plugin = env.build();
  Cycle c = runCycle(*plugin, env, podWithClaims("p", {"data"}));
  REQUIRE(c.pre.ok());
  CHECK(chosenVolume(c, "node-a", "data") == "pv-mine");
  // Where the pre-bound volume does not fit, the claim is not matched to another volume: it
  // would be provisioned, which a no-provisioner class cannot.
  CHECK(c.filter.at("node-b").message() == kBindConflict);
}

TEST_CASE("volumebinding: a pod's claims never share a volume", "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "local"}));
  env.add(makePV({.name = "pv-1", .storage_class = "local", .host = "node-a"}));
  env.add(makePV({.name = "pv-2", .storage_class = "local", .host = "node-a"}));
  env.add(makePV({.name = "pv-3", .storage_class = "local", .host = "node-b"}));
  env.add(makeClaim({.name = "one", .storage_class = "local"}));
  env.add(makeClaim({.name = "two", .storage_class = "local"}));
  auto plugin = env.build();
  // The same claim twice in the pod binds once.
  Cycle c = runCycle(*plugin, env, podWithClaims("p", {"one", "two", "one"}));
  REQUIRE(c.pre.ok());
  CHECK(c.filter.at("node-a").ok());
  const std::string one = chosenVolume(c, "node-a", "one");
  const std::string two = chosenVolume(c, "node-a", "two");
  CHECK(one == "pv-1");
  CHECK(two == "pv-2");
  // node-b has one volume for two claims.
  CHECK(c.filter.at("node-b").message() == kBindConflict);
}

TEST_CASE("volumebinding: a class that provisions, where its topology allows",
          "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "zonal",
                     .provisioner = "ebs.csi.aws.com",
                     .topology_key = "topology.kubernetes.io/zone",
                     .topology_values = {"a"}}));
  env.add(makeClass({.name = "anywhere", .provisioner = "ebs.csi.aws.com"}));
  env.add(makeClaim({.name = "z", .storage_class = "zonal", .request = "3Gi"}));
  env.add(makeClaim({.name = "any", .storage_class = "anywhere"}));
  // A free volume of the class that fits is still preferred over provisioning.
  env.add(makePV({.name = "pv-any", .storage_class = "anywhere", .host = "node-b"}));
  auto plugin = env.build();

  Cycle c = runCycle(*plugin, env, podWithClaims("p", {"z", "any"}));
  REQUIRE(c.pre.ok());
  CHECK(c.filter.at("node-a").ok());
  CHECK(provisioned(c, "node-a", "z"));
  CHECK(provisioned(c, "node-a", "any"));
  CHECK(c.filter.at("node-b").message() == kBindConflict);

  Cycle d = runCycle(*plugin, env, podWithClaims("q", {"any"}));
  CHECK(provisioned(d, "node-a", "any"));
  CHECK(chosenVolume(d, "node-b", "any") == "pv-any");
  CHECK_FALSE(provisioned(d, "node-b", "any"));
}

TEST_CASE("volumebinding: a claim being provisioned for a node fits that node only",
          "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "dyn", .provisioner = "ebs.csi.aws.com"}));
  env.add(makeClaim({.name = "data", .storage_class = "dyn", .selected_node = "node-b"}));
  auto plugin = env.build();
  Cycle c = runCycle(*plugin, env, podWithClaims("p", {"data"}));
  REQUIRE(c.pre.ok());
  CHECK(c.filter.at("node-a").message() == kBindConflict);
  CHECK(c.filter.at("node-b").ok());
  CHECK(provisioned(c, "node-b", "data"));
}

TEST_CASE("volumebinding: both reasons, node conflict first", "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "local"}));
  env.add(makePV({.name = "pv-a",
                  .storage_class = "local",
                  .phase = "Bound",
                  .host = "node-a",
                  .claim = "bound",
                  .claim_uid = "uid-bound"}));
  env.add(makeClaim(
      {.name = "bound", .storage_class = "local", .volume_name = "pv-a", .bind_completed = true}));
  env.add(makeClaim({.name = "free", .storage_class = "local"}));
  auto plugin = env.build();
  Cycle c = runCycle(*plugin, env, podWithClaims("p", {"bound", "free"}));
  REQUIRE(c.pre.ok());
  const Status& b = c.filter.at("node-b");
  CHECK(b.code() == Code::kUnschedulableAndUnresolvable);
  REQUIRE(b.reasons().size() == 2);
  CHECK(b.reasons()[0] == kNodeConflict);
  CHECK(b.reasons()[1] == kBindConflict);
  CHECK(c.filter.at("node-a").reasons() == std::vector<std::string>{kBindConflict});
}

TEST_CASE("volumebinding: volume events bring unschedulable pods back",
          "[scheduler][volumebinding]") {
  Env env;
  auto plugin = env.build();
  env.add(makePV({.name = "pv", .storage_class = "local"}));
  CHECK(env.handle.requeues == 1);
  env.add(makePV({.name = "pv", .storage_class = "local", .resource_version = "2"}));
  CHECK(env.handle.requeues == 2);
  env.pvs().remove("pv");
  CHECK(env.handle.requeues == 2);
  env.add(makeClaim({.name = "data", .storage_class = "local"}));
  CHECK(env.handle.requeues == 3);
  // 1.20 moves pods on a class added for first consumers only.
  env.add(makeClass({.name = "fast", .provisioner = "x", .wait_for_first_consumer = false}));
  CHECK(env.handle.requeues == 3);
  env.add(makeClass({.name = "local"}));
  CHECK(env.handle.requeues == 4);
  CSINode csi;
  csi.name = "node-a";
  env.csiNodes().set("node-a", std::make_shared<const CSINode>(csi));
  CHECK(env.handle.requeues == 5);
}

}  // namespace
}  // namespace vb_test
