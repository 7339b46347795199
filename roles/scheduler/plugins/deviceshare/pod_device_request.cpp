#include "plugins/deviceshare/pod_device_request.h"

#include <limits>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "koord/apis/xpu_device_info.h"

namespace koord::roles::scheduler::deviceshare {

namespace {

// Koordinator's per-name flags (DeviceResourceFlags).
enum Flag : unsigned {
  kNvidiaGPU = 1u << 0,
  kHygonDCU = 1u << 1,
  kKoordGPU = 1u << 2,
  kGPUCore = 1u << 3,
  kGPUMemory = 1u << 4,
  kGPUMemoryRatio = 1u << 5,
  kFPGA = 1u << 6,
  kRDMA = 1u << 7,
  kGPUShared = 1u << 8,
  kNPUCore = 1u << 9,
  kNPUCPU = 1u << 10,
  kNPUDVPP = 1u << 11,
};
constexpr std::size_t kFlagCount = 12;

struct Name {
  std::string_view name;
  unsigned flag;
  bool percentage;  // ValidatePercentageResource applies
  // The deprecated kubernetes.io/ twin Koordinator's pod transformer moves to `name` when `name`
  // itself is absent; empty when there is none.
  std::string_view deprecated = {};
};

// Each type's names, sorted by name so that the first fault found is always the same one.
constexpr Name kGPUNames[] = {
    {apis::kResourceHygonDCU, kHygonDCU, false},
    {apis::kResourceHuaweiNPUCore, kNPUCore, false},
    {apis::kResourceHuaweiNPUCPU, kNPUCPU, false},
    {apis::kResourceHuaweiNPUDVPP, kNPUDVPP, false},
    {apis::kResourceGPU, kKoordGPU, true, "kubernetes.io/gpu"},
    {apis::kResourceGPUCore, kGPUCore, true, "kubernetes.io/gpu-core"},
    {apis::kResourceGPUMemory, kGPUMemory, false, "kubernetes.io/gpu-memory"},
    {apis::kResourceGPUMemoryRatio, kGPUMemoryRatio, true, "kubernetes.io/gpu-memory-ratio"},
    {apis::kResourceGPUShared, kGPUShared, false},
    {apis::kResourceNvidiaGPU, kNvidiaGPU, false},
};
constexpr Name kRDMANames[] = {{apis::kResourceRDMA, kRDMA, true, "kubernetes.io/rdma"}};
constexpr Name kFPGANames[] = {{apis::kResourceFPGA, kFPGA, true, "kubernetes.io/fpga"}};

std::span<const Name> namesOf(DeviceType type) {
  switch (type) {
    case DeviceType::kGPU:
      return kGPUNames;
    case DeviceType::kRDMA:
      return kRDMANames;
    case DeviceType::kFPGA:
      return kFPGANames;
  }
  return {};
}

bool validCombination(unsigned c) {
  switch (c) {
    case kNvidiaGPU:
    case kHygonDCU:
    case kKoordGPU:
    case kGPUMemory:
    case kGPUMemoryRatio:
    case kGPUCore | kGPUMemory:
    case kGPUCore | kGPUMemoryRatio:
    case kGPUShared | kGPUMemory:
    case kGPUShared | kGPUMemoryRatio:
    case kGPUShared | kGPUCore | kGPUMemory:
    case kGPUShared | kGPUCore | kGPUMemoryRatio:
    case kNPUCore | kGPUMemoryRatio:
    case kGPUShared | kNPUCore | kNPUCPU | kGPUMemory:
    case kGPUShared | kNPUCore | kNPUCPU | kNPUDVPP | kGPUMemory:
    case kFPGA:
    case kRDMA:
      return true;
    default:
      return false;
  }
}

// Koordinator's ValidDeviceResourceCombinationsGPUShared: gpu-core and gpu-memory-ratio split
// evenly over the shared cards, at most a whole card each. A vNPU (ValidDeviceResourceCombinations
// HuaweiNPUShared) is a slice of one NPU: gpu.shared 1, at most a whole DVPP.
bool validGPUShared(unsigned combination, const std::array<std::int64_t, kFlagCount>& by_flag) {
  const auto amount = [&](unsigned flag) {
    return by_flag[static_cast<std::size_t>(__builtin_ctz(flag))];
  };
  const std::int64_t shared = amount(kGPUShared);
  if ((combination & kNPUCore) != 0)
    return shared <= 1 && amount(kNPUDVPP) <= 100;
  for (unsigned flag : {kGPUCore, kGPUMemoryRatio}) {
    if ((combination & flag) != 0 && (amount(flag) % shared != 0 || amount(flag) / shared > 100))
      return false;
  }
  return true;
}

std::int64_t timesHundred(std::int64_t v) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(v, std::int64_t{100}, &out))
    return std::numeric_limits<std::int64_t>::max();
  return out;
}

std::int64_t amountOf(const Resource& requests, const Name& n) {
  const std::int64_t v = requests.scalarValue(n.name);
  return v != 0 || n.deprecated.empty() ? v : requests.scalarValue(n.deprecated);
}

