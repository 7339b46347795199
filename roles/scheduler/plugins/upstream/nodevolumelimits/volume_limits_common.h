// What NodeVolumeLimits and the in-tree limits (EBSLimits, GCEPDLimits, AzureDiskLimits,
// CinderLimits) share: the in-tree disk plugins and their CSI drivers, the node's limit keys,
// the storage sources, and the identity a counted volume is told apart by.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/object_source.h"
#include "framework/pod_info.h"
#include "plugins/upstream/storage/storage_objects.h"

namespace koord::roles::scheduler::upstream::volumelimits {

inline constexpr std::string_view kErrReasonMaxVolumeCountExceeded =
    "node(s) exceed max volume count";
/// Node allocatable of CSI drivers: this prefix and the driver's name (GetCSIAttachLimitKey).
inline constexpr std::string_view kCSIAttachLimitPrefix = "attachable-volumes-csi-";

/// An in-tree disk plugin: its volumes' source kind, its name (a StorageClass provisioner and
/// the CSINode's migrated-plugins entry), the CSI driver it migrates to and its node limit key.
struct InTreePlugin {
  VolumeSourceKind kind;
  std::string_view name;
  std::string_view csi_driver;
  std::string_view limit_key;
};

inline constexpr InTreePlugin kAWSEBS{VolumeSourceKind::kAWSElasticBlockStore,
                                      "kubernetes.io/aws-ebs", "ebs.csi.aws.com",
                                      "attachable-volumes-aws-ebs"};
inline constexpr InTreePlugin kGCEPD{VolumeSourceKind::kGCEPersistentDisk, "kubernetes.io/gce-pd",
                                     "pd.csi.storage.gke.io", "attachable-volumes-gce-pd"};
inline constexpr InTreePlugin kAzureDisk{VolumeSourceKind::kAzureDisk, "kubernetes.io/azure-disk",
                                         "disk.csi.azure.com", "attachable-volumes-azure-disk"};
inline constexpr InTreePlugin kCinder{VolumeSourceKind::kCinder, "kubernetes.io/cinder",
                                      "cinder.csi.openstack.org", "attachable-volumes-cinder"};

/// The in-tree plugin of a PersistentVolume source kind; null for CSI and the rest.
const InTreePlugin* inTreePluginOf(VolumeSourceKind kind);
/// The in-tree plugin of a provisioner name; null for any other provisioner.
const InTreePlugin* inTreePluginNamed(std::string_view provisioner);
/// Provisioners of in-tree plugins the CSI translation knows but whose migration 1.20 never
/// turns on (Azure File, vSphere): their unbound claims count for no CSI driver.
bool neverMigratedProvisioner(std::string_view provisioner);

/// Whether the node hands `plugin`'s volumes to its CSI driver: the CSINode lists it in the
/// storage.alpha.kubernetes.io/migrated-plugins annotation. The kubelet writes it only where its
/// migration gates are on; the scheduler's gates (CSIMigration{AWS,GCE,AzureDisk,OpenStack},
/// off by default in 1.20, on from 1.23-1.25) are taken to agree with it.
bool migrated(const storage::CSINode* csi_node, const InTreePlugin& plugin);

/// GetCSIAttachLimitKey into `out`: the prefix and the driver, or (where that reaches 63
/// characters) the prefix, the driver's first 23 characters and the first 16 hex digits of its
/// SHA-1.
void csiAttachLimitKey(std::string_view driver, std::string& out);

/// A node allocatable count; nullopt when the node has none (a zero is not kept by Resource,
/// so a node reporting 0 reads as having no limit).
std::optional<std::int64_t> allocatableCount(const NodeInfo& node, std::string_view key);

/// What tells two counted volumes apart: the CSI driver ("" for the in-tree limits) and the
/// volume's handle or in-tree identity; or, for a claim whose volume is not known yet, the
/// claim itself (upstream's "<random prefix>-<namespace>/<claim>" handle, which no real handle
/// can equal).
struct VolumeKey {
  std::string_view driver;
  std::string_view handle;  // the claim's name for a placeholder
  std::string_view claim_namespace;
  bool placeholder = false;

