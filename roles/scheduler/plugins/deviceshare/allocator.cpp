#include "plugins/deviceshare/allocator.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace koord::roles::scheduler::deviceshare {

namespace {

// Koordinator's reason, by type; Filter says it for most nodes, so it is not formatted each time.
constexpr std::array<std::string_view, kDeviceTypeCount> kInsufficient{
    "Insufficient gpu devices", "Insufficient rdma devices", "Insufficient fpga devices"};

Status insufficient(DeviceType type) {
  return Status::unschedulable(std::string(kInsufficient[static_cast<std::size_t>(type)]));
}

Status unresolvableInsufficient(DeviceType type) {
  return Status::unresolvable(std::string(kInsufficient[static_cast<std::size_t>(type)]));
}

std::int64_t clampToInt64(WideInt v) {
  if (v > std::numeric_limits<std::int64_t>::max())
    return std::numeric_limits<std::int64_t>::max();
  if (v < std::numeric_limits<std::int64_t>::min())
    return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}

// Go's int64(float64) on amd64 for a value out of range: the minimum int64.
std::int64_t truncateToInt64(double v) {
  if (!(v > -9.223372036854775808e18 && v < 9.223372036854775808e18))
    return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}

bool onNumaNodes(const DeviceState& d, const AllocateOptions& options) {
  if (!options.numa_nodes)
    return true;
  return d.info.numa_node >= 0 && ((*options.numa_nodes >> d.info.numa_node) & 1u) != 0;
}

// The device's free amounts with what preempted pods give back (Koordinator's
// calcFreeWithPreemptible).
DeviceResources freeOf(const DeviceState& d, DeviceType type, const AllocateOptions& options) {
  if ((options.only_released_types >> static_cast<unsigned>(type)) & 1u) {
    // Only the reservation's hold: what of it no owner took (its owners' devices are counted on
    // the device besides the hold).
    DeviceResources kept;
    for (const ReleasedDevice& r : options.released) {
      if (r.type == type && r.minor == d.info.minor)
        kept.add(r.resources);
    }
    if (kept.isZero())
      return kept;
    DeviceResources used = d.used;
    used.subtractNonNegative(kept);
    DeviceResources free = d.info.total;
    free.subtractNonNegative(used);
    for (std::size_t i = 0; i < kDeviceResourceCount; ++i)
      kept.amount[i] = std::min(kept.amount[i], free.amount[i]);
    return kept;
  }
  if (options.released.empty())
    return d.free;
  DeviceResources used = d.used;
  bool released = false;
  for (const ReleasedDevice& r : options.released) {
    if (r.type == type && r.minor == d.info.minor) {
      used.subtractNonNegative(r.resources);
      released = true;
    }
  }
  if (!released)
    return d.free;
  DeviceResources free = d.info.total;
  free.subtractNonNegative(used);
  return free;
}

const DeviceTypeHint* hintOf(const AllocateOptions& options, DeviceType type) {
  return options.hints != nullptr ? options.hints->of(type) : nullptr;
}

// The free VF lowest by bus id (info.vfs is in that order) in a group the hint's vfSelector
// matches.
std::optional<DeviceVF> freeVF(const DeviceState& d, const DeviceTypeHint& hint) {
  if (d.free_vfs == 0)
    return std::nullopt;
  for (std::size_t i = 0; i < d.info.vfs.size(); ++i) {
    const DeviceVF& vf = d.info.vfs[i];
    if (d.vf_holders[i] == 0 && (!hint.vf_selector || vf.group >= d.info.vf_group_labels.size() ||
                                 hint.vf_selector->matches(d.info.vf_group_labels[vf.group])))
      return vf;
  }
  return std::nullopt;
}

bool wantsVF(const DeviceTypeHint* hint) {
  return hint != nullptr && hint->vf_selector;
}

// A PCIe switch: its id under its socket. A device without a topology sits on none.
struct SwitchId {
  std::int32_t socket = -1;
  std::string_view pcie_id;

  static std::optional<SwitchId> of(const DeviceState& d) {
    if (d.info.socket < 0 && d.info.pcie_id.empty())
      return std::nullopt;
    return SwitchId{d.info.socket, d.info.pcie_id};
  }
  friend bool operator==(const SwitchId&, const SwitchId&) = default;
};

bool onSwitches(const DeviceState& d, std::span<const SwitchId> switches) {
  const auto own = SwitchId::of(d);
  return own && std::find(switches.begin(), switches.end(), *own) != switches.end();
}

// Where a joint placement may take devices: one PCIe switch, one NUMA node, or the whole node.
struct Scope {
  std::optional<SwitchId> pcie;
  std::int32_t numa_node = -1;

