// VolumeBinding's PreBind: the merge patches it sends (PV claimRef, claim selected-node, each
// with its resourceVersion as precondition) and its wait, answered by informer events, the
// bind timeout or an error when the binding is undone.
#include <catch2/catch.hpp>

#include <optional>

#include "fixtures.h"

namespace vb_test {
namespace {

struct Bound {
  Env env;
  std::unique_ptr<vb::VolumeBinding> plugin;
  std::shared_ptr<const PodInfo> pod;
  Cycle cycle;
  std::optional<Status> answer;
  int answers = 0;

  // Runs the pod's cycle to Reserve on `node` and starts PreBind.
  void start(const std::string& node) {
    plugin = env.build(30);
    cycle = runCycle(*plugin, env, *pod);
    REQUIRE(cycle.filter.at(node).ok());
    REQUIRE(plugin->reserve(*cycle.state, *pod, node).ok());
    plugin->preBind(cycle.state, pod, node, [this](Status s) {
      ++answers;
      answer = std::move(s);
    });
  }
};

// A volume on node-a for claim "data".
void staticBinding(Bound& b) {
  b.env.setNodes(twoNodes());
  b.env.add(makeClass({.name = "local"}));
  b.env.add(makePV(
      {.name = "pv-a", .storage_class = "local", .host = "node-a", .resource_version = "10"}));
  b.env.add(makeClaim({.name = "data", .storage_class = "local", .resource_version = "20"}));
  b.pod = std::make_shared<const PodInfo>(podWithClaims("p", {"data"}));
}

TEST_CASE("volumebinding: PreBind binds the chosen volume and waits for the PV controller",
          "[scheduler][volumebinding]") {
  Bound b;
  staticBinding(b);
  b.start("node-a");
  REQUIRE(b.env.cluster.patches.size() == 1);
  const auto& patch = b.env.cluster.patches[0];
  CHECK(patch.resource == "persistentvolumes");
  CHECK(patch.name == "pv-a");
  CHECK(patch.namespace_.empty());
  CHECK(patch.body == json::parse(R"({
      "metadata": {"resourceVersion": "10",
                   "annotations": {"pv.kubernetes.io/bound-by-controller": "yes"}},
      "spec": {"claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                            "namespace": "default", "name": "data", "uid": "uid-data",
                            "resourceVersion": "20"}}})"));
  REQUIRE(b.env.cluster.timers.size() == 1);
  CHECK(b.env.cluster.timers[0].first == std::chrono::seconds(30));
  CHECK_FALSE(b.answer);
  CHECK(b.plugin->binder().inFlight() == 1);

  // The claim bound before the informer has the written volume: still waiting.
  b.env.add(makeClaim({.name = "data",
                       .storage_class = "local",
                       .volume_name = "pv-a",
                       .bind_completed = true,
                       .resource_version = "22"}));
  CHECK_FALSE(b.answer);
  b.env.add(makePV({.name = "pv-a",
                    .storage_class = "local",
                    .phase = "Bound",
                    .host = "node-a",
                    .claim = "data",
                    .claim_uid = "uid-data",
                    .resource_version = "11"}));
  REQUIRE(b.answer);
  CHECK(b.answer->ok());
  CHECK(b.plugin->binder().inFlight() == 0);

  // The timer firing later answers nothing more.
  b.env.cluster.timers[0].second();
  CHECK(b.answers == 1);
}

TEST_CASE("volumebinding: PreBind fails when the binding is undone", "[scheduler][volumebinding]") {
  Bound b;
  staticBinding(b);
  b.start("node-a");
  REQUIRE_FALSE(b.answer);
  SECTION("claimRef reset") {
    b.env.add(makePV(
        {.name = "pv-a", .storage_class = "local", .host = "node-a", .resource_version = "12"}));
    REQUIRE(b.answer);
    CHECK(b.answer->code() == Code::kError);
    CHECK(b.answer->message() == R"(binding volumes: ClaimRef got reset for pv "pv-a")");
  }
  SECTION("volume deleted") {
    b.env.pvs().remove("pv-a");
    REQUIRE(b.answer);
    CHECK(b.answer->message() ==
          R"(binding volumes: failed to check binding: could not find v1.PersistentVolume "pv-a")");
  }
  SECTION("claim deleted") {
    b.env.claims().remove("default/data");
    REQUIRE(b.answer);
    CHECK(b.answer->message() ==
          "binding volumes: failed to check binding: could not find "
          R"(v1.PersistentVolumeClaim "default/data")");
  }
  SECTION("timeout") {
    REQUIRE(b.env.cluster.timers.size() == 1);
    b.env.cluster.timers[0].second();
    REQUIRE(b.answer);
    CHECK(b.answer->code() == Code::kError);
    CHECK(b.answer->message() == std::string(vb::kBindTimeoutMessage));
    // A later event finds nothing waiting.
    b.env.add(makePV({.name = "pv-a", .storage_class = "local", .resource_version = "12"}));
    CHECK(b.answers == 1);
  }
  CHECK(b.plugin->binder().inFlight() == 0);
}

TEST_CASE("volumebinding: a refused write fails PreBind and gives the volume back",
          "[scheduler][volumebinding]") {
  Bound b;
  staticBinding(b);
  b.env.cluster.patch_error =
      R"(patching persistentvolumes /pv-a: Operation cannot be fulfilled on persistentvolumes "pv-a")";
  b.start("node-a");
  REQUIRE(b.answer);
  CHECK(b.answer->code() == Code::kError);
  CHECK(b.answer->message() == b.env.cluster.patch_error);
  CHECK(b.env.cluster.timers.empty());
  CHECK_FALSE(b.plugin->cache().volume("pv-a")->pv->claim_ref);
  CHECK(b.plugin->binder().inFlight() == 0);
}

TEST_CASE("volumebinding: PreBind asks for provisioning on the node and waits for it",
          "[scheduler][volumebinding]") {
  Bound b;
  b.env.setNodes(twoNodes());
  b.env.add(makeClass({.name = "dyn",
                       .provisioner = "ebs.csi.aws.com",
                       .topology_key = "topology.kubernetes.io/zone",
                       .topology_values = {"b"}}));
  b.env.add(makeClaim({.name = "data", .storage_class = "dyn", .resource_version = "4"}));
  b.pod = std::make_shared<const PodInfo>(podWithClaims("p", {"data"}));
  b.start("node-b");
  REQUIRE(b.env.cluster.patches.size() == 1);
  const auto& patch = b.env.cluster.patches[0];
  CHECK(patch.resource == "persistentvolumeclaims");
  CHECK(patch.namespace_ == "default");
  CHECK(patch.name == "data");
  CHECK(patch.body == json::parse(R"({"metadata": {"resourceVersion": "4",
      "annotations": {"volume.kubernetes.io/selected-node": "node-b"}}})"));
  CHECK_FALSE(b.answer);

