// VolumeBinding's view of PVs and PVCs (kube-scheduler's PV and PVC assume caches): the
// informers' objects, overlaid by what Reserve assumed until the API catches up, with the free
// PVs indexed by class and capacity so that matching a claim walks only the volumes that can fit.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/object_source.h"
#include "koord/core/string_map.h"
#include "koord/kube/error.h"
#include "plugins/upstream/storage/storage_objects.h"
#include "plugins/upstream/volumebinding/matching.h"

namespace koord::roles::scheduler::upstream::volumebinding {

/// Thread-safe: informer events, the scheduling thread's PreFilter and Reserve, and PreBind's
/// checks on the reactor may use it at once.
class VolumeCache {
 public:
  using PV = storage::PersistentVolume;
  using PVC = storage::PersistentVolumeClaim;

  /// Subscribes to both sources (either may be null: nothing of that kind is held) and takes
  /// what they hold now. Events must come after construction, on the sources' threads.
  VolumeCache(const ObjectSource<PV>* volumes, const ObjectSource<PVC>* claims);
  VolumeCache(const VolumeCache&) = delete;
  VolumeCache& operator=(const VolumeCache&) = delete;

  /// The PV as assumed, else as the informer has it; nullopt when there is none.
  std::optional<VolumeRef> volume(std::string_view name) const;
  /// The informer's PV.
  std::shared_ptr<const PV> apiVolume(std::string_view name) const;
  /// The claim ("namespace/name") as assumed, else as the informer has it.
  std::shared_ptr<const PVC> claim(std::string_view key) const;
  /// The informer's claim.
  std::shared_ptr<const PVC> apiClaim(std::string_view key) const;

  /// Calls `fn` with each PV of `storage_class` that has no claimRef and at least `min_capacity`,
  /// smallest first (then by name), as assumed; stops when `fn` answers false. Runs under the
  /// cache's lock: `fn` must not call back into the cache.
  void forEachFreeVolume(std::string_view storage_class, std::int64_t min_capacity,
                         const std::function<bool(const VolumeRef&)>& fn) const;
  /// The PVs whose claimRef names this claim ("namespace/name"), as assumed, by name.
  std::vector<VolumeRef> volumesClaimedBy(std::string_view claim_key) const;

  /// Holds `pv` (a changed copy of a held PV) in place of the informer's until the informer
  /// has a newer version or restoreVolume; errors as upstream's Assume: `could not find
  /// v1.PersistentVolume "x"`, `v1.PersistentVolume "x" is out of sync (stored: 7, assume: 5)`.
  kube::Expected<void> assumeVolume(std::shared_ptr<const PV> pv);
  void restoreVolume(std::string_view name);
  kube::Expected<void> assumeClaim(std::shared_ptr<const PVC> claim);
  void restoreClaim(std::string_view key);

  /// How many PVs are held (tests).
  std::size_t volumeCount() const;

 private:
  struct Entry {
    VolumeRef api;
    VolumeRef latest;
  };
  // The PVs without claimRef of one class, by (capacity, name), as assumed.
  using CapacityIndex = std::map<std::pair<std::int64_t, std::string>, VolumeRef>;

  void onVolume(const std::shared_ptr<const PV>& pv);
  void onVolumeDelete(const PV& pv);
  void onClaim(const std::shared_ptr<const PVC>& claim);
  void onClaimDelete(const PVC& claim);
  void indexLocked(const PV& pv);
  void unindexLocked(const PV& pv);

  const ObjectSource<PVC>* claims_;
  mutable std::mutex mu_;
  StringMap<Entry> volumes_;                                         // under mu_
  std::map<std::string, CapacityIndex, std::less<>> free_by_class_;  // under mu_
  StringMap<StringSet> claimed_by_;                                  // under mu_; claim key -> PVs
  StringMap<std::shared_ptr<const PVC>> assumed_claims_;             // under mu_
};

}  // namespace koord::roles::scheduler::upstream::volumebinding