  bool holds(const DeviceState& d) const {
    if (pcie)
      return onSwitches(d, std::span<const SwitchId>(&*pcie, 1));
    return numa_node < 0 || d.info.numa_node == numa_node;
  }
};

// PCIeLevel exclusivity (Koordinator's filterFreeDevicesByPCIe): no device of the type on d's
// PCIe switch is in use. A device without a topology sits on no switch and never qualifies.
bool switchUntouched(const NodeDeviceState& node, const DeviceState& d, DeviceType type,
                     const AllocateOptions& options) {
  const auto own = SwitchId::of(d);
  if (!own)
    return false;
  for (const DeviceState& e : node.devices(type)) {
    if (SwitchId::of(e) == own && freeOf(e, type, options).amount != e.info.total.amount)
      return false;
  }
  return true;
}

bool fits(const NodeDeviceState& node, const DeviceState& d, DeviceType type,
          const DeviceResources& request, const AllocateOptions& options, DeviceResources& free) {
  if (!onNumaNodes(d, options))
    return false;
  free = freeOf(d, type, options);
  if (free.isZero() || !request.fitsIn(free))
    return false;
  const DeviceTypeHint* hint = hintOf(options, type);
  if (hint == nullptr)
    return true;
  if (hint->selector && !hint->selector->matches(d.info.labels))
    return false;
  if (hint->vf_selector && !freeVF(d, *hint))
    return false;
  return hint->exclusive_policy != apis::DeviceExclusivePolicy::kPCIeLevel ||
         switchUntouched(node, d, type, options);
}

// The node-wide bounds that most nodes fail on: enough devices with anything free, one of them
// large enough, and enough free in all. Only without released devices, which raise free amounts
// beyond the summary.
bool summaryAdmits(const DeviceTypeSummary& s, const DeviceResources& request, std::int64_t count,
                   const AllocateOptions& options) {
  if (!options.released.empty())
    return true;
  if (static_cast<std::int64_t>(s.devices_with_free) < count || !request.fitsIn(s.max_free))
    return false;
  for (std::size_t i = 0; i < kDeviceResourceCount; ++i) {
    if (static_cast<WideInt>(request.amount[i]) * count > s.free_sum.amount[i])
      return false;
  }
  return true;
}

}  // namespace

Status gpuDemand(std::optional<std::int64_t> card_memory, const DeviceResources& asked,
                 DeviceResources& per_device, std::int64_t& count, std::int64_t shared) {
  if (!card_memory)
    return Status::unresolvable("no healthy GPU Devices");
  DeviceResources request = asked;
  if (shared > 0) {
    // gpu.shared: what was asked, split over that many cards before anything is derived.
    DeviceResources split;
    for (std::size_t i = 0; i < kDeviceResourceCount; ++i) {
      const auto r = static_cast<DeviceResource>(i);
      if (request.has(r))
        split.set(r, request.get(r) / shared);
    }
    request = split;
  }
  if (request.has(DeviceResource::kGPUMemory)) {
    if (*card_memory == 0)
      return Status::unresolvable(
          fmt::format("gpu devices report no {}", deviceResourceName(DeviceResource::kGPUMemory)));
    const double ratio = static_cast<double>(request.get(DeviceResource::kGPUMemory)) /
                         static_cast<double>(*card_memory) * 100;
    request.set(DeviceResource::kGPUMemoryRatio, truncateToInt64(ratio));
  } else {
    // 128-bit division is a library call; Filter takes this path for every node.
    const std::int64_t ratio = request.get(DeviceResource::kGPUMemoryRatio);
    std::int64_t product = 0;
    request.set(DeviceResource::kGPUMemory,
                __builtin_mul_overflow(ratio, *card_memory, &product)
                    ? clampToInt64(static_cast<WideInt>(ratio) * *card_memory / 100)
                    : product / 100);
  }
  count = shared > 0 ? shared : 1;
  const std::int64_t ratio = request.get(DeviceResource::kGPUMemoryRatio);
  if (shared == 0 && ratio > 100 && ratio % 100 == 0) {
    count = ratio / 100;
    DeviceResources split;
    split.set(DeviceResource::kGPUCore, request.get(DeviceResource::kGPUCore) / count);
    split.set(DeviceResource::kGPUMemory, request.get(DeviceResource::kGPUMemory) / count);
    split.set(DeviceResource::kGPUMemoryRatio, ratio / count);
    for (DeviceResource r :
         {DeviceResource::kNPUCore, DeviceResource::kNPUCPU, DeviceResource::kNPUDVPP}) {
      if (request.has(r))
        split.set(r, request.get(r) / count);
    }
    request = split;
  }
  per_device = request;
  return Status::success();
}

