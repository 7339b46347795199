// VolumeBinding's test fixtures: PVs, claims and classes built as API JSON and decoded (so the
// projections are the informers' own), a ClusterView that records merge patches and holds timers
// for the test to fire, and a handle counting requeues.
#pragma once

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "catch_expected.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "koord/kube/rest_client.h"
#include "plugins/upstream/storage/storage_informers.h"
#include "plugins/upstream/storage/storage_objects.h"
#include "plugins/upstream/volumebinding/volume_binding.h"
#include "scheduler/builders.h"
#include "scheduler/fake_cluster.h"
#include "scheduler/fake_handle.h"

namespace vb_test {

namespace json = boost::json;
namespace storage = koord::roles::scheduler::storage;
namespace vb = koord::roles::scheduler::upstream::volumebinding;
using koord::roles::scheduler::Code;
using koord::roles::scheduler::CycleState;
using koord::roles::scheduler::Node;
using koord::roles::scheduler::NodeInfo;
using koord::roles::scheduler::PodInfo;
using koord::roles::scheduler::Status;
using storage::CSINode;
using storage::PersistentVolume;
using storage::PersistentVolumeClaim;
using storage::StorageClass;

struct PVSpec {
  std::string name{};
  std::string storage_class{};
  std::string capacity = "1Gi";
  std::string phase = "Available";
  std::vector<std::string> modes = {"ReadWriteOnce"};
  /// Non-empty: required node affinity kubernetes.io/hostname In [host].
  std::string host{};
  /// Non-empty: claimRef to default/<claim> (with claim_uid when set).
  std::string claim{};
  std::string claim_uid{};
  std::string resource_version = "1";
  std::map<std::string, std::string> labels{};
  std::string volume_mode{};
  bool terminating = false;
};

inline std::shared_ptr<const PersistentVolume> makePV(const PVSpec& s) {
  json::object meta{
      {"name", s.name}, {"uid", "uid-" + s.name}, {"resourceVersion", s.resource_version}};
  if (!s.labels.empty()) {
    json::object labels;
    for (const auto& [k, v] : s.labels)
      labels[k] = v;
    meta["labels"] = std::move(labels);
  }
  if (s.terminating)
    meta["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  json::array modes;
  for (const auto& m : s.modes)
    modes.emplace_back(m);
  json::object spec{{"capacity", {{"storage", s.capacity}}},
                    {"accessModes", std::move(modes)},
                    {"storageClassName", s.storage_class},
                    {"local", {{"path", "/mnt/" + s.name}}}};
  if (!s.volume_mode.empty())
    spec["volumeMode"] = s.volume_mode;
  if (!s.host.empty()) {
    spec["nodeAffinity"] = json::parse(R"({"required":{"nodeSelectorTerms":[{"matchExpressions":[
        {"key":"kubernetes.io/hostname","operator":"In","values":[")" +
                                       s.host + R"("]}]}]}})");
  }
  if (!s.claim.empty()) {
    json::object ref{{"namespace", "default"}, {"name", s.claim}};
    if (!s.claim_uid.empty())
      ref["uid"] = s.claim_uid;
    spec["claimRef"] = std::move(ref);
  }
  json::value v = json::object{
      {"metadata", std::move(meta)}, {"spec", std::move(spec)}, {"status", {{"phase", s.phase}}}};
  auto pv = storage::decodePersistentVolume(v);
  REQUIRE(pv);
  return std::make_shared<const PersistentVolume>(std::move(*pv));
}

struct ClaimSpec {
  std::string name{};
  std::string storage_class{};
  std::string request = "1Gi";
  std::vector<std::string> modes = {"ReadWriteOnce"};
  std::string volume_name{};
  /// pv.kubernetes.io/bind-completed.
  bool bind_completed = false;
  std::optional<std::string> selected_node{};
  std::string resource_version = "1";
  /// Non-empty: spec.selector.matchLabels.
  std::map<std::string, std::string> selector{};
  std::string controller_uid{};
  bool terminating = false;
  std::string volume_mode{};
};