DeviceResources convert(unsigned combination, const std::array<std::int64_t, kFlagCount>& by_flag) {
  auto amount = [&](unsigned flag) {
    return by_flag[static_cast<std::size_t>(__builtin_ctz(flag))];
  };
  DeviceResources out;
  switch (combination) {
    case kNvidiaGPU:
    case kHygonDCU: {
      const std::int64_t percent = timesHundred(amount(combination));
      out.set(DeviceResource::kGPUCore, percent);
      out.set(DeviceResource::kGPUMemoryRatio, percent);
      break;
    }
    case kKoordGPU:
      out.set(DeviceResource::kGPUCore, amount(kKoordGPU));
      out.set(DeviceResource::kGPUMemoryRatio, amount(kKoordGPU));
      break;
    case kFPGA:
      out.set(DeviceResource::kFPGA, amount(kFPGA));
      break;
    case kRDMA:
      out.set(DeviceResource::kRDMA, amount(kRDMA));
      break;
    default:
      if ((combination & kGPUCore) != 0)
        out.set(DeviceResource::kGPUCore, amount(kGPUCore));
      if ((combination & kGPUMemory) != 0)
        out.set(DeviceResource::kGPUMemory, amount(kGPUMemory));
      if ((combination & kGPUMemoryRatio) != 0)
        out.set(DeviceResource::kGPUMemoryRatio, amount(kGPUMemoryRatio));
      if ((combination & kNPUCore) != 0)
        out.set(DeviceResource::kNPUCore, amount(kNPUCore));
      if ((combination & kNPUCPU) != 0)
        out.set(DeviceResource::kNPUCPU, amount(kNPUCPU));
      if ((combination & kNPUDVPP) != 0)
        out.set(DeviceResource::kNPUDVPP, amount(kNPUDVPP));
      break;
  }
  return out;
}

}  // namespace

bool PodDeviceRequests::sharesGpu() const {
  if (!has(DeviceType::kGPU))
    return false;
  const DeviceResources& gpu = of(DeviceType::kGPU);
  if (gpu_shared > 0 || gpu.has(DeviceResource::kGPUMemory))
    return true;
  const std::int64_t ratio = gpu.get(DeviceResource::kGPUMemoryRatio);
  const std::int64_t cards = ratio > 100 && ratio % 100 == 0 ? ratio / 100 : 1;
  return gpu.has(DeviceResource::kGPUMemoryRatio) && ratio / cards < 100;
}

DeviceResources PodDeviceRequests::perGpu() const {
  const DeviceResources& gpu = of(DeviceType::kGPU);
  std::int64_t cards = 1;
  const std::int64_t ratio = gpu.get(DeviceResource::kGPUMemoryRatio);
  if (gpu_shared > 0)
    cards = gpu_shared;
  else if (ratio > 100 && ratio % 100 == 0)
    cards = ratio / 100;
  DeviceResources out;
  for (std::size_t i = 0; i < kDeviceResourceCount; ++i) {
    const auto r = static_cast<DeviceResource>(i);
    if (gpu.has(r))
      out.set(r, gpu.get(r) / cards);
  }
  return out;
}

kube::Expected<PodDeviceRequests> podDeviceRequests(const Resource& pod_requests) {
  PodDeviceRequests out;
  if (pod_requests.scalar.empty())
    return out;
  for (DeviceType type : kDeviceTypes) {
    unsigned combination = 0;
    std::array<std::int64_t, kFlagCount> by_flag{};
    std::string names;  // for the combination error, sorted
    // Shared cards take their split of gpu-core and gpu-memory-ratio (validGPUShared bounds
    // it): those are no whole-card percentages then, as in Koordinator v1.6.
    const bool shared =
        type == DeviceType::kGPU && pod_requests.scalarValue(apis::kResourceGPUShared) > 0;
    for (const Name& n : namesOf(type)) {
      const std::int64_t v = amountOf(pod_requests, n);
      if (v == 0)
        continue;
      const bool percentage =
          n.percentage && !(shared && (n.flag == kGPUCore || n.flag == kGPUMemoryRatio));
      if (v < 0 || (percentage && v > 100 && v % 100 != 0)) {
        return kube::makeKubeError(fmt::format("invalid resource unit {}: {}", n.name,
                                               kube::Quantity::fromInt(v).toString()));
      }
      combination |= n.flag;
      by_flag[static_cast<std::size_t>(__builtin_ctz(n.flag))] = v;
      if (!names.empty())
        names += ' ';
      names += n.name;
    }
    if (combination == 0)
      continue;
    if (!validCombination(combination) ||
        ((combination & kGPUShared) != 0 && !validGPUShared(combination, by_flag)))
      return kube::makeKubeError(fmt::format("invalid resource device requests: [{}]", names));
    out.by_type[static_cast<std::size_t>(type)] = convert(combination, by_flag);
    if ((combination & kGPUShared) != 0)
      out.gpu_shared = by_flag[static_cast<std::size_t>(__builtin_ctz(kGPUShared))];
    out.types |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(type));
  }
  return out;
}

}  // namespace koord::roles::scheduler::deviceshare
