#include "plugins/deviceshare/allocator.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <string>
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

bool fits(const DeviceState& d, DeviceType type, const DeviceResources& request,
          const AllocateOptions& options, DeviceResources& free) {
  if (!onNumaNodes(d, options))
    return false;
  free = freeOf(d, type, options);
  if (free.isZero() || !request.fitsIn(free))
    return false;
  return !(type == DeviceType::kRDMA && options.rdma_vf && d.free_vfs == 0);
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
                 DeviceResources& per_device, std::int64_t& count) {
  if (!card_memory)
    return Status::unresolvable("no healthy GPU Devices");
  DeviceResources request = asked;
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
  count = 1;
  const std::int64_t ratio = request.get(DeviceResource::kGPUMemoryRatio);
  if (ratio > 100 && ratio % 100 == 0) {
    count = ratio / 100;
    DeviceResources split;
    split.set(DeviceResource::kGPUCore, request.get(DeviceResource::kGPUCore) / count);
    split.set(DeviceResource::kGPUMemory, request.get(DeviceResource::kGPUMemory) / count);
    split.set(DeviceResource::kGPUMemoryRatio, ratio / count);
    request = split;
  }
  per_device = request;
  return Status::success();
}

namespace {

void defaultDemand(DeviceType type, const DeviceResources& asked, DeviceResources& per_device,
                   std::int64_t& count) {
  const DeviceResource r =
      type == DeviceType::kRDMA ? DeviceResource::kRDMA : DeviceResource::kFPGA;
  const std::int64_t q = asked.get(r);
  count = 1;
  per_device = asked;
  if (q > 100 && q % 100 == 0) {
    count = q / 100;
    per_device = DeviceResources{};
    per_device.set(r, q / count);
  }
}

// Whether at least `count` devices fit; stops at the count-th.
bool enoughFit(const NodeDeviceState& node, DeviceType type, const DeviceResources& request,
               std::int64_t count, const AllocateOptions& options) {
  std::int64_t n = 0;
  DeviceResources free;
  for (const DeviceState& d : node.devices(type)) {
    if (fits(d, type, request, options, free) && ++n >= count)
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

std::optional<DeviceVF> takeVF(const DeviceState& d) {
  for (std::size_t i = 0; i < d.info.vfs.size(); ++i) {
    if (d.vf_holders[i] == 0)
      return d.info.vfs[i];
  }
  return std::nullopt;
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
      if (Status s =
              gpuDemand(node.gpuCardMemory(), requests.of(type), out.per_device[i], out.count[i]);
          !s.ok())
        return s;
    } else {
      defaultDemand(type, requests.of(type), out.per_device[i], out.count[i]);
    }
    if (type == DeviceType::kRDMA && options.rdma_vf) {
      const auto& devices = node.devices(type);
      if (std::none_of(devices.begin(), devices.end(),
                       [](const DeviceState& d) { return !d.info.vfs.empty(); }))
        return Status::unresolvable("Insufficient rdma VirtualFunctions");
    }
    out.types |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(type));
  }
  return Status::success();
}

Status checkDevices(const NodeDeviceState& node, const PodDeviceRequests& requests,
                    const AllocateOptions& options) {
  DeviceDemand demand;
  if (Status s = deviceDemand(node, requests, options, demand); !s.ok())
    return s;
  return checkDemand(node, demand, options);
}

Status allocateDevices(const NodeDeviceState& node, const PodDeviceRequests& requests,
                       const AllocateOptions& options, apis::DeviceAllocations& out) {
  out.clear();
  DeviceDemand demand;
  if (Status s = deviceDemand(node, requests, options, demand); !s.ok())
    return s;

  struct Candidate {
    const DeviceState* device;
    bool reserved;
    bool preferred;
    std::int64_t score;
  };
  std::vector<Candidate> candidates;
  for (DeviceType type : kDeviceTypes) {
    if (!demand.has(type))
      continue;
    const DeviceResources& request = demand.of(type);
    const std::int64_t count = demand.countOf(type);
    candidates.clear();
    DeviceResources free;
    for (const DeviceState& d : node.devices(type)) {
      if (!fits(d, type, request, options, free))
        continue;
      const bool preferred =
          d.info.numa_node >= 0 && ((options.preferred_numa_nodes >> d.info.numa_node) & 1u) != 0;
      const bool reserved = std::any_of(
          options.preferred_devices.begin(), options.preferred_devices.end(),
          [&](const ReleasedDevice& r) { return r.type == type && r.minor == d.info.minor; });
      const std::int64_t score =
          options.scorer ? options.scorer->scoreDevice(request, d.info.total, free) : 0;
      candidates.push_back({&d, reserved, preferred, score});
    }
    if (static_cast<std::int64_t>(candidates.size()) < count) {
      out.clear();
      return insufficient(type);
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      if (a.reserved != b.reserved)
        return a.reserved;
      if (a.preferred != b.preferred)
        return a.preferred;
      if (a.score != b.score)
        return a.score > b.score;
      return a.device->info.minor < b.device->info.minor;
    });
    std::vector<apis::DeviceAllocation>& given = out[std::string(deviceTypeName(type))];
    const kube::ResourceList resources = request.toList();
    for (std::int64_t k = 0; k < count; ++k) {
      const DeviceState& d = *candidates[static_cast<std::size_t>(k)].device;
      apis::DeviceAllocation a{.minor = d.info.minor, .resources = resources, .vfs = {}};
      if (type == DeviceType::kRDMA && options.rdma_vf) {
        // fits() admitted the device only with a free VF.
        const DeviceVF vf = *takeVF(d);
        a.vfs.push_back(apis::VirtualFunction{.minor = vf.minor, .bus_id = vf.bus_id});
      }
      given.push_back(std::move(a));
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
    if (options.released.empty() && !options.numa_nodes) {
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
      if (!onNumaNodes(d, options))
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