namespace {

// Koordinator's DefaultDeviceHandler.CalcDesiredRequestsAndCount.
Status defaultDemand(const NodeDeviceState& node, DeviceType type, const DeviceResources& asked,
                     const DeviceTypeHint* hint, DeviceResources& per_device, std::int64_t& count) {
  const DeviceResource r =
      type == DeviceType::kRDMA ? DeviceResource::kRDMA : DeviceResource::kFPGA;
  const std::int64_t q = asked.get(r);
  count = 1;
  per_device = asked;
  if (q > 100 && q % 100 == 0) {
    count = q / 100;
    per_device = DeviceResources{};
    per_device.set(r, q / count);
    return Status::success();
  }
  if (hint == nullptr)
    return Status::success();
  switch (hint->allocate_strategy) {
    case apis::DeviceAllocateStrategy::kApplyForAll: {
      const auto& devices = node.devices(type);
      count = hint->selector ? std::count_if(devices.begin(), devices.end(),
                                             [&](const DeviceState& d) {
                                               return hint->selector->matches(d.info.labels);
                                             })
                             : static_cast<std::int64_t>(devices.size());
      if (count == 0)
        return unresolvableInsufficient(type);
      break;
    }
    case apis::DeviceAllocateStrategy::kRequestsAsCount:
      count = q;
      per_device = DeviceResources{};
      per_device.set(r,
                     hint->exclusive_policy == apis::DeviceExclusivePolicy::kDeviceLevel ? 100 : 1);
      break;
    case apis::DeviceAllocateStrategy::kUnset:
      break;
  }
  return Status::success();
}

// Whether at least `count` devices fit; stops at the count-th.
bool enoughFit(const NodeDeviceState& node, DeviceType type, const DeviceResources& request,
               std::int64_t count, const AllocateOptions& options) {
  std::int64_t n = 0;
  DeviceResources free;
  for (const DeviceState& d : node.devices(type)) {
    if (fits(node, d, type, request, options, free) && ++n >= count)
      return true;
  }
  return n >= count;
}

Status checkDemand(const NodeDeviceState& node, const DeviceDemand& demand,
                   const AllocateOptions& options) {
  for (DeviceType type : kDeviceTypes) {
    if (!demand.has(type))
      continue;
    const DeviceResources& request = demand.of(type);
    const std::int64_t count = demand.countOf(type);
    if (!summaryAdmits(node.summary(type), request, count, options) ||
        !enoughFit(node, type, request, count, options))
      return insufficient(type);
  }
  return Status::success();
}

}  // namespace

Status deviceDemand(const NodeDeviceState& node, const PodDeviceRequests& requests,
                    const AllocateOptions& options, DeviceDemand& out) {
  out = DeviceDemand{};
  for (DeviceType type : kDeviceTypes) {
    if (!requests.has(type))
      continue;
    if (node.devices(type).empty())
      return unresolvableInsufficient(type);
    const std::size_t i = static_cast<std::size_t>(type);
    if (type == DeviceType::kGPU) {
      if (Status s = gpuDemand(node.gpuCardMemory(), requests.of(type), out.per_device[i],
                               out.count[i], requests.gpu_shared);
          !s.ok())
        return s;
    } else if (Status s = defaultDemand(node, type, requests.of(type), hintOf(options, type),
                                        out.per_device[i], out.count[i]);
               !s.ok()) {
      return s;
    }
    if (wantsVF(hintOf(options, type))) {
      const auto& devices = node.devices(type);
      if (std::none_of(devices.begin(), devices.end(),
                       [](const DeviceState& d) { return !d.info.vfs.empty(); }))
        return Status::unresolvable(
            fmt::format("Insufficient {} VirtualFunctions", deviceTypeName(type)));
    }
    out.types |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(type));
  }
  return Status::success();
}

