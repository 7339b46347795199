#include "plugins/upstream/nodevolumelimits/volume_limits_common.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>

#include "plugins/upstream/storage/storage_informers.h"

namespace koord::roles::scheduler::upstream::volumelimits {

namespace {

constexpr std::array<const InTreePlugin*, 4> kInTreePlugins = {&kAWSEBS, &kGCEPD, &kAzureDisk,
                                                               &kCinder};

// A resource name may be at most 63 characters (ResourceNameLengthLimit).
constexpr std::size_t kResourceNameLengthLimit = 63;
constexpr std::size_t kDriverPrefixKept = 23;
constexpr std::size_t kHashHexKept = 16;

// KubernetesVolumeIDToEBSVolumeID, as the CSI translation applies it: "aws://<zone>/vol-..."
// becomes "vol-..."; a bare ID stays. Nullopt for an ID the translation refuses.
std::optional<std::string_view> ebsVolumeId(std::string_view id) {
  constexpr std::string_view kScheme = "aws://";
  if (!id.starts_with(kScheme))
    return id;
  std::string_view rest = id.substr(kScheme.size());
  const std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos)
    return std::nullopt;
  rest = rest.substr(slash);
  while (!rest.empty() && rest.front() == '/')
    rest.remove_prefix(1);
  while (!rest.empty() && rest.back() == '/')
    rest.remove_suffix(1);
  if (!rest.starts_with("vol-") || rest.find('/') != std::string_view::npos)
    return std::nullopt;
  return rest;
}

// The placeholder of a claim whose volume is not known: the claim itself.
VolumeKey claimPlaceholder(std::string_view driver, const storage::PersistentVolumeClaim& claim) {
  return VolumeKey{.driver = driver,
                   .handle = claim.name,
                   .claim_namespace = claim.namespace_,
                   .placeholder = true};
}

// getCSIDriverInfoFromSC: the class's provisioner (its CSI driver for an in-tree one), the claim
// as placeholder handle.
std::optional<CSIVolume> fromStorageClass(
    const StorageView& storage, const std::shared_ptr<const storage::PersistentVolumeClaim>& claim,
    KeepAlive& keep) {
  // A claim without a class binds at once (Immediate), so it is bound before any pod using it
  // schedules: not counting it here is safe.
  if (claim->storage_class.empty())
    return std::nullopt;
  auto storage_class = storage.storageClass(claim->storage_class);
  if (storage_class == nullptr)
    return std::nullopt;
  const std::string& provisioner = storage_class->provisioner;
  if (provisioner.empty() || neverMigratedProvisioner(provisioner))
    return std::nullopt;
  keep.push_back(claim);
  if (const InTreePlugin* plugin = inTreePluginNamed(provisioner))
    return CSIVolume{claimPlaceholder(plugin->csi_driver, *claim), plugin};
  keep.push_back(storage_class);
  return CSIVolume{claimPlaceholder(provisioner, *claim), nullptr};
}

}  // namespace

const InTreePlugin* inTreePluginOf(VolumeSourceKind kind) {
  for (const InTreePlugin* p : kInTreePlugins) {
    if (p->kind == kind)
      return p;
  }
  return nullptr;
}

const InTreePlugin* inTreePluginNamed(std::string_view provisioner) {
  for (const InTreePlugin* p : kInTreePlugins) {
    if (p->name == provisioner)
      return p;
  }
  return nullptr;
}

bool neverMigratedProvisioner(std::string_view provisioner) {
  return provisioner == "kubernetes.io/azure-file" || provisioner == "kubernetes.io/vsphere-volume";
}

bool migrated(const storage::CSINode* csi_node, const InTreePlugin& plugin) {
  if (csi_node == nullptr)
    return false;
  const auto& plugins = csi_node->migrated_plugins;
  return std::find(plugins.begin(), plugins.end(), plugin.name) != plugins.end();
}

void csiAttachLimitKey(std::string_view driver, std::string& out) {
  out.assign(kCSIAttachLimitPrefix);
  if (out.size() + driver.size() < kResourceNameLengthLimit) {
    out += driver;
    return;
  }
  out += driver.substr(0, kDriverPrefixKept);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(driver.data(), driver.size(), digest.data(), &length, EVP_sha1(), nullptr) != 1)
    return;  // OpenSSL without SHA-1: the key then matches no allocatable, as if none were set
  constexpr std::string_view kHex = "0123456789abcdef";
  for (unsigned int i = 0; i < length && i * 2 < kHashHexKept; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
}

std::optional<std::int64_t> allocatableCount(const NodeInfo& node, std::string_view key) {
  if (node.node == nullptr)
    return std::nullopt;
  const auto& scalar = node.node->allocatable.scalar;
  auto it = std::lower_bound(scalar.begin(), scalar.end(), key,
                             [](const auto& e, std::string_view k) { return e.first < k; });
  if (it == scalar.end() || it->first != key)
    return std::nullopt;
  return it->second;
}

