#include "plugins/upstream/volumezone/volume_zone.h"

#include <algorithm>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "plugins/upstream/storage/storage_informers.h"

namespace koord::roles::scheduler::upstream {

namespace {

constexpr std::string_view kPreFilterStateKey = "PreFilterVolumeZone";
const StateKey kPreFilterState{kPreFilterStateKey};

struct ZoneState final : StateData {
  ZoneRequirement requirement;
  std::unique_ptr<StateData> clone() const override { return std::make_unique<ZoneState>(*this); }
};

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const auto first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos)
    return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

bool hasClaim(const PodInfo& pod) {
  return std::any_of(pod.volumes.begin(), pod.volumes.end(), [](const PodVolume& v) {
    return v.kind == VolumeSourceKind::kPersistentVolumeClaim;
  });
}

bool hasZoneLabel(const Node& node) {
  return std::any_of(std::begin(kVolumeZoneLabels), std::end(kVolumeZoneLabels),
                     [&](std::string_view key) { return node.labels.contains(key); });
}

// Claims are keyed "namespace/name"; one buffer per thread keeps the lookup from allocating.
std::shared_ptr<const storage::PersistentVolumeClaim> findClaim(
    const ObjectSource<storage::PersistentVolumeClaim>* claims, std::string_view namespace_,
    std::string_view name) {
  if (claims == nullptr)
    return nullptr;
  thread_local std::string key;
  key.assign(namespace_);
  key += '/';
  key += name;
  return claims->get(key);
}

// The NotFound error a lister answers, as 1.20 passes it on.
Status notFound(std::string_view resource, std::string_view name) {
  return Status::unresolvable(fmt::format("{} \"{}\" not found", resource, name));
}

}  // namespace

std::optional<std::vector<std::string>> labelZonesToSet(std::string_view value) {
  std::vector<std::string> zones;
  while (true) {
    const std::size_t cut = value.find("__");
    const std::string_view zone = trim(value.substr(0, cut));
    if (zone.empty())
      return std::nullopt;
    if (std::find(zones.begin(), zones.end(), zone) == zones.end())
      zones.emplace_back(zone);
    if (cut == std::string_view::npos)
      return zones;
    value.remove_prefix(cut + 2);
  }
}

VolumeZone::VolumeZone(FrameworkHandle& handle)
    : claims_(handle.cluster().source<storage::PersistentVolumeClaim>(
          storage::kPersistentVolumeClaims)),
      volumes_(handle.cluster().source<storage::PersistentVolume>(storage::kPersistentVolumes)),
      classes_(handle.cluster().source<storage::StorageClass>(storage::kStorageClasses)) {}

ZoneRequirement VolumeZone::requirement(const PodInfo& pod) const {
  ZoneRequirement out;
  for (const PodVolume& volume : pod.volumes) {
    if (volume.kind != VolumeSourceKind::kPersistentVolumeClaim)
      continue;
    if (volume.id.empty()) {
      out.error = Status::unresolvable("PersistentVolumeClaim had no name");
      return out;
    }
    auto claim = findClaim(claims_, pod.namespace_, volume.id);
    if (claim == nullptr) {
      out.error = notFound("persistentvolumeclaim", volume.id);
      return out;
    }
    if (claim->volume_name.empty()) {
      const std::string& class_name = claim->storage_class;
      if (class_name.empty()) {
        out.error =
            Status::unresolvable("PersistentVolumeClaim had no pv name and storageClass name");
        return out;
      }
      auto storage_class = classes_ ? classes_->get(class_name) : nullptr;
      if (storage_class == nullptr) {
        out.error = notFound("storageclass.storage.k8s.io", class_name);
        return out;
      }
      // Bound where the pod lands: nothing to compare yet.
      if (storage_class->binding_mode == storage::VolumeBindingMode::kWaitForFirstConsumer)
        continue;
      out.error = Status::unresolvable("PersistentVolume had no name");
      return out;
    }
    auto pv = volumes_ ? volumes_->get(claim->volume_name) : nullptr;
    if (pv == nullptr) {
      out.error = notFound("persistentvolume", claim->volume_name);
      return out;
    }
    for (std::string_view key : kVolumeZoneLabels) {
      auto it = pv->labels.find(key);
      if (it == pv->labels.end())
        continue;
      auto zones = labelZonesToSet(it->second);
      if (!zones) {
        KOORD_VLOG(5,
                   "PersistentVolume {}: ignoring label {}={}: \"__\" separated list must not "
                   "contain an empty string",
                   pv->name, key, it->second);
        continue;
      }
      out.constraints.push_back({std::string(key), std::move(*zones)});
    }
  }
  return out;
}

bool VolumeZone::passesEveryNode(const PodInfo& pod) const {
  return !hasClaim(pod);
}

Status VolumeZone::preFilter(CycleState& state, const PodInfo& pod) {
  if (!hasClaim(pod))
    return Status::skip();
  auto data = std::make_unique<ZoneState>();
  data->requirement = requirement(pod);
  // Every node would pass: no zone to compare and no claim to report.
  if (data->requirement.constraints.empty() && data->requirement.error.ok())
    return Status::skip();
  state.write(kPreFilterState, std::move(data));
  return Status::success();
}

Status VolumeZone::filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const {
  // Nearly every pod has a volume (its service account token); only claims have zones.
  if (std::none_of(pod.volumes.begin(), pod.volumes.end(),
                   [](const PodVolume& v) { return v.usesClaim(); }))
    return Status::success();
  if (node.node == nullptr)
    return Status::error("node not found");
  // A node without zone labels (a single-zone cluster) fits whatever the volumes say, and
  // 1.20 resolves no claim for it.
  if (!hasZoneLabel(*node.node))
    return Status::success();
  const auto* cached = state.read<ZoneState>(kPreFilterState);
  ZoneRequirement computed;
  if (cached == nullptr) {
    // Profiles listing VolumeZone at Filter only (1.20's) get no PreFilter state.
    if (!hasClaim(pod))
      return Status::success();
    computed = requirement(pod);
  }
  const ZoneRequirement& req = cached ? cached->requirement : computed;
  const kube::Labels& labels = node.node->labels;
  for (const ZoneConstraint& c : req.constraints) {
    auto it = labels.find(c.key);
    const std::string_view value = it == labels.end() ? std::string_view{} : it->second;
    if (std::find(c.values.begin(), c.values.end(), value) == c.values.end())
      return Status::unresolvable(std::string(kErrReasonVolumeZoneConflict));
  }
  return req.error;
}

}  // namespace koord::roles::scheduler::upstream
