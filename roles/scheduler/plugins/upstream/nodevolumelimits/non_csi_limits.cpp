#include "plugins/upstream/nodevolumelimits/non_csi_limits.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "koord/core/log.h"

namespace koord::roles::scheduler::upstream {

namespace {

using volumelimits::KeepAlive;
using volumelimits::VolumeKey;

constexpr std::string_view kInstanceTypeLabel = "node.kubernetes.io/instance-type";
constexpr std::string_view kBetaInstanceTypeLabel = "beta.kubernetes.io/instance-type";

// One key per plugin name, interned at static initialisation.
const StateKey kEBSState{"PreFilterEBSLimits"};
const StateKey kGCEPDState{"PreFilterGCEPDLimits"};
const StateKey kAzureDiskState{"PreFilterAzureDiskLimits"};
const StateKey kCinderState{"PreFilterCinderLimits"};

const StateKey& stateKeyOf(const volumelimits::InTreePlugin& plugin) {
  if (&plugin == &volumelimits::kAWSEBS)
    return kEBSState;
  if (&plugin == &volumelimits::kGCEPD)
    return kGCEPDState;
  if (&plugin == &volumelimits::kAzureDisk)
    return kAzureDiskState;
  return kCinderState;
}

struct InTreeState final : StateData {
  KeepAlive keep;  // what the keys point into
  std::vector<VolumeKey> volumes;
  std::unique_ptr<StateData> clone() const override { return std::make_unique<InTreeState>(*this); }
};

bool countsFor(const PodVolume& v, const volumelimits::InTreePlugin& plugin) {
  return v.kind == plugin.kind || v.usesClaim();
}

}  // namespace

bool isEBSNitroInstanceType(std::string_view instance_type) {
  const bool nitro_family =
      instance_type.size() >= 2 &&
      (instance_type[0] == 'c' || instance_type[0] == 'm' || instance_type[0] == 'r') &&
      instance_type[1] == '5';
  return nitro_family || instance_type.find("t3") != std::string_view::npos ||
         instance_type.find("z1d") != std::string_view::npos;
}

std::optional<std::int64_t> maxPDVolumesFromEnv() {
  const char* raw = std::getenv(std::string(kKubeMaxPDVols).c_str());
  if (raw == nullptr || *raw == '\0')
    return std::nullopt;
  const std::string_view text(raw);
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0) {
    KOORD_LOG_ERROR("{}=\"{}\": not a positive integer, using the default volume limits",
                    kKubeMaxPDVols, text);
    return std::nullopt;
  }
  return value;
}

NonCSILimits::NonCSILimits(std::string_view name, const volumelimits::InTreePlugin& plugin,
                           FrameworkHandle& handle, std::optional<std::int64_t> max_from_env)
    : name_(name), plugin_(plugin), storage_(handle.cluster()), max_from_env_(max_from_env) {}

std::int64_t NonCSILimits::defaultLimit(const Node& node) const {
  if (max_from_env_)
    return *max_from_env_;
  if (&plugin_ == &volumelimits::kAWSEBS) {
    auto it = node.labels.find(kInstanceTypeLabel);
    if (it == node.labels.end())
      it = node.labels.find(kBetaInstanceTypeLabel);
    const std::string_view type = it == node.labels.end() ? std::string_view{} : it->second;
    return isEBSNitroInstanceType(type) ? kDefaultMaxEBSNitroVolumes : kDefaultMaxEBSVolumes;
  }
  if (&plugin_ == &volumelimits::kGCEPD)
    return kDefaultMaxGCEPDVolumes;
  if (&plugin_ == &volumelimits::kAzureDisk)
    return kDefaultMaxAzureDiskVolumes;
  return kDefaultMaxCinderVolumes;
}

