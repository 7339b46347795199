#include "plugins/deviceshare/device_share_plugin.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <utility>

#include <fmt/format.h>

#include "framework/pod_changes.h"
#include "framework/reservation_nomination.h"
#include "framework/snapshot.h"
#include "koord/apis/device_allocation.h"
#include "koord/apis/xpu_device_info.h"
#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "plugins/deviceshare/pod_device_request.h"
#include "plugins/deviceshare/reservation_devices.h"
#include "plugins/upstream/normalize_score.h"

namespace koord::roles::scheduler::deviceshare {

namespace {

const StateKey kStateKey("DeviceShare");

// The pod's requests from PreFilter, what preemption's what-if frees per node, and what Reserve
// gave (so that Unreserve takes back exactly that).
struct DeviceShareState final : StateData {
  PodDeviceRequests requests;
  /// The pod's device-allocate-hint and device-joint-allocate.
  std::optional<PodDeviceHints> hints;
  /// GPUs and nothing else, without hints or gpu.shared: Filter and Score read the nodes'
  /// GpuFastView.
  bool gpu_only = false;
  /// The pod shares a GPU (PodDeviceRequests::sharesGpu): refused on unsupported models.
  bool shares_gpu = false;
  GpuDemandMemo gpu_demand;
  /// Set when the request must match a shared-resource template: per GPU model, the templates
  /// it equals (never empty: PreFilter refuses the pod otherwise).
  std::optional<TemplateCandidates> templates;
  /// The Reservation plugin matched reservations for the pod (its BeforePreFilter runs before
  /// PreFilter): only then do Filter and Score look them up per node.
  bool reservation_matches = false;
  std::map<std::string, std::vector<ReleasedDevice>, std::less<>> released;
  std::string reserved_node;
  bool counted = false;  // Reserve added the pod to reserved_node's accounting
  std::unique_ptr<StateData> clone() const override {
    return std::make_unique<DeviceShareState>(*this);
  }
};

DeviceScorer scorerFrom(const config::KoordScoringStrategy& spec) {
  std::vector<std::pair<std::string, std::int64_t>> weights;
  weights.reserve(spec.resources.size());
  for (const auto& r : spec.resources)
    weights.emplace_back(r.name, r.weight);
  const ScoringStrategyType type = spec.type == config::KoordScoringType::kMostAllocated
                                       ? ScoringStrategyType::kMostAllocated
                                       : ScoringStrategyType::kLeastAllocated;
  return DeviceScorer::fromSpec(type, weights);
}

// The pod's device-allocated annotation; nullopt (logged) when it is malformed, which then
// counts as holding nothing, as in Koordinator.
std::optional<apis::DeviceAllocations> allocationsOf(const PodInfo& pod) {
  auto parsed = apis::podDeviceAllocations(pod.annotations);
  if (!parsed) {
    KOORD_LOG_WARNING("deviceshare: pod {}: {}", pod.key(), parsed.error().message);
    return std::nullopt;
  }
  if (!*parsed)
    return apis::DeviceAllocations{};
  return std::move(**parsed);
}

// The templates a request matched on the node's GPU model (its gpu-vendor and gpu-model
// labels); nullptr when none did.
const std::vector<std::string>* templatesFor(const TemplateCandidates& candidates,
                                             const Node& node) {
  const auto label = [&](std::string_view key) -> std::string_view {
    auto it = node.labels.find(key);
    return it == node.labels.end() ? std::string_view() : std::string_view(it->second);
  };
  return candidates.find(templatesKey(label(apis::kLabelGPUVendor), label(apis::kLabelGPUModel)));
}

}  // namespace

void DeviceSharePlugin::nameTemplate(const TemplateCandidates& candidates, const std::string& node,
                                     apis::DeviceAllocations& result) const {
  // One template is the slice asked for (Koordinator's "koord style"); with several the pod's
  // amounts fit more than one and none is named, as Koordinator leaves it.
  const NodeInfo* info = handle_.snapshot().get(node);
  const std::vector<std::string>* names =
      info != nullptr && info->node != nullptr ? templatesFor(candidates, *info->node) : nullptr;
  if (names == nullptr || names->size() != 1)
    return;
  auto gpus = result.find(apis::kDeviceTypeGPU);
  if (gpus == result.end())
    return;
  for (apis::DeviceAllocation& a : gpus->second)
    a.gpu_shared_resource_template = names->front();
}

DeviceSharePlugin::DeviceSharePlugin(std::shared_ptr<const DeviceShareArgs> args,
                                     FrameworkHandle& handle)
    : args_(args ? std::move(args) : std::make_shared<const DeviceShareArgs>()),
      handle_(handle),
      scorer_(scorerFrom(args_->scoring_strategy)) {
  if (!args_->allocator.empty()) {
    KOORD_LOG_WARNING(
        "deviceshare: DeviceShareArgs allocator ({}) has no effect: koord has one device "
        "allocator, as Koordinator has",
        args_->allocator);
  }
  templates_config_ = args_->gpu_shared_resource_templates
                          ? *args_->gpu_shared_resource_templates
                          : defaultGpuSharedResourceTemplatesConfig();
  for (const std::string& name : templates_config_.matched_resources) {
    // A name DeviceShare does not count is in no request it sees, so it governs none.
    if (auto r = parseDeviceResource(name))
      template_matched_resources_ |= DeviceResources::bit(*r);
  }
  if (metrics::Registry* r = handle_.metricsRegistry()) {
    allocated_metric_ =
        &r->gauge(kAllocatedMetric,
                  "Device resources held by pods on a node, per device type and resource (percent "
                  "of a device; bytes for gpu-memory).",
                  {"node", "type", "resource"});
  }
  source_ = handle_.cluster().source<apis::Device>(kDeviceSource);
  if (source_ != nullptr) {
    source_->subscribe({
        [this](const std::shared_ptr<const apis::Device>& d) { onDevice(*d); },
        [this](const apis::Device& old_device, const std::shared_ptr<const apis::Device>& d) {
          // The koordlet rewrites its Device often; only a change of devices matters here.
          if (old_device.devices != d->devices || cache_.find(d->name) == nullptr)
            onDevice(*d);
        },
        [this](const apis::Device& d) { onDeviceDelete(d); },
    });
    // Objects held before the plugin was built (an informer's handlers see them otherwise).
    for (const auto& d : source_->list())
      onDevice(*d);
  }
  if (const auto* maps = handle_.cluster().source<TemplatesConfigMap>(kTemplatesConfigMapSource)) {
    if (!maps->narrowToNamespace(templates_config_.config_map_namespace)) {
      KOORD_LOG_WARNING(
          "deviceshare: gpuSharedResourceTemplatesConfig.configMapNamespace {}: another "
          "profile's DeviceShare reads its templates from another namespace, and koord watches "
          "one; this profile's ConfigMap {} is not found there",
          templates_config_.config_map_namespace, templates_config_.config_map_name);
    }
    maps->subscribe({
        [this](const std::shared_ptr<const TemplatesConfigMap>& c) { onTemplatesConfigMap(*c); },
        [this](const TemplatesConfigMap&, const std::shared_ptr<const TemplatesConfigMap>& c) {
          onTemplatesConfigMap(*c);
        },
        [this](const TemplatesConfigMap& c) { onTemplatesConfigMapDelete(c); },
    });
    for (const auto& c : maps->list())
      onTemplatesConfigMap(*c);
  }
}

void DeviceSharePlugin::onTemplatesConfigMap(const TemplatesConfigMap& config_map) {
  if (config_map.namespace_ != templates_config_.config_map_namespace ||
      config_map.name != templates_config_.config_map_name)
    return;
  auto parsed = GpuSharedResourceTemplates::parse(config_map.data_yaml.value_or(""));
  if (!parsed) {
    KOORD_LOG_WARNING("deviceshare: ConfigMap {}/{}: {}; the templates stay as they were",
                      config_map.namespace_, config_map.name, parsed.error().message);
    return;
  }
  KOORD_LOG_INFO("deviceshare: GPU shared-resource templates from ConfigMap {}/{}: {} model(s)",
                 config_map.namespace_, config_map.name, parsed->modelCount());
  templates_.set(std::make_shared<const GpuSharedResourceTemplates>(std::move(*parsed)));
  handle_.requeueUnschedulable();
}

void DeviceSharePlugin::onTemplatesConfigMapDelete(const TemplatesConfigMap& config_map) {
  if (config_map.namespace_ != templates_config_.config_map_namespace ||
      config_map.name != templates_config_.config_map_name)
    return;
  KOORD_LOG_WARNING("deviceshare: ConfigMap {}/{} deleted: no GPU shared-resource templates",
                    config_map.namespace_, config_map.name);
  templates_.set(nullptr);
}

// ---- the caches ----

void DeviceSharePlugin::onDevice(const apis::Device& device) {
  NodeDevices devices = readNodeDevices(device);
  if (!devices.skipped.empty()) {
    KOORD_LOG_WARNING("deviceshare: Device {}: {} device(s) left out, first: {}", device.name,
                      devices.skipped.size(), devices.skipped.front());
  }
  auto entry = cache_.getOrCreate(device.name);
  if (entry == nullptr)
    return;
  {
    std::unique_lock lock(entry->mu);
    entry->state.setDevices(std::move(devices));
    publish(*entry, device.name);
  }
  handle_.requeueUnschedulable();
}

void DeviceSharePlugin::onDeviceDelete(const apis::Device& device) {
  // Deleted by mistake and soon written again by the koordlet: until then nothing more is placed
  // on the node, while what its pods hold stays counted.
  if (auto entry = cache_.find(device.name)) {
    std::unique_lock lock(entry->mu);
    entry->state.markAllUnhealthy();
    publish(*entry, device.name);
  }
  handle_.requeueUnschedulable();
}

void DeviceSharePlugin::onNodeAdd(const Node& node) {
  if (source_ == nullptr || cache_.find(node.name) != nullptr)
    return;
  if (auto device = source_->get(node.name))
    onDevice(*device);
}

void DeviceSharePlugin::onNodeDelete(const Node& node) {
  if (auto entry = cache_.remove(node.name)) {
    std::unique_lock lock(entry->mu);
    unpublish(*entry);
    entry->state = NodeDeviceState();
    cache_.publishView(*entry);
  }
}

void DeviceSharePlugin::countPod(const PodInfo& pod, const apis::DeviceAllocations& allocations) {
  auto entry = cache_.getOrCreate(pod.node_name);
  if (entry == nullptr)
    return;
  std::unique_lock lock(entry->mu);
  if (entry->state.addPod(pod.uid, allocations))
    publish(*entry, pod.node_name);
}

void DeviceSharePlugin::uncountPod(const std::string& node, const std::string& uid) {
  auto entry = cache_.find(node);
  if (entry == nullptr)
    return;
  std::unique_lock lock(entry->mu);
  if (entry->state.removePod(uid))
    publish(*entry, node);
}

void DeviceSharePlugin::onReservationAvailable(std::shared_ptr<const ReservationState> r) {
  const PodInfo& stand_in = *r->reserve_pod;
  const std::string& node = r->object->node_name;
  if (auto moved = reservation_nodes_.place(stand_in.uid, node))
    uncountPod(*moved, stand_in.uid);
  // The Reservation's device-allocated is the word that counts: what Reserve counted for the
  // stand-in gives way to it, under one hold of the lock so that no Filter sees neither.
  const auto allocations = allocationsOf(stand_in);
  auto entry = cache_.getOrCreate(node);
  if (entry == nullptr)
    return;
  std::unique_lock lock(entry->mu);
  const apis::DeviceAllocations* counted = entry->state.podAllocations(stand_in.uid);
  if (allocations && counted != nullptr && *counted == *allocations)
    return;
  bool changed = entry->state.removePod(stand_in.uid);
  if (allocations && !allocations->empty())
    changed = entry->state.addPod(stand_in.uid, *allocations) || changed;
  if (changed)
    publish(*entry, node);
}

void DeviceSharePlugin::onReservationGone(const std::string& uid) {
  if (auto node = reservation_nodes_.forget(uid))
    uncountPod(*node, uid);
}

void DeviceSharePlugin::onAssignedPodAdd(const PodInfo& pod) {
  if (pod.finished()) {
    uncountPod(pod.node_name, pod.uid);
    return;
  }
  auto allocations = allocationsOf(pod);
  // Already counted when this scheduler reserved it: the first count stays.
  if (allocations && !allocations->empty())
    countPod(pod, *allocations);
}

void DeviceSharePlugin::onAssignedPodUpdate(const PodInfo& old_pod, const PodInfo& pod) {
  if (pod.finished()) {
    uncountPod(pod.node_name, pod.uid);
    return;
  }
  auto allocations = allocationsOf(pod);
  if (!allocations)
    return;
  const auto old_allocations = allocationsOf(old_pod);
  if (old_allocations && *old_allocations == *allocations && old_pod.node_name == pod.node_name)
    return;
  if (old_allocations && !old_allocations->empty())
    uncountPod(old_pod.node_name, old_pod.uid);
  if (!allocations->empty())
    countPod(pod, *allocations);
}

void DeviceSharePlugin::onAssignedPodDelete(const PodInfo& pod) {
  uncountPod(pod.node_name, pod.uid);
}

void DeviceSharePlugin::publish(NodeDeviceEntry& entry, const std::string& node) {
  cache_.publishView(entry);
  if (allocated_metric_ == nullptr)
    return;
  std::vector<PublishedSeries> now;
  for (DeviceType type : kDeviceTypes) {
    const auto& devices = entry.state.devices(type);
    if (devices.empty())
      continue;
    DeviceResources total;
    DeviceResources used;
    for (const DeviceState& d : devices) {
      total.add(d.info.total);
      used.add(d.used);
    }
    const std::uint8_t names = total.names | used.names;
    for (std::size_t i = 0; i < kDeviceResourceCount; ++i) {
      const auto r = static_cast<DeviceResource>(i);
      if ((names & DeviceResources::bit(r)) == 0)
        continue;
      auto held = std::find_if(entry.published.begin(), entry.published.end(),
                               [&](const PublishedSeries& p) {
                                 return p.type == type && p.resource == r && p.gauge != nullptr;
                               });
      PublishedSeries series;
      if (held != entry.published.end()) {
        series = std::move(*held);
        held->gauge = nullptr;
      } else {
        series = {
            type, r, {node, std::string(deviceTypeName(type)), std::string(deviceResourceName(r))}};
        series.gauge = &allocated_metric_->with(series.labels);
      }
      series.gauge->set(static_cast<double>(used.get(r)));
      now.push_back(std::move(series));
    }
  }
  // What was moved into `now` has no gauge left here; the rest left the node.
  for (const PublishedSeries& gone : entry.published) {
    if (gone.gauge != nullptr)
      allocated_metric_->remove(gone.labels);
  }
  entry.published = std::move(now);
}

void DeviceSharePlugin::unpublish(NodeDeviceEntry& entry) const {
  if (allocated_metric_ != nullptr) {
    for (const PublishedSeries& series : entry.published)
      allocated_metric_->remove(series.labels);
  }
  entry.published.clear();
}

// ---- extension points ----

Status DeviceSharePlugin::refuseUnsupportedModel(const kube::Labels& node_labels) const {
  const auto label = [&](std::string_view key) -> std::string_view {
    auto it = node_labels.find(key);
    return it == node_labels.end() ? std::string_view() : std::string_view(it->second);
  };
  const std::string_view vendor = label(apis::kLabelGPUVendor);
  const std::string_view model = label(apis::kLabelGPUModel);
  for (const GpuShareUnsupportedModel& m : args_->gpu_share_unsupported_models) {
    if (m.vendor == vendor && m.model == model)
      return Status::unresolvable(
          fmt::format("model \"{}\" of vendor \"{}\" does not support GPU Share", model, vendor));
  }
  return Status::success();
}

AllocateOptions DeviceSharePlugin::optionsFor(const CycleState& state, std::string_view node,
                                              bool numa_from_store) const {
  AllocateOptions options;
  options.scorer = &scorer_;
  if (const auto* s = state.read<DeviceShareState>(kStateKey)) {
    if (auto it = s->released.find(node); it != s->released.end())
      options.released = it->second;
    if (s->hints)
      options.hints = &*s->hints;
  }
  if (numa_from_store) {
    if (const NUMAAffinityStore* store = numaAffinityStore(state)) {
      const NumaNodeMask affinity = store->get(node).affinity;
      if (affinity != 0)
        options.numa_nodes = affinity;
    }
  }
  return options;
}

Status DeviceSharePlugin::preFilter(CycleState& state, const PodInfo& pod) {
  // A Reservation's stand-in takes devices as its template asks: they are counted under the
  // Reservation's UID for its owner pods.
  auto requests = podDeviceRequests(pod.requests);
  if (!requests)
    return Status::unresolvable(requests.error().message);
  if (requests->empty())
    return Status::skip();
  auto hints = podDeviceHints(pod.annotations, *requests);
  if (!hints)
    return Status::unresolvable(hints.error().message);
  initNUMAAffinityStore(state);
  auto s = std::make_unique<DeviceShareState>();
  s->requests = *requests;
  s->hints = std::move(*hints);
  s->gpu_only = requests->types == (1u << static_cast<unsigned>(DeviceType::kGPU)) && !s->hints &&
                requests->gpu_shared == 0 && !requests->of(DeviceType::kGPU).namesNpu();
  s->shares_gpu = requests->sharesGpu();
  if (s->shares_gpu) {
    const DeviceResources per_gpu = requests->perGpu();
    if ((per_gpu.names & template_matched_resources_) != 0) {
      const auto templates = templates_.get();
      s->templates = templates ? templates->match(per_gpu) : TemplateCandidates{};
      if (s->templates->empty())
        return Status::unresolvable(std::string(kNoMatchedTemplate));
    }
  }
  s->reservation_matches = reservationMatches(state) != nullptr;
  state.write(kStateKey, std::move(s));
  return Status::success();
}

Status DeviceSharePlugin::addPod(CycleState& state, const PodInfo& /*pod_to_schedule*/,
                                 const PodInfo& pod_to_add, const NodeInfo& node) const {
  auto* s = state.readMutable<DeviceShareState>(kStateKey);
  if (s == nullptr)
    return Status::success();
  auto entry = cache_.find(node.nodeSlot());
  if (entry == nullptr)
    return Status::success();
  std::shared_lock lock(entry->mu);
  if (const auto* held = entry->state.podAllocations(pod_to_add.uid)) {
    auto it = s->released.find(node.name());
    if (it != s->released.end())
      moveReleased(it->second, *held, false);
  }
  return Status::success();
}

Status DeviceSharePlugin::removePod(CycleState& state, const PodInfo& /*pod_to_schedule*/,
                                    const PodInfo& pod_to_remove, const NodeInfo& node) const {
  auto* s = state.readMutable<DeviceShareState>(kStateKey);
  if (s == nullptr)
    return Status::success();
  auto entry = cache_.find(node.nodeSlot());
  if (entry == nullptr)
    return Status::success();
  std::shared_lock lock(entry->mu);
  if (const auto* held = entry->state.podAllocations(pod_to_remove.uid))
    moveReleased(s->released[node.name()], *held, true);
  return Status::success();
}

Status DeviceSharePlugin::filter(const CycleState& state, const PodInfo& /*pod*/,
                                 const NodeInfo& node) const {
  const auto* s = state.read<DeviceShareState>(kStateKey);
  if (s == nullptr)
    return Status::success();
  if (s->shares_gpu && !args_->gpu_share_unsupported_models.empty() && node.node != nullptr) {
    if (Status refused = refuseUnsupportedModel(node.node->labels); !refused.ok())
      return refused;
  }
  // A node where the pod matched reservations needs their devices, which the view does not keep.
  const ReservationMatches* matches = s->reservation_matches ? reservationMatches(state) : nullptr;
  const ReservationMatches::List* matched = matches != nullptr ? matches->find(node) : nullptr;
  if (s->gpu_only && s->released.empty() && matched == nullptr) {
    GpuFastView::Snapshot view;
    switch (cache_.readView(node.nodeSlot(), view, GpuFastView::Part::kCards)) {
      case GpuFastView::Read::kAbsent:
        return Status::success();
      case GpuFastView::Read::kUsable: {
        GpuDemand demand;
        if (s->gpu_demand.demandOn(view.card_memory, s->requests.of(DeviceType::kGPU), demand))
          return checkGpusFast(view, demand);
        break;
      }
      case GpuFastView::Read::kUnknown:
        break;
    }
  }
  auto entry = cache_.find(node.nodeSlot());
  if (entry == nullptr)
    return Status::success();
  if (s->templates && node.node != nullptr && templatesFor(*s->templates, *node.node) == nullptr)
    return Status::unresolvable(std::string(kNoMatchedTemplate));
  // Koordinator's Filter checks the whole node: the NUMA affinity was checked by the topology
  // manager (allocate()) and is applied at Reserve.
  const AllocateOptions options = optionsFor(state, node.name(), false);
  std::shared_lock lock(entry->mu);
  if (matched != nullptr) {
    const auto reserved = reservedDevicesOf(*matched, entry->state);
    std::string refused;
    for (const ReservedDevices& r : reserved) {
      std::vector<ReleasedDevice> released;
      Status st = checkDevices(entry->state, s->requests, withReservation(options, r, released));
      if (st.ok())
        return st;
      refused = st.message();
    }
    // Without reservation affinity the pod may still take the node's free devices.
    if (!reserved.empty() && matches->required)
      return Status::unschedulable(fmt::format("Reservation(s) {}", refused));
  }
  return checkDevices(entry->state, s->requests, options);
}

Status DeviceSharePlugin::score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                                std::int64_t& score) const {
  score = 0;
  const auto* s = state.read<DeviceShareState>(kStateKey);
  if (s == nullptr)
    return Status::success();
  const ReservationMatches* matches = s->reservation_matches ? reservationMatches(state) : nullptr;
  const ReservationMatches::List* matched = matches != nullptr ? matches->find(node) : nullptr;
  if (s->gpu_only && s->released.empty() && matched == nullptr) {
    const NUMAAffinityStore* store = numaAffinityStore(state);
    GpuFastView::Snapshot view;
    if (store == nullptr || store->get(node.name()).affinity == 0) {
      switch (cache_.readView(node.nodeSlot(), view, GpuFastView::Part::kSums)) {
        case GpuFastView::Read::kAbsent:
          return Status::success();
        case GpuFastView::Read::kUsable: {
          GpuDemand demand;
          if (s->gpu_demand.demandOn(view.card_memory, s->requests.of(DeviceType::kGPU), demand)) {
            score = scoreGpusFast(view, demand, scorer_);
            return Status::success();
          }
          break;
        }
        case GpuFastView::Read::kUnknown:
          break;
      }
    }
  }
  auto entry = cache_.find(node.nodeSlot());
  if (entry == nullptr)
    return Status::success();
  AllocateOptions options = optionsFor(state, node.name(), true);
  std::shared_lock lock(entry->mu);
  // Scored as if the first reservation holding devices there were taken.
  std::vector<ReleasedDevice> released;
  if (matched != nullptr) {
    if (const auto reserved = reservedDevicesOf(*matched, entry->state); !reserved.empty())
      options = withReservation(options, reserved.front(), released);
  }
  // Filter passed the node, so the demand holds; were it refused, the node scores nothing
  // rather than failing the cycle.
  if (Status st = scoreNode(entry->state, s->requests, scorer_, options, score); !st.ok()) {
    KOORD_LOG_WARNING("deviceshare: scoring node {} for pod {}: {}", node.name(), pod.key(),
                      st.message());
    score = 0;
  }
  return Status::success();
}