inline std::shared_ptr<const PersistentVolumeClaim> makeClaim(const ClaimSpec& s) {
  json::object meta{{"name", s.name},
                    {"namespace", "default"},
                    {"uid", "uid-" + s.name},
                    {"resourceVersion", s.resource_version}};
  json::object annotations;
  if (s.bind_completed)
    annotations[storage::kAnnBindCompleted] = "yes";
  if (s.selected_node)
    annotations[storage::kAnnSelectedNode] = *s.selected_node;
  if (!annotations.empty())
    meta["annotations"] = std::move(annotations);
  if (s.terminating)
    meta["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  if (!s.controller_uid.empty()) {
    meta["ownerReferences"] = json::array{json::object{{"apiVersion", "v1"},
                                                       {"kind", "Pod"},
                                                       {"name", "owner"},
                                                       {"uid", s.controller_uid},
                                                       {"controller", true}}};
  }
  json::array modes;
  for (const auto& m : s.modes)
    modes.emplace_back(m);
  json::object spec{{"accessModes", std::move(modes)},
                    {"resources", {{"requests", {{"storage", s.request}}}}}};
  if (!s.storage_class.empty())
    spec["storageClassName"] = s.storage_class;
  if (!s.volume_name.empty())
    spec["volumeName"] = s.volume_name;
  if (!s.volume_mode.empty())
    spec["volumeMode"] = s.volume_mode;
  if (!s.selector.empty()) {
    json::object labels;
    for (const auto& [k, v] : s.selector)
      labels[k] = v;
    spec["selector"] = {{"matchLabels", std::move(labels)}};
  }
  json::value v = json::object{{"metadata", std::move(meta)}, {"spec", std::move(spec)}};
  auto claim = storage::decodePersistentVolumeClaim(v);
  REQUIRE(claim);
  return std::make_shared<const PersistentVolumeClaim>(std::move(*claim));
}

struct ClassSpec {
  std::string name{};
  std::string provisioner = "kubernetes.io/no-provisioner";
  bool wait_for_first_consumer = true;
  /// Non-empty: allowedTopologies [{key In values}].
  std::string topology_key{};
  std::vector<std::string> topology_values{};
};

inline std::shared_ptr<const StorageClass> makeClass(const ClassSpec& s) {
  json::object o{
      {"metadata", {{"name", s.name}}},
      {"provisioner", s.provisioner},
      {"volumeBindingMode", s.wait_for_first_consumer ? "WaitForFirstConsumer" : "Immediate"}};
  if (!s.topology_key.empty()) {
    json::array values;
    for (const auto& v : s.topology_values)
      values.emplace_back(v);
    o["allowedTopologies"] = json::array{json::object{
        {"matchLabelExpressions",
         json::array{json::object{{"key", s.topology_key}, {"values", std::move(values)}}}}}};
  }
  auto sc = storage::decodeStorageClass(json::value(std::move(o)));
  REQUIRE(sc);
  return std::make_shared<const StorageClass>(std::move(*sc));
}

