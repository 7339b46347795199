// The storage API objects the volume plugins read (PersistentVolume, PersistentVolumeClaim,
// StorageClass, CSINode), projected to what VolumeBinding, VolumeZone and the limits need.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/pod_info.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/scheduling_match.h"

namespace koord::roles::scheduler::storage {

// Annotations and labels kube-scheduler and the PV controller exchange.
inline constexpr std::string_view kAnnSelectedNode = "volume.kubernetes.io/selected-node";
inline constexpr std::string_view kAnnBindCompleted = "pv.kubernetes.io/bind-completed";
inline constexpr std::string_view kAnnBoundByController = "pv.kubernetes.io/bound-by-controller";
inline constexpr std::string_view kAnnStorageProvisioner =
    "volume.kubernetes.io/storage-provisioner";
inline constexpr std::string_view kAnnBetaStorageProvisioner =
    "volume.beta.kubernetes.io/storage-provisioner";
inline constexpr std::string_view kAnnBetaStorageClass = "volume.beta.kubernetes.io/storage-class";
inline constexpr std::string_view kAnnMigratedPlugins =
    "storage.alpha.kubernetes.io/migrated-plugins";

/// Bounds on lists read from storage objects.
inline constexpr std::size_t kMaxAccessModes = 16;
inline constexpr std::size_t kMaxCSINodeDrivers = 256;
inline constexpr std::size_t kMaxTopologyTerms = 256;

enum class VolumeMode { kFilesystem, kBlock };

enum class AccessMode : std::uint8_t {
  kReadWriteOnce = 1 << 0,
  kReadOnlyMany = 1 << 1,
  kReadWriteMany = 1 << 2,
  kReadWriteOncePod = 1 << 3,
};
/// A set of AccessMode bits.
using AccessModes = std::uint8_t;

/// spec.claimRef: the claim a PV is bound (or pre-bound) to.
struct ClaimRef {
  std::string namespace_;
  std::string name;
  std::string uid;  // empty for a pre-binding by name
};

struct PersistentVolume {
  std::string name;
  std::string uid;
  std::string resource_version;
  kube::Labels labels;
  kube::Labels annotations;
  bool terminating = false;
  /// spec.capacity.storage in bytes.
  std::int64_t capacity = 0;
  AccessModes access_modes = 0;
  /// The beta annotation, else spec.storageClassName, else "" (GetPersistentVolumeClass).
  std::string storage_class;
  VolumeMode volume_mode = VolumeMode::kFilesystem;
  std::optional<ClaimRef> claim_ref;
  /// spec.nodeAffinity.required; nullopt when the PV has none (it fits every node).
  std::optional<kube::NodeSelector> node_affinity;
  /// The source's kind and identity, as PodVolume keeps them for inline volumes: csi is
  /// the driver with `volume_handle` beside it; gcePersistentDisk the pdName, and so on.
  VolumeSourceKind kind = VolumeSourceKind::kOther;
  std::string id;
  std::string volume_handle;  // csi only
  /// status.phase: Pending, Available, Bound, Released, Failed.
  std::string phase;
};

enum class ClaimPhase { kPending, kBound, kLost };

struct PersistentVolumeClaim {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  kube::Labels annotations;
  bool terminating = false;
  AccessModes access_modes = 0;
  /// spec.resources.requests.storage in bytes.
  std::int64_t request = 0;
  /// The beta annotation, else spec.storageClassName, else "" (GetPersistentVolumeClaimClass).
  std::string storage_class;
  std::string volume_name;  // spec.volumeName
  VolumeMode volume_mode = VolumeMode::kFilesystem;
  /// spec.selector; nullopt: none (every PV passes).
  std::optional<kube::Selector> selector;
  ClaimPhase phase = ClaimPhase::kPending;
  /// The UID of the owner reference marked controller ("" when none): a generic ephemeral
  /// volume's claim must be controlled by its pod.
  std::string controller_uid;

  std::string key() const { return namespace_ + "/" + name; }
  std::string_view annotation(std::string_view key) const;
};

enum class VolumeBindingMode { kImmediate, kWaitForFirstConsumer };

struct StorageClass {
  std::string name;
  std::string provisioner;
  VolumeBindingMode binding_mode = VolumeBindingMode::kImmediate;
  /// allowedTopologies as node selector terms (matchLabelExpressions: key In values); empty:
  /// no restriction.
  std::vector<kube::NodeSelectorTerm> allowed_topologies;
};

struct CSINodeDriver {
  std::string name;
  std::string node_id;
  std::vector<std::string> topology_keys;
  /// allocatable.count: how many volumes of this driver the node may attach; nullopt: no limit.
  std::optional<std::int32_t> allocatable_count;
};

struct CSINode {
  std::string name;
  std::vector<CSINodeDriver> drivers;
  /// storage.alpha.kubernetes.io/migrated-plugins: in-tree plugins whose volumes the node
  /// hands to their CSI drivers ("kubernetes.io/aws-ebs", ...).
  std::vector<std::string> migrated_plugins;
};

/// Projections; errors name the field ("spec.capacity[storage]: ...").
kube::Expected<PersistentVolume> decodePersistentVolume(const boost::json::value& v);
kube::Expected<PersistentVolumeClaim> decodePersistentVolumeClaim(const boost::json::value& v);
kube::Expected<StorageClass> decodeStorageClass(const boost::json::value& v);
kube::Expected<CSINode> decodeCSINode(const boost::json::value& v);

/// Whether every mode of `wanted` is among `offered` (CheckAccessModes).
inline bool accessModesContain(AccessModes offered, AccessModes wanted) {
  return (offered & wanted) == wanted;
}

}  // namespace koord::roles::scheduler::storage