Status NonCSILimits::podVolumes(const PodInfo& pod, KeepAlive& keep,
                                std::vector<VolumeKey>& out) const {
  for (const PodVolume& volume : pod.volumes) {
    if (volume.kind != plugin_.kind && volume.usesClaim() && volume.id.empty())
      return Status::error(std::string(volumelimits::kErrClaimWithoutName));
    if (auto key =
            volumelimits::resolveInTreeVolume(storage_, plugin_, pod.namespace_, volume, keep))
      volumelimits::insertUnique(out, *key);
  }
  return Status::success();
}

bool NonCSILimits::passesEveryNode(const PodInfo& pod) const {
  return std::none_of(pod.volumes.begin(), pod.volumes.end(),
                      [&](const PodVolume& v) { return countsFor(v, plugin_); });
}

Status NonCSILimits::preFilter(CycleState& state, const PodInfo& pod) {
  if (passesEveryNode(pod))
    return Status::skip();
  auto data = std::make_unique<InTreeState>();
  // 1.20 reports this error from Filter on every node: the cycle ends either way.
  if (Status s = podVolumes(pod, data->keep, data->volumes); !s.ok())
    return s;
  if (data->volumes.empty())
    return Status::skip();
  state.write(stateKeyOf(plugin_), std::move(data));
  return Status::success();
}

Status NonCSILimits::filter(const CycleState& state, const PodInfo& pod,
                            const NodeInfo& node) const {
  // Nearly every pod has a volume (its service account token); few can count here.
  if (passesEveryNode(pod))
    return Status::success();
  volumelimits::ScratchLease lease;
  if (const auto* cached = state.read<InTreeState>(stateKeyOf(plugin_)))
    return fits(cached->volumes, node, *lease);
  // Profiles listing the plugin at Filter only (1.20's) resolve the pod's volumes per node.
  if (Status s = podVolumes(pod, lease->keep, lease->fresh); !s.ok())
    return s;
  return fits(lease->fresh, node, *lease);
}

Status NonCSILimits::fits(const std::vector<VolumeKey>& pod_volumes, const NodeInfo& node,
                          volumelimits::CountScratch& scratch) const {
  if (pod_volumes.empty())
    return Status::success();
  if (node.node == nullptr)
    return Status::error("node not found");
  // Migrated: the node attaches these volumes through the CSI driver, NodeVolumeLimits counts
  // them.
  if (volumelimits::migrated(storage_.csiNode(node.name()).get(), plugin_))
    return Status::success();
  const std::int64_t limit =
      volumelimits::allocatableCount(node, plugin_.limit_key).value_or(defaultLimit(*node.node));
  const auto fresh_total = static_cast<std::int64_t>(pod_volumes.size());

  // Room enough even if every candidate volume on the node were distinct and of this type: no
  // claim need be read.
  std::int64_t candidates = 0;
  bool unnamed_claim = false;
  for (const auto& other : node.pods) {
    for (const PodVolume& v : other->volumes) {
      if (!countsFor(v, plugin_))
        continue;
      ++candidates;
      unnamed_claim = unnamed_claim || (v.kind != plugin_.kind && v.id.empty());
    }
  }
  if (!unnamed_claim && candidates + fresh_total <= limit)
    return Status::success();

  for (const auto& other : node.pods) {
    for (const PodVolume& v : other->volumes) {
      if (!countsFor(v, plugin_))
        continue;
      if (v.kind != plugin_.kind && v.id.empty())
        return Status::error(std::string(volumelimits::kErrClaimWithoutName));
      if (auto key = volumelimits::resolveInTreeVolume(storage_, plugin_, other->namespace_, v,
                                                       scratch.keep))
        volumelimits::insertUnique(scratch.attached, *key);
    }
  }
  std::int64_t fresh = 0;
  for (const VolumeKey& k : pod_volumes) {
    if (!volumelimits::contains(scratch.attached, k))
      ++fresh;
  }
  if (static_cast<std::int64_t>(scratch.attached.size()) + fresh > limit)
    return Status::unschedulable(std::string(volumelimits::kErrReasonMaxVolumeCountExceeded));
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
