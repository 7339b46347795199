// Builders for the volume filters' table tests: pods with volumes, nodes with pods, and the
// storage objects (claims, volumes, classes, CSINodes) served through a FakeCluster.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/node_info.h"
#include "framework/plugin.h"
#include "framework/pod_info.h"
#include "plugins/upstream/storage/storage_informers.h"
#include "plugins/upstream/storage/storage_objects.h"
#include "scheduler/fake_cluster.h"
#include "scheduler/fake_handle.h"

namespace koord::roles::scheduler::volumetest {

namespace st = storage;

inline PodVolume inlineVolume(VolumeSourceKind kind, std::string id, bool read_only = false) {
  PodVolume v;
  v.name = "vol-" + id;
  v.kind = kind;
  v.id = std::move(id);
  v.read_only = read_only;
  return v;
}
inline PodVolume claimVolume(std::string claim) {
  return inlineVolume(VolumeSourceKind::kPersistentVolumeClaim, std::move(claim));
}
inline PodVolume rbdVolume(std::vector<std::string> monitors, std::string pool, std::string image,
                           bool read_only = false) {
  PodVolume v = inlineVolume(VolumeSourceKind::kRBD, std::move(image), read_only);
  v.monitors = std::move(monitors);
  v.pool = std::move(pool);
  return v;
}

inline PodInfo podWith(std::vector<PodVolume> volumes, std::string name = "pod",
                       std::string namespace_ = "default") {
  PodInfo p;
  p.namespace_ = std::move(namespace_);
  p.name = std::move(name);
  p.uid = p.namespace_ + "/" + p.name;
  p.volumes = std::move(volumes);
  return p;
}

/// A node with `labels` and allocatable scalars, carrying `pods` (bound there).
inline NodeInfo nodeWith(std::vector<PodInfo> pods = {}, kube::Labels labels = {},
                         std::vector<std::pair<std::string, std::int64_t>> allocatable = {},
                         std::string name = "node-1") {
  auto node = std::make_shared<Node>();
  node->name = std::move(name);
  node->uid = node->name;
  node->labels = std::move(labels);
  for (const auto& [key, value] : allocatable)
    node->allocatable.setScalar(key, value);
  NodeInfo info;
  info.node = node;
  int i = 0;
  for (auto& p : pods) {
    if (p.name == "pod")
      p.name = "existing-" + std::to_string(i);
    p.uid = node->name + "/" + std::to_string(i++);
    p.node_name = node->name;
    info.addPod(std::make_shared<const PodInfo>(std::move(p)));
  }
  return info;
}

inline std::shared_ptr<const st::PersistentVolume> makePV(std::string name, VolumeSourceKind kind,
                                                          std::string id, std::string handle = {},
                                                          kube::Labels labels = {}) {
  auto pv = std::make_shared<st::PersistentVolume>();
  pv->name = std::move(name);
  pv->kind = kind;
  pv->id = std::move(id);
  pv->volume_handle = std::move(handle);
  pv->labels = std::move(labels);
  return pv;
}

/// The storage objects a test serves, in a FakeCluster the plugin is built over.
class StorageFixture {
 public:
  StorageFixture() {
    // Declared up front: plugins resolve their sources once, when built.
    cluster.declare<st::PersistentVolumeClaim>(st::kPersistentVolumeClaims);
    cluster.declare<st::PersistentVolume>(st::kPersistentVolumes);
    cluster.declare<st::StorageClass>(st::kStorageClasses);
    cluster.declare<st::CSINode>(st::kCSINodes);
  }

  /// A claim in `namespace_`, bound to `volume` ("" for unbound), of class `storage_class`.
  void claim(std::string name, std::string volume, std::string storage_class = {},
             std::string namespace_ = "default") {
    auto c = std::make_shared<st::PersistentVolumeClaim>();
    c->namespace_ = std::move(namespace_);
    c->name = std::move(name);
    c->volume_name = std::move(volume);
    c->storage_class = std::move(storage_class);
    cluster.setObject<st::PersistentVolumeClaim>(st::kPersistentVolumeClaims, c->key(), c);
  }
  void volume(std::shared_ptr<const st::PersistentVolume> pv) {
    cluster.setObject<st::PersistentVolume>(st::kPersistentVolumes, pv->name, pv);
  }
  void storageClass(std::string name, std::string provisioner,
                    st::VolumeBindingMode mode = st::VolumeBindingMode::kImmediate) {
    auto sc = std::make_shared<st::StorageClass>();
    sc->name = name;
    sc->provisioner = std::move(provisioner);
    sc->binding_mode = mode;
    cluster.setObject<st::StorageClass>(st::kStorageClasses, std::move(name), sc);
  }
  /// The CSINode of `node`: drivers with their allocatable counts (nullopt: none), and the
  /// in-tree plugins it migrated.
  void csiNode(std::string node,
               std::vector<std::pair<std::string, std::optional<std::int32_t>>> drivers,
               std::vector<std::string> migrated = {}) {
    auto n = std::make_shared<st::CSINode>();
    n->name = node;
    for (auto& [driver, count] : drivers) {
      st::CSINodeDriver d;
      d.name = driver;
      d.allocatable_count = count;
      n->drivers.push_back(std::move(d));
    }
    n->migrated_plugins = std::move(migrated);
    cluster.setObject<st::CSINode>(st::kCSINodes, std::move(node), n);
  }

  testkit::FakeCluster cluster;
  testkit::FakeHandle handle{cluster};
};

/// The plugin's Filter on `node` as a 1.20 profile runs it (Filter only, no PreFilter state),
/// checked against the run with PreFilter first (a Skip then stands for success): both must
/// agree.
template <typename PluginT>
Status runFilter(PluginT& plugin, const PodInfo& pod, const NodeInfo& node) {
  CycleState plain;
  const Status without = plugin.filter(plain, pod, node);
  CycleState state;
  Status pre = plugin.preFilter(state, pod);
  Status with = pre.isSkip() ? Status::success() : pre.ok() ? plugin.filter(state, pod, node) : pre;
  INFO("filter alone: " << without.message() << "; with PreFilter: " << with.message());
  CHECK(with.code() == without.code());
  CHECK(with.reasons() == without.reasons());
  return without;
}

}  // namespace koord::roles::scheduler::volumetest