  SECTION("provisioned and bound") {
    b.env.add(makeClaim({.name = "data",
                         .storage_class = "dyn",
                         .selected_node = "node-b",
                         .resource_version = "5"}));
    CHECK_FALSE(b.answer);
    b.env.add(makePV({.name = "pvc-123",
                      .storage_class = "dyn",
                      .phase = "Bound",
                      .claim = "data",
                      .claim_uid = "uid-data"}));
    b.env.add(makeClaim({.name = "data",
                         .storage_class = "dyn",
                         .volume_name = "pvc-123",
                         .bind_completed = true,
                         .selected_node = "node-b",
                         .resource_version = "6"}));
    REQUIRE(b.answer);
    CHECK(b.answer->ok());
  }
  SECTION("provisioner gave up") {
    b.env.add(makeClaim({.name = "data", .storage_class = "dyn", .resource_version = "5"}));
    REQUIRE(b.answer);
    CHECK(b.answer->message() == R"(binding volumes: provisioning failed for PVC "data")");
  }
  SECTION("provisioned where the node cannot reach it") {
    b.env.add(makePV({.name = "pvc-123",
                      .storage_class = "dyn",
                      .phase = "Bound",
                      .host = "node-a",
                      .claim = "data",
                      .claim_uid = "uid-data"}));
    b.env.add(makeClaim({.name = "data",
                         .storage_class = "dyn",
                         .volume_name = "pvc-123",
                         .bind_completed = true,
                         .selected_node = "node-b",
                         .resource_version = "6"}));
    REQUIRE(b.answer);
    CHECK(b.answer->message() ==
          "binding volumes: pv \"pvc-123\" node affinity doesn't match "
          "node \"node-b\": no matching NodeSelectorTerms");
  }
}

TEST_CASE("volumebinding: a volume pre-bound by the user is bound without bound-by-controller",
          "[scheduler][volumebinding]") {
  Bound b;
  b.env.setNodes(twoNodes());
  b.env.add(makeClass({.name = "local"}));
  b.env.add(makePV(
      {.name = "pv-mine", .storage_class = "local", .claim = "data", .resource_version = "3"}));
  b.env.add(makeClaim({.name = "data", .storage_class = "local", .resource_version = "8"}));
  b.pod = std::make_shared<const PodInfo>(podWithClaims("p", {"data"}));
  b.start("node-a");
  REQUIRE(b.env.cluster.patches.size() == 1);
  const auto& body = b.env.cluster.patches[0].body.as_object();
  CHECK_FALSE(body.at("metadata").as_object().contains("annotations"));
  CHECK(body.at("spec").at("claimRef").at("uid") == "uid-data");
}

TEST_CASE("volumebinding: without a timeout the wait has no timer", "[scheduler][volumebinding]") {
  Bound b;
  staticBinding(b);
  b.plugin = b.env.build(0);
  b.cycle = runCycle(*b.plugin, b.env, *b.pod);
  REQUIRE(b.plugin->reserve(*b.cycle.state, *b.pod, "node-a").ok());
  b.plugin->preBind(b.cycle.state, b.pod, "node-a", [&](Status s) { b.answer = std::move(s); });
  CHECK(b.env.cluster.timers.empty());
  CHECK_FALSE(b.answer);
}

}  // namespace
}  // namespace vb_test
