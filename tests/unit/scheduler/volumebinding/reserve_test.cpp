// VolumeBinding's Reserve and Unreserve over its assume cache: what one pod's cycle chose is
// seen by the next cycles before the API has it, and is given back when the pod is not bound.
#include <catch2/catch.hpp>

#include "fixtures.h"

namespace vb_test {
namespace {

TEST_CASE("volumebinding: a reserved volume is not offered to the next pod until unreserved",
          "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "local"}));
  env.add(makePV({.name = "pv-a", .storage_class = "local", .host = "node-a"}));
  env.add(makeClaim({.name = "first", .storage_class = "local"}));
  env.add(makeClaim({.name = "second", .storage_class = "local"}));
  auto plugin = env.build();

  PodInfo p1 = podWithClaims("p1", {"first"});
  Cycle c1 = runCycle(*plugin, env, p1);
  REQUIRE(c1.filter.at("node-a").ok());
  REQUIRE(plugin->reserve(*c1.state, p1, "node-a").ok());
  auto assumed = plugin->cache().volume("pv-a");
  REQUIRE(assumed);
  REQUIRE(assumed->pv->claim_ref);
  CHECK(assumed->pv->claim_ref->name == "first");
  CHECK(assumed->pv->claim_ref->uid == "uid-first");
  CHECK(assumed->pv->annotations.at(std::string(storage::kAnnBoundByController)) == "yes");
  // The informer still has the volume free.
  CHECK_FALSE(plugin->cache().apiVolume("pv-a")->claim_ref);

  PodInfo p2 = podWithClaims("p2", {"second"});
  Cycle c2 = runCycle(*plugin, env, p2);
  CHECK(c2.filter.at("node-a").message() == std::string(vb::kReasonBindConflict));

  plugin->unreserve(*c1.state, p1, "node-a");
  plugin->unreserve(*c1.state, p1, "node-a");  // idempotent
  CHECK_FALSE(plugin->cache().volume("pv-a")->pv->claim_ref);
  Cycle c3 = runCycle(*plugin, env, p2);
  CHECK(c3.filter.at("node-a").ok());
  CHECK(chosenVolume(c3, "node-a", "second") == "pv-a");
}

TEST_CASE("volumebinding: the informer's newer object replaces an assumption, an older does not",
          "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "local"}));
  env.add(makePV({.name = "pv-a", .storage_class = "local", .resource_version = "5"}));
  env.add(makeClaim({.name = "data", .storage_class = "local"}));
  auto plugin = env.build();
  PodInfo pod = podWithClaims("p", {"data"});
  Cycle c = runCycle(*plugin, env, pod);
  REQUIRE(plugin->reserve(*c.state, pod, "node-a").ok());

  // A resync of the same version keeps the assumption.
  env.add(makePV({.name = "pv-a", .storage_class = "local", .resource_version = "5"}));
  CHECK(plugin->cache().volume("pv-a")->pv->claim_ref);
  // The written object arrives.
  env.add(makePV({.name = "pv-a",
                  .storage_class = "local",
                  .phase = "Bound",
                  .claim = "data",
                  .claim_uid = "uid-data",
                  .resource_version = "6"}));
  CHECK(plugin->cache().volume("pv-a")->pv->phase == "Bound");
  CHECK(plugin->cache().volume("pv-a")->pv == plugin->cache().apiVolume("pv-a"));
  // Unreserve now has nothing of its own to undo.
  plugin->unreserve(*c.state, pod, "node-a");
  CHECK(plugin->cache().volume("pv-a")->pv->claim_ref);
}

TEST_CASE("volumebinding: Reserve fails on a volume that changed since PreFilter",
          "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "local"}));
  env.add(makePV({.name = "pv-a", .storage_class = "local", .resource_version = "5"}));
  env.add(makeClaim({.name = "data", .storage_class = "local"}));
  auto plugin = env.build();
  PodInfo pod = podWithClaims("p", {"data"});
  Cycle c = runCycle(*plugin, env, pod);
  env.add(makePV(
      {.name = "pv-a", .storage_class = "local", .capacity = "2Gi", .resource_version = "7"}));
  Status s = plugin->reserve(*c.state, pod, "node-a");
  CHECK(s.code() == Code::kError);
  CHECK(s.message() == R"(v1.PersistentVolume "pv-a" is out of sync (stored: 7, assume: 5))");
  CHECK_FALSE(plugin->cache().volume("pv-a")->pv->claim_ref);
}

TEST_CASE("volumebinding: provisioning is assumed on the claim, for pods sharing it",
          "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "dyn", .provisioner = "ebs.csi.aws.com"}));
  env.add(makeClaim({.name = "shared", .storage_class = "dyn", .resource_version = "3"}));
  auto plugin = env.build();

  PodInfo p1 = podWithClaims("p1", {"shared"});
  Cycle c1 = runCycle(*plugin, env, p1);
  REQUIRE(c1.filter.at("node-b").ok());
  REQUIRE(plugin->reserve(*c1.state, p1, "node-b").ok());
  auto claim = plugin->cache().claim("default/shared");
  CHECK(claim->annotation(storage::kAnnSelectedNode) == "node-b");
  CHECK(plugin->cache().apiClaim("default/shared")->annotation(storage::kAnnSelectedNode).empty());

  PodInfo p2 = podWithClaims("p2", {"shared"});
  Cycle c2 = runCycle(*plugin, env, p2);
  CHECK(c2.filter.at("node-a").message() == std::string(vb::kReasonBindConflict));
  CHECK(c2.filter.at("node-b").ok());

  plugin->unreserve(*c1.state, p1, "node-b");
  CHECK(plugin->cache().claim("default/shared")->annotation(storage::kAnnSelectedNode).empty());
  Cycle c3 = runCycle(*plugin, env, p2);
  CHECK(c3.filter.at("node-a").ok());
}

TEST_CASE("volumebinding: a claim bound meanwhile leaves nothing to reserve",
          "[scheduler][volumebinding]") {
  Env env;
  env.setNodes(twoNodes());
  env.add(makeClass({.name = "local"}));
  env.add(makePV({.name = "pv-a", .storage_class = "local"}));
  env.add(makeClaim({.name = "data", .storage_class = "local"}));
  auto plugin = env.build();
  PodInfo pod = podWithClaims("p", {"data"});
  Cycle c = runCycle(*plugin, env, pod);
  env.add(makeClaim({.name = "data",
                     .storage_class = "local",
                     .volume_name = "pv-a",
                     .bind_completed = true,
                     .resource_version = "2"}));
  CHECK(plugin->reserve(*c.state, pod, "node-a").ok());
  CHECK_FALSE(plugin->cache().volume("pv-a")->pv->claim_ref);
  bool answered = false;
  plugin->preBind(c.state, std::make_shared<const PodInfo>(pod), "node-a", [&](Status s) {
    answered = true;
    CHECK(s.ok());
  });
  CHECK(answered);
  CHECK(env.cluster.patches.empty());
}

}  // namespace
}  // namespace vb_test