bool DeviceSharePlugin::scoresEveryNodeAlike(const PodInfo& pod) const {
  auto requests = podDeviceRequests(pod.requests);
  return requests && requests->empty();
}

Status DeviceSharePlugin::normalizeScore(const CycleState& /*state*/, const PodInfo& /*pod*/,
                                         std::vector<NodeScore>& scores) const {
  upstream::defaultNormalizeScore(scheduler::kMaxNodeScore, false, scores);
  return Status::success();
}

Status DeviceSharePlugin::reserve(CycleState& state, const PodInfo& pod, const std::string& node) {
  auto* s = state.readMutable<DeviceShareState>(kStateKey);
  if (s == nullptr)
    return Status::success();
  auto entry = cache_.find(node);
  if (entry == nullptr)
    return Status::success();
  const AllocateOptions options =
      optionsFor(state, node, !args_->disable_device_numa_topology_alignment);
  const ReservationMatches* matches = reservationMatches(state);
  const bool nominated =
      matches != nullptr && matches->nominated != nullptr && matches->nominated->node_name == node;
  apis::DeviceAllocations result;
  {
    std::unique_lock lock(entry->mu);
    // Koordinator's allocateWithNominated: within the nominated reservation's devices first; a
    // Restricted one, or a pod that must go into one, is refused where they do not serve.
    bool placed = false;
    if (nominated) {
      const auto reserved =
          reservedDevicesOf(ReservationMatches::List{matches->nominated}, entry->state);
      if (!reserved.empty()) {
        std::vector<ReleasedDevice> released;
        Status st = allocateDevices(entry->state, s->requests,
                                    withReservation(options, reserved.front(), released), result);
        if (!st.ok() && (reserved.front().restricted || matches->required))
          return st;
        placed = st.ok();
      }
    }
    if (!placed) {
      if (Status st = allocateDevices(entry->state, s->requests, options, result); !st.ok())
        return st;
    }
    if (s->templates)
      nameTemplate(*s->templates, node, result);
    s->counted = entry->state.addPod(pod.uid, result);
    if (!s->counted) {
      KOORD_LOG_WARNING(
          "deviceshare: pod {} is already counted on node {}: its earlier devices stay counted",
          pod.key(), node);
    }
    publish(*entry, node);
  }
  s->reserved_node = node;
  podChanges(state).setAnnotation(apis::kAnnotationDeviceAllocated,
                                  apis::formatDeviceAllocations(result));
  return Status::success();
}