StorageView::StorageView(const ClusterView& cluster)
    : claims_(cluster.source<storage::PersistentVolumeClaim>(storage::kPersistentVolumeClaims)),
      volumes_(cluster.source<storage::PersistentVolume>(storage::kPersistentVolumes)),
      classes_(cluster.source<storage::StorageClass>(storage::kStorageClasses)),
      csi_nodes_(cluster.source<storage::CSINode>(storage::kCSINodes)) {}

std::shared_ptr<const storage::PersistentVolumeClaim> StorageView::claim(
    std::string_view namespace_, std::string_view name) const {
  if (claims_ == nullptr)
    return nullptr;
  // Claims are keyed "namespace/name"; one buffer per thread keeps the key from allocating.
  thread_local std::string key;
  key.assign(namespace_);
  key += '/';
  key += name;
  return claims_->get(key);
}

std::shared_ptr<const storage::PersistentVolume> StorageView::volume(std::string_view name) const {
  return volumes_ ? volumes_->get(name) : nullptr;
}

std::shared_ptr<const storage::StorageClass> StorageView::storageClass(
    std::string_view name) const {
  return classes_ ? classes_->get(name) : nullptr;
}

std::shared_ptr<const storage::CSINode> StorageView::csiNode(std::string_view node) const {
  return csi_nodes_ ? csi_nodes_->get(node) : nullptr;
}

ScratchLease::ScratchLease() {
  thread_local CountScratch scratch;
  scratch_ = &scratch;
}

ScratchLease::~ScratchLease() {
  scratch_->keep.clear();
  scratch_->fresh.clear();
  scratch_->attached.clear();
  scratch_->pod_volumes.clear();
  scratch_->drivers.clear();
}

bool contains(const std::vector<VolumeKey>& keys, const VolumeKey& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

void insertUnique(std::vector<VolumeKey>& keys, const VolumeKey& key) {
  if (!contains(keys, key))
    keys.push_back(key);
}

std::optional<CSIVolume> resolveCSIVolume(const StorageView& storage, std::string_view namespace_,
                                          const PodVolume& volume, KeepAlive& keep) {
  auto claim = storage.claim(namespace_, volume.id);
  if (claim == nullptr)
    return std::nullopt;
  if (claim->volume_name.empty())
    return fromStorageClass(storage, claim, keep);
  auto pv = storage.volume(claim->volume_name);
  // Deleted, or the claim was pre-bound to a volume not created yet: count by the class.
  if (pv == nullptr)
    return fromStorageClass(storage, claim, keep);
  if (pv->kind == VolumeSourceKind::kCSI) {
    if (pv->id.empty() || pv->volume_handle.empty())
      return std::nullopt;
    keep.push_back(pv);
    return CSIVolume{VolumeKey::of(pv->id, pv->volume_handle), nullptr};
  }
  const InTreePlugin* plugin = inTreePluginOf(pv->kind);
  if (plugin == nullptr)
    return std::nullopt;
  std::optional<std::string_view> handle = pv->id;
  if (plugin == &kAWSEBS)
    handle = ebsVolumeId(pv->id);
  if (!handle || handle->empty())
    return std::nullopt;
  keep.push_back(pv);
  return CSIVolume{VolumeKey::of(plugin->csi_driver, *handle), plugin};
}

std::optional<VolumeKey> resolveInTreeVolume(const StorageView& storage, const InTreePlugin& plugin,
                                             std::string_view namespace_, const PodVolume& volume,
                                             KeepAlive& keep) {
  if (volume.kind == plugin.kind)
    return VolumeKey::of({}, volume.id);
  if (!volume.usesClaim())
    return std::nullopt;
  auto claim = storage.claim(namespace_, volume.id);
  // A claim that cannot be read may be anyone's: it is not counted.
  if (claim == nullptr)
    return std::nullopt;
  // The claim's volume unknown (unbound, or its volume gone): count the claim if its class
  // provisions this plugin's volumes, since the pod may still use the volume it had.
  auto placeholder = [&]() -> std::optional<VolumeKey> {
    if (claim->storage_class.empty())
      return std::nullopt;
    auto storage_class = storage.storageClass(claim->storage_class);
    if (storage_class == nullptr || storage_class->provisioner != plugin.name)
      return std::nullopt;
    keep.push_back(claim);
    return claimPlaceholder({}, *claim);
  };
  if (claim->volume_name.empty())
    return placeholder();
  auto pv = storage.volume(claim->volume_name);
  if (pv == nullptr)
    return placeholder();
  if (pv->kind != plugin.kind)
    return std::nullopt;
  keep.push_back(pv);
  return VolumeKey::of({}, pv->id);
}

}  // namespace koord::roles::scheduler::upstream::volumelimits