  /// A real volume: a handle or in-tree identity (`driver` "" for the in-tree limits).
  static VolumeKey of(std::string_view driver, std::string_view handle) {
    VolumeKey k;
    k.driver = driver;
    k.handle = handle;
    return k;
  }
  friend bool operator==(const VolumeKey&, const VolumeKey&) = default;
};

/// The storage objects the limits read, resolved once when the plugin is built (a missing
/// source reads as empty).
class StorageView {
 public:
  explicit StorageView(const ClusterView& cluster);
  std::shared_ptr<const storage::PersistentVolumeClaim> claim(std::string_view namespace_,
                                                              std::string_view name) const;
  std::shared_ptr<const storage::PersistentVolume> volume(std::string_view name) const;
  std::shared_ptr<const storage::StorageClass> storageClass(std::string_view name) const;
  std::shared_ptr<const storage::CSINode> csiNode(std::string_view node) const;

 private:
  const ObjectSource<storage::PersistentVolumeClaim>* claims_;
  const ObjectSource<storage::PersistentVolume>* volumes_;
  const ObjectSource<storage::StorageClass>* classes_;
  const ObjectSource<storage::CSINode>* csi_nodes_;
};

/// Objects a cycle's counting points into (VolumeKey views), held until it is done.
using KeepAlive = std::vector<std::shared_ptr<const void>>;

/// A claim counted by NodeVolumeLimits: its driver and handle (or the claim as placeholder),
/// and the in-tree plugin it was translated from, whose volumes count only on nodes that
/// migrated that plugin (null for a CSI volume).
struct CSIVolume {
  VolumeKey key;
  const InTreePlugin* migrated_from = nullptr;
};

/// One CSI driver of the pod being placed, as NodeVolumeLimits weighs it on a node.
struct DriverCount {
  std::string_view driver;
  std::optional<std::int64_t> limit;
  std::int64_t fresh = 0;     // the pod's volumes of this driver not on the node yet
  std::int64_t attached = 0;  // unique volumes of this driver the node's pods use
};

/// Per-thread scratch for one plugin's Filter on one node, emptied (objects released, capacity
/// kept) when the lease ends: Filter runs on many threads at once and should not allocate per
/// node. One lease per thread at a time.
struct CountScratch {
  KeepAlive keep;
  std::vector<VolumeKey> fresh;
  std::vector<VolumeKey> attached;
  std::vector<CSIVolume> pod_volumes;
  std::vector<DriverCount> drivers;
  std::string limit_key;
};
class ScratchLease {
 public:
  ScratchLease();
  ~ScratchLease();
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  CountScratch& operator*() const { return *scratch_; }
  CountScratch* operator->() const { return scratch_; }

 private:
  CountScratch* scratch_;
};

/// Whether `key` is among `keys`.
bool contains(const std::vector<VolumeKey>& keys, const VolumeKey& key);
/// Adds `key` unless present.
void insertUnique(std::vector<VolumeKey>& keys, const VolumeKey& key);

/// The volume a pod's claim `volume` (usesClaim(), a non-empty claim name) counts as for
/// NodeVolumeLimits: its PersistentVolume's CSI driver and handle, an in-tree volume's driver
/// after migration, or, with no PersistentVolume to read, its StorageClass's provisioner and
/// the claim as placeholder. Nullopt when it counts for no driver (claim not found, no class,
/// a volume of another kind). Objects the key points into go to `keep`.
std::optional<CSIVolume> resolveCSIVolume(const StorageView& storage, std::string_view namespace_,
                                          const PodVolume& volume, KeepAlive& keep);

/// The volume a pod's `volume` counts as for `plugin`'s in-tree limit: an inline volume of its
/// kind, or a claim bound to one, or a claim whose volume cannot be read but whose
/// StorageClass names the plugin as provisioner (as placeholder). Nullopt otherwise. A claim
/// must have a non-empty name.
std::optional<VolumeKey> resolveInTreeVolume(const StorageView& storage, const InTreePlugin& plugin,
                                             std::string_view namespace_, const PodVolume& volume,
                                             KeepAlive& keep);

inline constexpr std::string_view kErrClaimWithoutName = "PersistentVolumeClaim had no name";

}  // namespace koord::roles::scheduler::upstream::volumelimits
