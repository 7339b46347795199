// NumaResources: names, list conversion and the floor-at-zero subtraction Koordinator uses.
#include "plugins/nodenumaresource/numa_resources.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace koord::roles::scheduler::nodenumaresource {

namespace {

constexpr std::string_view kNames[kNumaResourceCount] = {"cpu", "memory", "hugepages-1Gi",
                                                         "hugepages-2Mi"};

}  // namespace

std::string_view toString(NumaResource r) {
  return kNames[static_cast<std::size_t>(r)];
}

std::optional<NumaResource> numaResourceByName(std::string_view name) {
  for (NumaResource r : kAllNumaResources) {
    if (kNames[static_cast<std::size_t>(r)] == name)
      return r;
  }
  return std::nullopt;
}

void NumaResources::add(const NumaResources& other) {
  for (NumaResource r : kAllNumaResources) {
    if (other.has(r))
      set(r, get(r) + other.get(r));
  }
}

void NumaResources::subtractFloorZero(const NumaResources& other) {
  for (NumaResource r : kAllNumaResources) {
    if (has(r))
      set(r, std::max<std::int64_t>(0, get(r) - other.get(r)));
  }
}

NumaResources NumaResources::fromList(const kube::ResourceList& list) {
  NumaResources out;
  for (const auto& [name, q] : list) {
    auto r = numaResourceByName(name);
    if (!r)
      continue;
    out.set(*r, *r == NumaResource::kCpu ? q.milliValue() : q.value());
  }
  return out;
}

kube::ResourceList NumaResources::toList() const {
  kube::ResourceList out;
  for (NumaResource r : kAllNumaResources) {
    if (!has(r))
      continue;
    out.emplace(std::string(toString(r)),
                r == NumaResource::kCpu
                    ? kube::Quantity::fromMilli(get(r))
                    : kube::Quantity::fromInt(get(r), kube::Quantity::Format::kBinarySI));
  }
  return out;
}

std::int64_t amplify(std::int64_t origin, double ratio) {
  if (!(ratio > 1))
    return origin;
  const double v = std::ceil(static_cast<double>(origin) * ratio);
  if (v >= static_cast<double>(std::numeric_limits<std::int64_t>::max()))
    return std::numeric_limits<std::int64_t>::max();
  if (v <= static_cast<double>(std::numeric_limits<std::int64_t>::min()))
    return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}

}  // namespace koord::roles::scheduler::nodenumaresource