void DeviceSharePlugin::unreserve(CycleState& state, const PodInfo& pod,
                                  const std::string& /*node*/) {
  auto* s = state.readMutable<DeviceShareState>(kStateKey);
  if (s == nullptr || s->reserved_node.empty())
    return;
  if (s->counted)
    uncountPod(s->reserved_node, pod.uid);
  podChanges(state).removeAnnotation(apis::kAnnotationDeviceAllocated);
  s->reserved_node.clear();
  s->counted = false;
}

NUMAProviderHints DeviceSharePlugin::podTopologyHints(const CycleState& state,
                                                      const PodInfo& /*pod*/,
                                                      const NodeInfo& node) const {
  if (args_->disable_device_numa_topology_alignment)
    return {};
  const auto* s = state.read<DeviceShareState>(kStateKey);
  if (s == nullptr)
    return {};
  auto entry = cache_.find(node.nodeSlot());
  if (entry == nullptr)
    return {};
  const AllocateOptions options = optionsFor(state, node.name(), false);
  std::optional<NumaHints> found;
  {
    std::shared_lock lock(entry->mu);
    found = numaHints(entry->state, s->requests, options);
  }
  if (!found)
    return {};
  std::vector<NUMATopologyHint> hints;
  hints.reserve(found->hints.size());
  for (const NumaHint& h : found->hints)
    hints.push_back({.affinity = h.numa_nodes, .preferred = h.preferred, .score = 0});
  NUMAProviderHints out;
  out.reserve(found->resources.size());
  for (std::string_view resource : found->resources)
    out.push_back({.resource = std::string(resource), .hints = hints});
  return out;
}

Status DeviceSharePlugin::allocate(const CycleState& state, const NUMATopologyHint& affinity,
                                   const PodInfo& /*pod*/, const NodeInfo& node) const {
  if (args_->disable_device_numa_topology_alignment)
    return Status::success();
  const auto* s = state.read<DeviceShareState>(kStateKey);
  if (s == nullptr)
    return Status::success();
  auto entry = cache_.find(node.nodeSlot());
  if (entry == nullptr)
    return Status::success();
  AllocateOptions options = optionsFor(state, node.name(), false);
  if (affinity.affinity != 0)
    options.numa_nodes = affinity.affinity;
  std::shared_lock lock(entry->mu);
  return checkDevices(entry->state, s->requests, options);
}

}  // namespace koord::roles::scheduler::deviceshare