/// A pod in "default" whose volumes name these claims; `ephemeral` volumes instead get the
/// claims "<pod>-<volume>".
inline PodInfo podWithClaims(const std::string& name, const std::vector<std::string>& claims,
                             const std::vector<std::string>& ephemeral = {}) {
  json::array volumes;
  for (std::size_t i = 0; i < claims.size(); ++i) {
    volumes.push_back(json::object{{"name", "v" + std::to_string(i)},
                                   {"persistentVolumeClaim", {{"claimName", claims[i]}}}});
  }
  for (const auto& e : ephemeral)
    volumes.push_back(json::object{{"name", e}, {"ephemeral", json::object{}}});
  volumes.push_back(json::object{{"name", "scratch"}, {"emptyDir", json::object{}}});
  json::value v = json::object{
      {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
      {"spec",
       {{"volumes", std::move(volumes)},
        {"containers", json::array{json::object{{"name", "c"}, {"image", "busybox"}}}}}}};
  auto pod = koord::roles::scheduler::decodePodInfo(v);
  REQUIRE(pod);
  return std::move(*pod);
}

/// A ClusterView recording merge patches (answered with success unless patch_error is set)
/// and holding runAfter's callbacks for the test to fire.
class VolumeCluster final : public koord::roles::scheduler::testkit::FakeCluster {
 public:
  struct Patch {
    std::string resource;
    std::string namespace_;
    std::string name;
    json::value body;
  };
  void mergePatch(const koord::kube::ResourceRef& ref, json::value patch,
                  koord::roles::scheduler::ApiCallback done) const override {
    patches.push_back({ref.resource, ref.namespace_, ref.name, std::move(patch)});
    if (patch_error.empty())
      done({});
    else
      done(koord::kube::makeKubeError(patch_error));
  }
  bool runAfter(std::chrono::milliseconds delay, std::function<void()> fn) const override {
    timers.emplace_back(delay, std::move(fn));
    return true;
  }

  std::string patch_error;
  mutable std::vector<Patch> patches;
  mutable std::vector<std::pair<std::chrono::milliseconds, std::function<void()>>> timers;
};

class CountingHandle final : public koord::roles::scheduler::testkit::FakeHandle {
 public:
  using FakeHandle::FakeHandle;
  void requeueUnschedulable() override { ++requeues; }
  int requeues = 0;
};

/// The cluster, its sources and a handle; add objects and nodes, then build the plugin.
struct Env {
  Env() {
    pvs();
    claims();
    classes();
    csiNodes();
  }
  koord::roles::scheduler::testkit::MapObjectSource<PersistentVolume>& pvs() {
    return cluster.declare<PersistentVolume>(storage::kPersistentVolumes);
  }
  koord::roles::scheduler::testkit::MapObjectSource<PersistentVolumeClaim>& claims() {
    return cluster.declare<PersistentVolumeClaim>(storage::kPersistentVolumeClaims);
  }
  koord::roles::scheduler::testkit::MapObjectSource<StorageClass>& classes() {
    return cluster.declare<StorageClass>(storage::kStorageClasses);
  }
  koord::roles::scheduler::testkit::MapObjectSource<CSINode>& csiNodes() {
    return cluster.declare<CSINode>(storage::kCSINodes);
  }
  void add(const std::shared_ptr<const PersistentVolume>& pv) { pvs().set(pv->name, pv); }
  void add(const std::shared_ptr<const PersistentVolumeClaim>& c) {
    claims().set(c->namespace_ + "/" + c->name, c);
  }
  void add(const std::shared_ptr<const StorageClass>& sc) { classes().set(sc->name, sc); }
  void setNodes(const std::vector<std::shared_ptr<const Node>>& nodes) {
    handle.setSnapshot(koord::roles::scheduler::testkit::snapshotOf(nodes));
  }
  std::unique_ptr<vb::VolumeBinding> build(std::int64_t timeout_seconds = 600) {
    auto args = std::make_shared<vb::VolumeBindingArgs>();
    args->bind_timeout_seconds = timeout_seconds;
    return std::make_unique<vb::VolumeBinding>(std::move(args), handle);
  }

  VolumeCluster cluster;
  CountingHandle handle{cluster};
};

/// Nodes node-a (zone a) and node-b (zone b), with their hostname labels.
inline std::vector<std::shared_ptr<const Node>> twoNodes() {
  using koord::roles::scheduler::testkit::makeNode;
  return {makeNode("node-a",
                   {{"kubernetes.io/hostname", "node-a"}, {"topology.kubernetes.io/zone", "a"}}),
          makeNode("node-b",
                   {{"kubernetes.io/hostname", "node-b"}, {"topology.kubernetes.io/zone", "b"}})};
}

/// PreFilter, then Filter on every node of the handle's snapshot (unless PreFilter refused
/// the pod or answered Skip).
struct Cycle {
  Status pre;
  std::map<std::string, Status> filter;
  std::shared_ptr<CycleState> state = std::make_shared<CycleState>();
};

inline Cycle runCycle(vb::VolumeBinding& plugin, Env& env, const PodInfo& pod) {
  Cycle c;
  c.pre = plugin.preFilter(*c.state, pod);
  if (!c.pre.ok())
    return c;
  for (const NodeInfo* n : env.handle.nodes())
    c.filter.emplace(n->node->name, plugin.filter(*c.state, pod, *n));
  return c;
}

/// The volume Filter chose for `claim` on `node`; "" when none was.
inline std::string chosenVolume(const Cycle& c, const std::string& node, const std::string& claim) {
  const auto* data = c.state->read<vb::VolumeBindingState>("VolumeBinding");
  if (data == nullptr)
    return "";
  std::lock_guard lock(data->shared->mu);
  auto it = data->shared->by_node.find(node);
  if (it == data->shared->by_node.end())
    return "";
  for (const auto& b : it->second->static_bindings) {
    if (b.claim->name == claim)
      return b.volume.pv->name;
  }
  return "";
}

/// Whether Filter chose to provision `claim` on `node`.
inline bool provisioned(const Cycle& c, const std::string& node, const std::string& claim) {
  const auto* data = c.state->read<vb::VolumeBindingState>("VolumeBinding");
  if (data == nullptr)
    return false;
  std::lock_guard lock(data->shared->mu);
  auto it = data->shared->by_node.find(node);
  if (it == data->shared->by_node.end())
    return false;
  for (const auto& p : it->second->dynamic_provisions) {
    if (p->name == claim)
      return true;
  }
  return false;
}

}  // namespace vb_test
