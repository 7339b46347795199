// Koordinator's DeviceShare plugin: GPUs (whole or shared), RDMA NICs and FPGAs placed per device
// from each node's Device object, recorded in the pod's device-allocated annotation at Reserve.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "framework/assigned_pod_listener.h"
#include "framework/framework_handle.h"
#include "framework/node_listener.h"
#include "framework/numa_topology_hint.h"
#include "framework/plugin.h"
#include "framework/reservation_listener.h"
#include "koord/apis/device.h"
#include "plugins/deviceshare/allocator.h"
#include "plugins/deviceshare/args.h"
#include "plugins/deviceshare/device_cache.h"
#include "plugins/deviceshare/gpu_shared_resource_templates.h"
#include "plugins/deviceshare/scoring.h"

namespace koord::metrics {
template <typename T>
class Family;
class Gauge;
}  // namespace koord::metrics

namespace koord::roles::scheduler::deviceshare {

/// The metric of what pods hold: per node, device type and resource, the sum over the node's
/// devices (percent of a device; bytes for gpu-memory).
inline constexpr std::string_view kAllocatedMetric = "scheduler_device_allocated";
/// Koordinator's refusal of a request that must match a shared-resource template and does not.
inline constexpr std::string_view kNoMatchedTemplate = "no matched GPU shared resource template";

class DeviceSharePlugin final : public PreFilterPlugin,
                                public PreFilterExtensions,
                                public FilterPlugin,
                                public ScorePlugin,
                                public ReservePlugin,
                                public NUMATopologyHintProvider,
                                public AssignedPodListener,
                                public ReservationListener,
                                public NodeListener {
 public:
  DeviceSharePlugin(std::shared_ptr<const DeviceShareArgs> args, FrameworkHandle& handle);

  std::string_view name() const override { return kPluginName; }
  const DeviceShareArgs& args() const { return *args_; }
  const DeviceCache& cache() const { return cache_; }

  /// The pod's device requests; none: Skip (Filter and the preemption hooks are left out);
  /// invalid: UnschedulableAndUnresolvable with Koordinator's message.
  Status preFilter(CycleState& state, const PodInfo& pod) override;
  const PreFilterExtensions* preFilterExtensions() const override { return this; }
  /// Preemption's what-if: what a victim holds on the node counts as free (RemovePod), again as
  /// held when it is put back (AddPod).
  Status addPod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_add,
                const NodeInfo& node) const override;
  Status removePod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_remove,
                   const NodeInfo& node) const override;

  /// A node without device accounting passes (as in Koordinator); else checkDevices.
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  /// scoreNode with the args' scoringStrategy, within the node's NUMA affinity when the topology
  /// manager chose one; normalised over the nodes (DefaultNormalizeScore).
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;
  /// A pod asking no devices scores 0 everywhere: the framework leaves Score out for it.
  bool scoresEveryNodeAlike(const PodInfo& pod) const override;
  bool hasNormalizeScore() const override { return true; }
  Status normalizeScore(const CycleState& state, const PodInfo& pod,
                        std::vector<NodeScore>& scores) const override;

  /// Chooses the devices (within the NUMA affinity unless disableDeviceNUMATopologyAlignment),
  /// counts them on the node at once and writes the device-allocated annotation through the
  /// cycle's PodChanges. Unreserve undoes both.
  Status reserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void unreserve(CycleState& state, const PodInfo& pod, const std::string& node) override;

  /// Per resource of the request, the NUMA node sets its devices fit within; nothing with
  /// disableDeviceNUMATopologyAlignment.
  NUMAProviderHints podTopologyHints(const CycleState& state, const PodInfo& pod,
                                     const NodeInfo& node) const override;
  Status allocate(const CycleState& state, const NUMATopologyHint& affinity, const PodInfo& pod,
                  const NodeInfo& node) const override;

  /// Bound pods' device-allocated annotations, counted on their nodes.
  void onAssignedPodAdd(const PodInfo& pod) override;
  void onAssignedPodUpdate(const PodInfo& old_pod, const PodInfo& pod) override;
  void onAssignedPodDelete(const PodInfo& pod) override;

  /// An Available reservation's device-allocated counts as held under its UID (what its owner
  /// pods take first); a finished or deleted one releases it.
  void onReservationAvailable(std::shared_ptr<const ReservationState> r) override;
  void onReservationGone(const std::string& uid) override;

  /// A node (re)appearing takes its Device from the informer; a deleted one drops its entry.
  void onNodeAdd(const Node& node) override;
  void onNodeUpdate(const Node& /*old_node*/, const Node& /*node*/) override {}
  void onNodeDelete(const Node& node) override;

  /// The Device informer's events (tests call them directly): a Device sets its node's devices,
  /// a deleted one marks them all unhealthy; each requeues the unschedulable pods.
  void onDevice(const apis::Device& device);
  void onDeviceDelete(const apis::Device& device);

  /// The ConfigMap informer's events (tests call them directly): the args' templates ConfigMap
  /// replaces the templates, a malformed one is logged and changes nothing, a deleted one leaves
  /// none (every request they govern is refused until it is back).
  void onTemplatesConfigMap(const TemplatesConfigMap& config_map);
  void onTemplatesConfigMapDelete(const TemplatesConfigMap& config_map);

 private:
  /// Unresolvable where the node's gpu-vendor and gpu-model labels name a model of
  /// gpuShareUnsupportedModels.
  Status refuseUnsupportedModel(const kube::Labels& node_labels) const;
  /// Names the matched template on each GPU of `result` when the node's model has exactly one.
  void nameTemplate(const TemplateCandidates& candidates, const std::string& node,
                    apis::DeviceAllocations& result) const;
  AllocateOptions optionsFor(const CycleState& state, std::string_view node,
                             bool numa_from_store) const;
  void countPod(const PodInfo& pod, const apis::DeviceAllocations& allocations);
  void uncountPod(const std::string& node, const std::string& uid);
  void publish(NodeDeviceEntry& entry, const std::string& node);
  void unpublish(NodeDeviceEntry& entry) const;

  std::shared_ptr<const DeviceShareArgs> args_;
  FrameworkHandle& handle_;
  DeviceScorer scorer_;
  DeviceCache cache_;
  const ObjectSource<apis::Device>* source_ = nullptr;
  /// gpuSharedResourceTemplatesConfig, Koordinator's default when the args leave it out.
  GpuSharedResourceTemplatesConfig templates_config_;
  /// Bit per DeviceResource: a shared request naming one of these must match a template.
  std::uint8_t template_matched_resources_ = 0;
  GpuSharedResourceTemplatesCache templates_;
  metrics::Family<metrics::Gauge>* allocated_metric_ = nullptr;
  /// Where the reservations whose devices are counted are.
  ReservationNodes reservation_nodes_;
};

}  // namespace koord::roles::scheduler::deviceshare