Status checkDevices(const NodeDeviceState& node, const PodDeviceRequests& requests,
                    const AllocateOptions& options) {
  if (options.hints != nullptr && !options.hints->joint_types.empty()) {
    apis::DeviceAllocations placed;
    return allocateDevices(node, requests, options, placed);
  }
  DeviceDemand demand;
  if (Status s = deviceDemand(node, requests, options, demand); !s.ok())
    return s;
  return checkDemand(node, demand, options);
}

namespace {

// Chooses between min_count and max_count devices of `type` within `scope` into `given`
// (appended): reserved devices first, then those on `preferred_switches`, then on preferred NUMA
// nodes, then by score, then by minor.
Status pickDevices(const NodeDeviceState& node, DeviceType type, const DeviceResources& request,
                   std::int64_t min_count, std::int64_t max_count, const AllocateOptions& options,
                   const Scope& scope, std::span<const SwitchId> preferred_switches,
                   std::vector<apis::DeviceAllocation>& given) {
  struct Candidate {
    const DeviceState* device;
    bool reserved;
    bool on_preferred_switch;
    bool preferred;
    std::int64_t score;
  };
  std::vector<Candidate> candidates;
  DeviceResources free;
  for (const DeviceState& d : node.devices(type)) {
    if (!scope.holds(d) || !fits(node, d, type, request, options, free))
      continue;
    const bool preferred =
        d.info.numa_node >= 0 && ((options.preferred_numa_nodes >> d.info.numa_node) & 1u) != 0;
    const bool reserved = std::any_of(
        options.preferred_devices.begin(), options.preferred_devices.end(),
        [&](const ReleasedDevice& r) { return r.type == type && r.minor == d.info.minor; });
    const std::int64_t score =
        options.scorer ? options.scorer->scoreDevice(request, d.info.total, free) : 0;
    candidates.push_back({&d, reserved, onSwitches(d, preferred_switches), preferred, score});
  }
  if (static_cast<std::int64_t>(candidates.size()) < min_count)
    return insufficient(type);
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.reserved != b.reserved)
      return a.reserved;
    if (a.on_preferred_switch != b.on_preferred_switch)
      return a.on_preferred_switch;
    if (a.preferred != b.preferred)
      return a.preferred;
    if (a.score != b.score)
      return a.score > b.score;
    return a.device->info.minor < b.device->info.minor;
  });
  const DeviceTypeHint* hint = hintOf(options, type);
  const kube::ResourceList resources = request.toList();
  const auto n = std::min(static_cast<std::int64_t>(candidates.size()), max_count);
  for (std::int64_t k = 0; k < n; ++k) {
    const DeviceState& d = *candidates[static_cast<std::size_t>(k)].device;
    apis::DeviceAllocation a{.minor = d.info.minor,
                             .resources = resources,
                             .vfs = {},
                             .gpu_shared_resource_template = {}};
    if (wantsVF(hint)) {
      // fits() admitted the device only with a free VF of a matching group.
      const DeviceVF vf = *freeVF(d, *hint);
      a.vfs.push_back(apis::VirtualFunction{.minor = vf.minor, .bus_id = vf.bus_id});
    }
    given.push_back(std::move(a));
  }
  return Status::success();
}

// The switches of the devices given, each once, in the order first met.
std::vector<SwitchId> switchesOf(const NodeDeviceState& node, DeviceType type,
                                 const std::vector<apis::DeviceAllocation>& given) {
  std::vector<SwitchId> out;
  for (const apis::DeviceAllocation& a : given) {
    const DeviceState* d = node.device(type, a.minor);
    const auto id = d != nullptr ? SwitchId::of(*d) : std::nullopt;
    if (id && std::find(out.begin(), out.end(), *id) == out.end())
      out.push_back(*id);
  }
  return out;
}

enum class JointResult { kPlaced, kNoFit, kViolation };

