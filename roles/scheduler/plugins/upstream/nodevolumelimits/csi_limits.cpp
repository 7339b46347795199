#include "plugins/upstream/nodevolumelimits/csi_limits.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

namespace koord::roles::scheduler::upstream {

namespace {

using volumelimits::CSIVolume;
using volumelimits::DriverCount;
using volumelimits::KeepAlive;
using volumelimits::VolumeKey;

constexpr std::string_view kPreFilterStateKey = "PreFilterNodeVolumeLimits";
const StateKey kPreFilterState{kPreFilterStateKey};

struct CSIState final : StateData {
  KeepAlive keep;  // what the volumes' keys point into
  std::vector<CSIVolume> volumes;
  std::unique_ptr<StateData> clone() const override { return std::make_unique<CSIState>(*this); }
};

// The node's limit for a driver: its CSINode entry's allocatable count, else the node's
// allocatable under the driver's key.
std::optional<std::int64_t> driverLimit(const NodeInfo& node, const storage::CSINode* csi_node,
                                        std::string_view driver, std::string& key_buffer) {
  if (csi_node != nullptr) {
    for (const auto& d : csi_node->drivers) {
      if (d.name == driver && d.allocatable_count)
        return *d.allocatable_count;
    }
  }
  volumelimits::csiAttachLimitKey(driver, key_buffer);
  return volumelimits::allocatableCount(node, key_buffer);
}

DriverCount* findDriver(std::vector<DriverCount>& drivers, std::string_view driver) {
  auto it = std::find_if(drivers.begin(), drivers.end(),
                         [&](const DriverCount& d) { return d.driver == driver; });
  return it == drivers.end() ? nullptr : &*it;
}

}  // namespace

NodeVolumeLimits::NodeVolumeLimits(FrameworkHandle& handle) : storage_(handle.cluster()) {}

Status NodeVolumeLimits::podVolumes(const PodInfo& pod, KeepAlive& keep,
                                    std::vector<CSIVolume>& out) const {
  for (const PodVolume& volume : pod.volumes) {
    if (!volume.usesClaim())
      continue;
    if (volume.id.empty())
      return Status::error(std::string(volumelimits::kErrClaimWithoutName));
    auto resolved = volumelimits::resolveCSIVolume(storage_, pod.namespace_, volume, keep);
    if (!resolved)
      continue;
    const bool seen = std::any_of(out.begin(), out.end(),
                                  [&](const CSIVolume& v) { return v.key == resolved->key; });
    if (!seen)
      out.push_back(*resolved);
  }
  return Status::success();
}

bool NodeVolumeLimits::passesEveryNode(const PodInfo& pod) const {
  return std::none_of(pod.volumes.begin(), pod.volumes.end(),
                      [](const PodVolume& v) { return v.usesClaim(); });
}

Status NodeVolumeLimits::preFilter(CycleState& state, const PodInfo& pod) {
  if (passesEveryNode(pod))
    return Status::skip();
  auto data = std::make_unique<CSIState>();
  // 1.20 reports this error from Filter on every node: the cycle ends either way.
  if (Status s = podVolumes(pod, data->keep, data->volumes); !s.ok())
    return s;
  if (data->volumes.empty())
    return Status::skip();
  state.write(kPreFilterState, std::move(data));
  return Status::success();
}

Status NodeVolumeLimits::filter(const CycleState& state, const PodInfo& pod,
                                const NodeInfo& node) const {
  // Nearly every pod has a volume (its service account token); only claims can count here.
  if (passesEveryNode(pod))
    return Status::success();
  volumelimits::ScratchLease lease;
  if (const auto* cached = state.read<CSIState>(kPreFilterState))
    return fits(cached->volumes, node, *lease);
  // Profiles listing the plugin at Filter only (1.20's) resolve the pod's claims per node.
  if (Status s = podVolumes(pod, lease->keep, lease->pod_volumes); !s.ok())
    return s;
  return fits(lease->pod_volumes, node, *lease);
}

Status NodeVolumeLimits::fits(const std::vector<CSIVolume>& pod_volumes, const NodeInfo& node,
                              volumelimits::CountScratch& scratch) const {
  if (pod_volumes.empty())
    return Status::success();
  if (node.node == nullptr)
    return Status::error("node not found");
  const std::shared_ptr<const storage::CSINode> csi_node = storage_.csiNode(node.name());
  // The pod's volumes that count on this node.
  for (const CSIVolume& v : pod_volumes) {
    if (v.migrated_from != nullptr && !volumelimits::migrated(csi_node.get(), *v.migrated_from))
      continue;
    scratch.fresh.push_back(v.key);
    DriverCount* d = findDriver(scratch.drivers, v.key.driver);
    if (d == nullptr) {
      scratch.drivers.push_back(
          DriverCount{.driver = v.key.driver,
                      .limit = driverLimit(node, csi_node.get(), v.key.driver, scratch.limit_key)});
      d = &scratch.drivers.back();
    }
    ++d->fresh;
  }
  const bool any_limit = std::any_of(scratch.drivers.begin(), scratch.drivers.end(),
                                     [](const DriverCount& d) { return d.limit.has_value(); });
  if (!any_limit)
    return Status::success();

  // Room enough even if every claim on the node were a distinct volume of each driver: no
  // claim need be read.
  std::int64_t claims_on_node = 0;
  bool unnamed_claim = false;
  for (const auto& other : node.pods) {
    for (const PodVolume& v : other->volumes) {
      if (!v.usesClaim())
        continue;
      ++claims_on_node;
      unnamed_claim = unnamed_claim || v.id.empty();
    }
  }
  if (!unnamed_claim &&
      std::all_of(scratch.drivers.begin(), scratch.drivers.end(), [&](const DriverCount& d) {
        return !d.limit || claims_on_node + d.fresh <= *d.limit;
      }))
    return Status::success();

  for (const auto& other : node.pods) {
    for (const PodVolume& v : other->volumes) {
      if (!v.usesClaim())
        continue;
      if (v.id.empty())
        return Status::error(std::string(volumelimits::kErrClaimWithoutName));
      auto resolved = volumelimits::resolveCSIVolume(storage_, other->namespace_, v, scratch.keep);
      if (!resolved)
        continue;
      if (resolved->migrated_from != nullptr &&
          !volumelimits::migrated(csi_node.get(), *resolved->migrated_from))
        continue;
      // Only the drivers the pod adds to can change the answer.
      if (findDriver(scratch.drivers, resolved->key.driver) == nullptr)
        continue;
      volumelimits::insertUnique(scratch.attached, resolved->key);
    }
  }
  for (DriverCount& d : scratch.drivers)
    d.fresh = 0;
  for (const VolumeKey& k : scratch.attached)
    ++findDriver(scratch.drivers, k.driver)->attached;
  for (const VolumeKey& k : scratch.fresh) {
    // A volume a pod on the node already uses is attached once.
    if (!volumelimits::contains(scratch.attached, k))
      ++findDriver(scratch.drivers, k.driver)->fresh;
  }
  // Only drivers the pod adds a volume to are checked: a node already over a limit still takes
  // a pod whose volumes of that driver are all attached there.
  for (const DriverCount& d : scratch.drivers) {
    if (d.limit && d.fresh > 0 && d.attached + d.fresh > *d.limit)
      return Status::unschedulable(std::string(volumelimits::kErrReasonMaxVolumeCountExceeded));
  }
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
