#include "plugins/deviceshare/device_resources.h"

#include <algorithm>
#include <limits>
#include <string>

#include "koord/apis/device_allocation.h"
#include "koord/apis/xpu_device_info.h"

namespace koord::roles::scheduler::deviceshare {

namespace {

constexpr std::array<std::string_view, kDeviceResourceCount> kResourceNames{
    apis::kResourceGPUCore,      apis::kResourceGPUMemory,    apis::kResourceGPUMemoryRatio,
    apis::kResourceRDMA,         apis::kResourceFPGA,         apis::kResourceHuaweiNPUCore,
    apis::kResourceHuaweiNPUCPU, apis::kResourceHuaweiNPUDVPP};

constexpr std::array<std::string_view, kDeviceTypeCount> kTypeNames{
    apis::kDeviceTypeGPU, apis::kDeviceTypeRDMA, apis::kDeviceTypeFPGA};

std::int64_t saturatingAdd(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out))
    return b > 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  return out;
}

}  // namespace

std::string_view deviceTypeName(DeviceType type) {
  return kTypeNames[static_cast<std::size_t>(type)];
}

std::optional<DeviceType> parseDeviceType(std::string_view name) {
  for (DeviceType t : kDeviceTypes) {
    if (deviceTypeName(t) == name)
      return t;
  }
  return std::nullopt;
}

std::string_view deviceResourceName(DeviceResource resource) {
  return kResourceNames[static_cast<std::size_t>(resource)];
}

std::optional<DeviceResource> parseDeviceResource(std::string_view name) {
  for (std::size_t i = 0; i < kDeviceResourceCount; ++i) {
    if (kResourceNames[i] == name)
      return static_cast<DeviceResource>(i);
  }
  return std::nullopt;
}

bool DeviceResources::isZero() const {
  return std::all_of(amount.begin(), amount.end(), [](std::int64_t v) { return v == 0; });
}

bool DeviceResources::fitsIn(const DeviceResources& available) const {
  for (std::size_t i = 0; i < kDeviceResourceCount; ++i) {
    if (amount[i] > available.amount[i])
      return false;
  }
  return true;
}

void DeviceResources::add(const DeviceResources& other) {
  for (std::size_t i = 0; i < kDeviceResourceCount; ++i)
    amount[i] = saturatingAdd(amount[i], other.amount[i]);
  names |= other.names;
}

void DeviceResources::subtractNonNegative(const DeviceResources& other) {
  for (std::size_t i = 0; i < kDeviceResourceCount; ++i)
    amount[i] = amount[i] > other.amount[i] ? amount[i] - other.amount[i] : 0;
}

void DeviceResources::setMax(const DeviceResources& other) {
  for (std::size_t i = 0; i < kDeviceResourceCount; ++i)
    amount[i] = std::max(amount[i], other.amount[i]);
  names |= other.names;
}

kube::ResourceList DeviceResources::toList() const {
  kube::ResourceList out;
  for (std::size_t i = 0; i < kDeviceResourceCount; ++i) {
    const auto r = static_cast<DeviceResource>(i);
    if (!has(r))
      continue;
    const auto format = r == DeviceResource::kGPUMemory ? kube::Quantity::Format::kBinarySI
                                                        : kube::Quantity::Format::kDecimalSI;
    out.emplace(std::string(kResourceNames[i]), kube::Quantity::fromInt(amount[i], format));
  }
  return out;
}

DeviceResources DeviceResources::fromList(const kube::ResourceList& list) {
  DeviceResources out;
  for (std::size_t i = 0; i < kDeviceResourceCount; ++i) {
    auto it = list.find(kResourceNames[i]);
    if (it != list.end())
      out.set(static_cast<DeviceResource>(i), std::max<std::int64_t>(it->second.value(), 0));
  }
  return out;
}

}  // namespace koord::roles::scheduler::deviceshare