// One joint placement within `scope` (Koordinator's jointAllocate, then
// validateJointAllocation under SamePCIe).
JointResult placeJointly(const NodeDeviceState& node, const DeviceDemand& demand,
                         const AllocateOptions& options, const Scope& scope,
                         apis::DeviceAllocations& out) {
  const PodDeviceHints& hints = *options.hints;
  const DeviceType primary = hints.joint_types.front();
  apis::DeviceAllocations placed;
  std::vector<apis::DeviceAllocation>& primary_given = placed[std::string(deviceTypeName(primary))];
  const std::int64_t count = demand.countOf(primary);
  if (!pickDevices(node, primary, demand.of(primary), count, count, options, scope, {},
                   primary_given)
           .ok())
    return JointResult::kNoFit;
  std::vector<SwitchId> switches = switchesOf(node, primary, primary_given);
  std::sort(switches.begin(), switches.end(), [](const SwitchId& a, const SwitchId& b) {
    return std::tie(a.socket, a.pcie_id) < std::tie(b.socket, b.pcie_id);
  });
  const auto n_switches = static_cast<std::int64_t>(switches.size());
  for (std::size_t i = 1; i < hints.joint_types.size(); ++i) {
    const DeviceType type = hints.joint_types[i];
    const std::int64_t min_count =
        hints.joint_same_pcie ? std::max(demand.countOf(type), n_switches) : demand.countOf(type);
    std::vector<apis::DeviceAllocation>& given = placed[std::string(deviceTypeName(type))];
    if (!pickDevices(node, type, demand.of(type), min_count, std::max(min_count, n_switches),
                     options, scope, switches, given)
             .ok())
      return JointResult::kNoFit;
    if (hints.joint_same_pcie) {
      std::vector<SwitchId> theirs = switchesOf(node, type, given);
      std::sort(theirs.begin(), theirs.end(), [](const SwitchId& a, const SwitchId& b) {
        return std::tie(a.socket, a.pcie_id) < std::tie(b.socket, b.pcie_id);
      });
      if (theirs != switches)
        return JointResult::kViolation;
    }
  }
  out = std::move(placed);
  return JointResult::kPlaced;
}

// Koordinator v1.5's allocateByTopology: within one switch of the primary's devices, else one
// NUMA node, else anywhere.
Status placeJointTypes(const NodeDeviceState& node, const DeviceDemand& demand,
                       const AllocateOptions& options, apis::DeviceAllocations& out) {
  const DeviceType primary = options.hints->joint_types.front();
  std::vector<Scope> scopes;
  std::vector<std::int32_t> numa_nodes;
  for (const DeviceState& d : node.devices(primary)) {
    const auto id = SwitchId::of(d);
    if (id &&
        std::none_of(scopes.begin(), scopes.end(), [&](const Scope& s) { return s.pcie == id; }))
      scopes.push_back(Scope{.pcie = id, .numa_node = -1});
    if (d.info.numa_node >= 0 &&
        std::find(numa_nodes.begin(), numa_nodes.end(), d.info.numa_node) == numa_nodes.end())
      numa_nodes.push_back(d.info.numa_node);
  }
  std::sort(numa_nodes.begin(), numa_nodes.end());
  for (std::int32_t numa : numa_nodes)
    scopes.push_back(Scope{.pcie = std::nullopt, .numa_node = numa});
  scopes.push_back(Scope{});
  bool violated = false;
  for (const Scope& scope : scopes) {
    switch (placeJointly(node, demand, options, scope, out)) {
      case JointResult::kPlaced:
        return Status::success();
      case JointResult::kViolation:
        violated = true;
        break;
      case JointResult::kNoFit:
        break;
    }
  }
  out.clear();
  return Status::unschedulable(violated ? "node(s) Device Joint-Allocate rules violation"
                                        : "node(s) Joint-Allocate rules not met");
}

}  // namespace

Status allocateDevices(const NodeDeviceState& node, const PodDeviceRequests& requests,
                       const AllocateOptions& options, apis::DeviceAllocations& out) {
  out.clear();
  DeviceDemand demand;
  if (Status s = deviceDemand(node, requests, options, demand); !s.ok())
    return s;
  std::uint8_t placed_types = 0;
  if (options.hints != nullptr && !options.hints->joint_types.empty()) {
    Status joint = placeJointTypes(node, demand, options, out);
    if (joint.ok()) {
      for (DeviceType type : options.hints->joint_types)
        placed_types |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(type));
    } else if (options.hints->joint_same_pcie) {
      return joint;
    }
  }
  for (DeviceType type : kDeviceTypes) {
    if (!demand.has(type) || ((placed_types >> static_cast<unsigned>(type)) & 1u) != 0)
      continue;
    const std::int64_t count = demand.countOf(type);
    std::vector<apis::DeviceAllocation>& given = out[std::string(deviceTypeName(type))];
    if (Status s =
            pickDevices(node, type, demand.of(type), count, count, options, Scope{}, {}, given);
        !s.ok()) {
      out.clear();
      return s;
    }
  }
  return Status::success();
}

