#include "plugins/upstream/volumebinding/volume_cache.h"

#include <algorithm>

#include <fmt/format.h>

#include "koord/core/log.h"

namespace koord::roles::scheduler::upstream::volumebinding {
namespace {

constexpr std::string_view kVolumeKind = "v1.PersistentVolume";
constexpr std::string_view kClaimKind = "v1.PersistentVolumeClaim";

// Whether the informer's `incoming` replaces `stored` (upstream: only a newer resourceVersion,
// so that a resync does not undo an assumption). A version that is not an integer replaces,
// with a warning: keeping the older object would hide every later change.
bool newer(std::string_view kind, std::string_view name, std::string_view incoming,
           std::string_view stored) {
  auto in = parseResourceVersion(incoming);
  auto st = parseResourceVersion(stored);
  if (!in || !st) {
    KOORD_LOG_WARNING("volumebinding: {} {}: resourceVersion {:?} or {:?} is not an integer", kind,
                      name, incoming, stored);
    return true;
  }
  return *in > *st;
}

kube::Error notFound(std::string_view kind, std::string_view name) {
  return kube::makeKubeError(fmt::format("could not find {} {:?}", kind, name));
}

kube::Expected<void> checkInSync(std::string_view kind, std::string_view name,
                                 std::string_view stored, std::string_view assumed) {
  auto st = parseResourceVersion(stored);
  auto as = parseResourceVersion(assumed);
  if (!st)
    return kube::makeKubeError(
        fmt::format("error parsing ResourceVersion {:?} for {} {:?}", stored, kind, name));
  if (!as)
    return kube::makeKubeError(
        fmt::format("error parsing ResourceVersion {:?} for {} {:?}", assumed, kind, name));
  if (*as < *st)
    return kube::makeKubeError(
        fmt::format("{} {:?} is out of sync (stored: {}, assume: {})", kind, name, *st, *as));
  return {};
}

// The compiled affinity of `from` when `pv` has the same one (most updates change the claimRef
// or the phase, not the topology).
VolumeRef refKeepingAffinity(std::shared_ptr<const storage::PersistentVolume> pv,
                             const VolumeRef& from) {
  if (from.pv && from.pv->node_affinity == pv->node_affinity)
    return VolumeRef{std::move(pv), from.affinity};
  return makeVolumeRef(std::move(pv));
}

}  // namespace

VolumeCache::VolumeCache(const ObjectSource<PV>* volumes, const ObjectSource<PVC>* claims)
    : claims_(claims) {
  if (volumes != nullptr) {
    volumes->subscribe({
        [this](const std::shared_ptr<const PV>& pv) { onVolume(pv); },
        [this](const PV&, const std::shared_ptr<const PV>& pv) { onVolume(pv); },
        [this](const PV& pv) { onVolumeDelete(pv); },
    });
    for (const auto& pv : volumes->list())
      onVolume(pv);
  }
  if (claims != nullptr) {
    claims->subscribe({
        [this](const std::shared_ptr<const PVC>& c) { onClaim(c); },
        [this](const PVC&, const std::shared_ptr<const PVC>& c) { onClaim(c); },
        [this](const PVC& c) { onClaimDelete(c); },
    });
  }
}

void VolumeCache::indexLocked(const PV& pv) {
  auto it = volumes_.find(pv.name);
  if (it == volumes_.end())
    return;
  if (pv.claim_ref) {
    claimed_by_[pv.claim_ref->namespace_ + "/" + pv.claim_ref->name].insert(pv.name);
    return;
  }
  auto cls = free_by_class_.find(pv.storage_class);
  if (cls == free_by_class_.end())
    cls = free_by_class_.emplace(pv.storage_class, CapacityIndex{}).first;
  cls->second.insert_or_assign({pv.capacity, pv.name}, it->second.latest);
}

void VolumeCache::unindexLocked(const PV& pv) {
  if (pv.claim_ref) {
    auto it = claimed_by_.find(pv.claim_ref->namespace_ + "/" + pv.claim_ref->name);
    if (it != claimed_by_.end()) {
      it->second.erase(pv.name);
      if (it->second.empty())
        claimed_by_.erase(it);
    }
    return;
  }
  auto cls = free_by_class_.find(pv.storage_class);
  if (cls == free_by_class_.end())
    return;
  cls->second.erase({pv.capacity, pv.name});
  if (cls->second.empty())
    free_by_class_.erase(cls);
}

void VolumeCache::onVolume(const std::shared_ptr<const PV>& pv) {
  std::lock_guard lock(mu_);
  auto it = volumes_.find(pv->name);
  if (it == volumes_.end()) {
    VolumeRef ref = makeVolumeRef(pv);
    volumes_.emplace(pv->name, Entry{ref, ref});
    indexLocked(*pv);
    return;
  }
  Entry& e = it->second;
  if (!newer(kVolumeKind, pv->name, pv->resource_version, e.latest.pv->resource_version))
    return;
  unindexLocked(*e.latest.pv);
  VolumeRef ref = refKeepingAffinity(pv, e.api);
  e.api = ref;
  e.latest = std::move(ref);
  indexLocked(*pv);
}

void VolumeCache::onVolumeDelete(const PV& pv) {
  std::lock_guard lock(mu_);
  auto it = volumes_.find(pv.name);
  if (it == volumes_.end())
    return;
  unindexLocked(*it->second.latest.pv);
  volumes_.erase(it);
}

void VolumeCache::onClaim(const std::shared_ptr<const PVC>& claim) {
  std::lock_guard lock(mu_);
  auto it = assumed_claims_.find(claimKey(*claim));
  if (it == assumed_claims_.end())
    return;
  if (newer(kClaimKind, it->first, claim->resource_version, it->second->resource_version))
    assumed_claims_.erase(it);
}

void VolumeCache::onClaimDelete(const PVC& claim) {
  std::lock_guard lock(mu_);
  assumed_claims_.erase(claimKey(claim));
}

std::optional<VolumeRef> VolumeCache::volume(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = volumes_.find(name);
  if (it == volumes_.end())
    return std::nullopt;
  return it->second.latest;
}

std::shared_ptr<const VolumeCache::PV> VolumeCache::apiVolume(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = volumes_.find(name);
  return it == volumes_.end() ? nullptr : it->second.api.pv;
}

std::shared_ptr<const VolumeCache::PVC> VolumeCache::claim(std::string_view key) const {
  std::shared_ptr<const PVC> api = apiClaim(key);
  if (api == nullptr)
    return nullptr;
  std::lock_guard lock(mu_);
  auto it = assumed_claims_.find(key);
  if (it == assumed_claims_.end())
    return api;
  // The informer may be ahead of its event, which drops the assumption.
  auto in = parseResourceVersion(api->resource_version);
  auto st = parseResourceVersion(it->second->resource_version);
  if (in && st && *in > *st)
    return api;
  return it->second;
}

std::shared_ptr<const VolumeCache::PVC> VolumeCache::apiClaim(std::string_view key) const {
  return claims_ == nullptr ? nullptr : claims_->get(key);
}

void VolumeCache::forEachFreeVolume(std::string_view storage_class, std::int64_t min_capacity,
                                    const std::function<bool(const VolumeRef&)>& fn) const {
  std::lock_guard lock(mu_);
  auto cls = free_by_class_.find(storage_class);
  if (cls == free_by_class_.end())
    return;
  for (auto it = cls->second.lower_bound({min_capacity, std::string()}); it != cls->second.end();
       ++it) {
    if (!fn(it->second))
      return;
  }
}

std::vector<VolumeRef> VolumeCache::volumesClaimedBy(std::string_view claim_key) const {
  std::vector<VolumeRef> out;
  std::lock_guard lock(mu_);
  auto it = claimed_by_.find(claim_key);
  if (it == claimed_by_.end())
    return out;
  out.reserve(it->second.size());
  for (const std::string& name : it->second) {
    if (auto v = volumes_.find(name); v != volumes_.end())
      out.push_back(v->second.latest);
  }
  std::sort(out.begin(), out.end(),
            [](const VolumeRef& a, const VolumeRef& b) { return a.pv->name < b.pv->name; });
  return out;
}

kube::Expected<void> VolumeCache::assumeVolume(std::shared_ptr<const PV> pv) {
  std::lock_guard lock(mu_);
  auto it = volumes_.find(pv->name);
  if (it == volumes_.end())
    return notFound(kVolumeKind, pv->name);
  Entry& e = it->second;
  if (auto ok =
          checkInSync(kVolumeKind, pv->name, e.latest.pv->resource_version, pv->resource_version);
      !ok)
    return ok.error();
  unindexLocked(*e.latest.pv);
  e.latest = refKeepingAffinity(pv, e.latest);
  indexLocked(*pv);
  return {};
}

void VolumeCache::restoreVolume(std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = volumes_.find(name);
  if (it == volumes_.end())
    return;  // deleted meanwhile
  Entry& e = it->second;
  if (e.latest.pv == e.api.pv)
    return;
  unindexLocked(*e.latest.pv);
  e.latest = e.api;
  indexLocked(*e.latest.pv);
}

kube::Expected<void> VolumeCache::assumeClaim(std::shared_ptr<const PVC> claim) {
  const std::string key = claimKey(*claim);
  std::shared_ptr<const PVC> stored = this->claim(key);
  if (stored == nullptr)
    return notFound(kClaimKind, key);
  if (auto ok = checkInSync(kClaimKind, key, stored->resource_version, claim->resource_version);
      !ok)
    return ok.error();
  std::lock_guard lock(mu_);
  assumed_claims_.insert_or_assign(key, std::move(claim));
  return {};
}

void VolumeCache::restoreClaim(std::string_view key) {
  std::lock_guard lock(mu_);
  if (auto it = assumed_claims_.find(key); it != assumed_claims_.end())
    assumed_claims_.erase(it);
}

std::size_t VolumeCache::volumeCount() const {
  std::lock_guard lock(mu_);
  return volumes_.size();
}

}  // namespace koord::roles::scheduler::upstream::volumebinding
