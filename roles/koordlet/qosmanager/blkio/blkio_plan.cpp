#include "qosmanager/blkio/blkio_plan.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "koord/cgroup/kubepods_path.h"
#include "metricsadvisor/resource_collector.h"

namespace koord::roles::koordlet::qosmanager {

namespace {

void addDevices(BlkIOTarget& target, const std::vector<BlockConfig>& blocks, const PodMeta* pod,
                const BlockResolver& resolve, std::vector<std::string>& skipped) {
  for (const auto& block : blocks) {
    auto skip = [&](std::string_view why) {
      skipped.push_back(fmt::format("{}: {} block {:?}: {}; skipped", target.owner,
                                    blockTypeName(block.type), block.name, why));
    };
    if (block.type == BlockType::kVolumeGroup) {
      skip("a volume group's disk needs the LVM lookup, which koord does not do");
      continue;
    }
    if (block.type == BlockType::kPodVolume && pod == nullptr) {
      skip("podvolume blocks apply only in a pod's koordinator.sh/blkioQOS");
      continue;
    }
    auto device = resolve(block, pod);
    if (!device) {
      skip(device.error().message);
      continue;
    }
    auto same = std::find_if(target.devices.begin(), target.devices.end(),
                             [&](const BlkIODevice& d) { return d.device == *device; });
    if (same != target.devices.end())
      same->io = block.io;
    else
      target.devices.push_back({std::move(*device), block.io});
  }
}

}  // namespace

BlockResolver blockResolver(BlkIORoots roots) {
  return [roots = std::move(roots)](const BlockConfig& block,
                                    const PodMeta* pod) -> kube::Expected<std::string> {
    if (block.type == BlockType::kPodVolume && pod != nullptr)
      return resolvePodVolumeBlock(roots, pod->uid, block.name);
    return resolveDeviceBlock(roots, block.name);
  };
}

BlkIOPlan planBlkIO(const BlkIOQOSStrategy& strategy, const std::vector<PodMeta>& pods,
                    cgroup::CgroupDriver driver, const BlockResolver& resolve) {
  BlkIOPlan plan;
  const std::pair<std::string_view, const BlkIOClass*> ls_classes[] = {{"lsrClass", &strategy.lsr},
                                                                       {"lsClass", &strategy.ls}};
  for (auto [name, cls] : ls_classes) {
    if (cls->configured && cls->enable && !cls->blocks.empty()) {
      plan.skipped.push_back(
          fmt::format("{}: blkioQOS applies to beClass and cgroupRoot only, as in Koordinator "
                      "(an LS pod takes its own in koordinator.sh/blkioQOS); skipped",
                      name));
    }
  }
  if (strategy.be.configured) {
    BlkIOTarget t{"beClass", false, cgroup::qosTierDir(driver, cgroup::QoSTier::kBestEffort), {}};
    addDevices(t, strategy.be.applied(), nullptr, resolve, plan.skipped);
    plan.targets.push_back(std::move(t));
  }
  if (strategy.root.configured) {
    BlkIOTarget t{"cgroupRoot", true, "", {}};
    addDevices(t, strategy.root.applied(), nullptr, resolve, plan.skipped);
    plan.targets.push_back(std::move(t));
  }
  for (const auto& pod : pods) {
    // Koordinator's rule: only running pods that carry a QoS label of their own.
    if (apis::podQoSClassRaw(pod.labels) == apis::QoSClass::kNone || !pod.isRunning())
      continue;
    auto annotation = pod.annotations.find(kAnnotationPodBlkIOQOS);
    if (annotation == pod.annotations.end())
      continue;
    auto blocks = decodePodBlkIOQOS(annotation->second);
    if (!blocks) {
      plan.errors.push_back(fmt::format("pod {}: {}", pod.key(), blocks.error().message));
      continue;
    }
    auto dir = podCgroupDir(driver, pod);
    if (!dir) {
      plan.errors.push_back(fmt::format("pod {}: {}", pod.key(), dir.error().message));
      continue;
    }
    BlkIOTarget t{"pod " + pod.key(), false, std::move(*dir), {}};
    addDevices(t, *blocks, &pod, resolve, plan.skipped);
    plan.targets.push_back(std::move(t));
  }
  return plan;
}

}  // namespace koord::roles::koordlet::qosmanager