Status scoreNode(const NodeDeviceState& node, const PodDeviceRequests& requests,
                 const DeviceScorer& scorer, const AllocateOptions& options, std::int64_t& score) {
  score = 0;
  DeviceDemand demand;
  if (Status s = deviceDemand(node, requests, options, demand); !s.ok())
    return s;
  for (DeviceType type : kDeviceTypes) {
    if (!demand.has(type))
      continue;
    // As Koordinator's filterNodeDevice: only the devices the hint's selector picks count.
    const DeviceTypeHint* hint = hintOf(options, type);
    const kube::Selector* selector = hint != nullptr && hint->selector ? &*hint->selector : nullptr;
    if (options.released.empty() && !options.numa_nodes && selector == nullptr) {
      // Every device counts, at its free amount: the node's summary holds both sums.
      const DeviceTypeSummary& summary = node.summary(type);
      if (summary.devices_with_free > 0)
        score += scorer.scoreDevice(demand.of(type), summary.total_sum, summary.free_sum);
      continue;
    }
    DeviceResources total_sum;
    DeviceResources free_sum;
    bool any_free = false;
    bool any_selected = false;
    for (const DeviceState& d : node.devices(type)) {
      const DeviceResources free = freeOf(d, type, options);
      any_free = any_free || !free.isZero();
      if (!onNumaNodes(d, options) || (selector != nullptr && !selector->matches(d.info.labels)))
        continue;
      any_selected = true;
      total_sum.add(d.info.total);
      free_sum.add(free);
    }
    if (any_free && any_selected)
      score += scorer.scoreDevice(demand.of(type), total_sum, free_sum);
  }
  return Status::success();
}

std::optional<NumaHints> numaHints(const NodeDeviceState& node, const PodDeviceRequests& requests,
                                   const AllocateOptions& options) {
  DeviceDemand demand;
  if (!deviceDemand(node, requests, options, demand).ok())
    return std::nullopt;
  std::vector<int> ids;
  for (int id = 0; id < 64; ++id) {
    if (((node.numaNodes() >> id) & 1u) != 0)
      ids.push_back(id);
  }
  const int n = static_cast<int>(ids.size());
  if (n == 0 || n > kMaxHintNumaNodes)
    return std::nullopt;

  NumaHints out;
  for (DeviceType type : kDeviceTypes) {
    if (!demand.has(type))
      continue;
    for (std::size_t i = 0; i < kDeviceResourceCount; ++i) {
      const auto r = static_cast<DeviceResource>(i);
      const std::string_view name = deviceResourceName(r);
      if (demand.of(type).has(r) &&
          std::find(out.resources.begin(), out.resources.end(), name) == out.resources.end())
        out.resources.push_back(name);
    }
  }

  AllocateOptions restricted = options;
  int min_size = 0;  // 0: no set held enough devices
  // Every non-empty subset, smallest first, each size in lexicographic order of its ids.
  for (int size = 1; size <= n; ++size) {
    std::vector<int> pick(static_cast<std::size_t>(size));
    for (int i = 0; i < size; ++i)
      pick[static_cast<std::size_t>(i)] = i;
    while (true) {
      std::uint64_t mask = 0;
      for (int i : pick)
        mask |= std::uint64_t{1} << ids[static_cast<std::size_t>(i)];
      bool enough = true;
      for (DeviceType type : kDeviceTypes) {
        if (!demand.has(type))
          continue;
        const auto& devices = node.devices(type);
        const auto held = std::count_if(devices.begin(), devices.end(), [&](const DeviceState& d) {
          return d.info.numa_node >= 0 && ((mask >> d.info.numa_node) & 1u) != 0;
        });
        enough = enough && held >= demand.countOf(type);
      }
      if (enough) {
        if (min_size == 0)
          min_size = n;
        restricted.numa_nodes = mask;
        if (checkDemand(node, demand, restricted).ok()) {
          min_size = std::min(min_size, size);
          out.hints.push_back(NumaHint{.numa_nodes = mask, .preferred = false});
        }
      }
      // The next combination of `size` out of n.
      int i = size - 1;
      while (i >= 0 && pick[static_cast<std::size_t>(i)] == n - size + i)
        --i;
      if (i < 0)
        break;
      ++pick[static_cast<std::size_t>(i)];
      for (int j = i + 1; j < size; ++j)
        pick[static_cast<std::size_t>(j)] = pick[static_cast<std::size_t>(j - 1)] + 1;
    }
  }
  if (min_size == 0)
    return std::nullopt;
  for (NumaHint& h : out.hints)
    h.preferred = std::popcount(h.numa_nodes) == min_size;
  return out;
}

}  // namespace koord::roles::scheduler::deviceshare
