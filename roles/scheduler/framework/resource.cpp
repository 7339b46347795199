#include "resource.h"

#include <algorithm>
#include <cstring>

namespace koord::roles::scheduler {

namespace {

constexpr std::size_t kLinearScalarLookup = 16;

auto scalarSlot(std::vector<std::pair<std::string, std::int64_t>>& v, std::string_view name) {
  return std::lower_bound(v.begin(), v.end(), name,
                          [](const auto& e, std::string_view n) { return e.first < n; });
}

}  // namespace

Resource Resource::fromList(const kube::ResourceList& list) {
  Resource r;
  for (const auto& [name, q] : list) {
    if (name == kResourceCPU)
      r.milli_cpu = q.milliValue();
    else if (name == kResourceMemory)
      r.memory = q.value();
    else if (name == kResourceEphemeralStorage)
      r.ephemeral_storage = q.value();
    else if (name == kResourcePods)
      r.allowed_pod_number = q.value();
    else
      r.setScalar(name, q.value());
  }
  return r;
}

std::int64_t Resource::scalarValue(std::string_view name) const {
  // Names of extended resources share long prefixes ("koordinator.sh/gpu-..."), so ordering
  // compares read far into each; a node carries a dozen at most, where comparing lengths first
  // rejects most entries without reading them.
  if (scalar.size() <= kLinearScalarLookup) {
    for (const auto& [n, v] : scalar) {
      if (n.size() == name.size() && std::memcmp(n.data(), name.data(), name.size()) == 0)
        return v;
    }
    return 0;
  }
  auto it = std::lower_bound(scalar.begin(), scalar.end(), name,
                             [](const auto& e, std::string_view n) { return e.first < n; });
  return it != scalar.end() && it->first == name ? it->second : 0;
}

void Resource::setScalar(std::string_view name, std::int64_t value) {
  auto it = scalarSlot(scalar, name);
  if (it != scalar.end() && it->first == name) {
    if (value == 0)
      scalar.erase(it);
    else
      it->second = value;
  } else if (value != 0) {
    scalar.emplace(it, std::string(name), value);
  }
}

void Resource::addScalar(std::string_view name, std::int64_t value) {
  setScalar(name, scalarValue(name) + value);
}

std::int64_t Resource::get(std::string_view name) const {
  if (name == kResourceCPU)
    return milli_cpu;
  if (name == kResourceMemory)
    return memory;
  if (name == kResourceEphemeralStorage)
    return ephemeral_storage;
  if (name == kResourcePods)
    return allowed_pod_number;
  return scalarValue(name);
}

void Resource::add(const Resource& o) {
  milli_cpu += o.milli_cpu;
  memory += o.memory;
  ephemeral_storage += o.ephemeral_storage;
  allowed_pod_number += o.allowed_pod_number;
  for (const auto& [name, v] : o.scalar)
    addScalar(name, v);
}

void Resource::subtract(const Resource& o) {
  milli_cpu -= o.milli_cpu;
  memory -= o.memory;
  ephemeral_storage -= o.ephemeral_storage;
  allowed_pod_number -= o.allowed_pod_number;
  for (const auto& [name, v] : o.scalar)
    addScalar(name, -v);
}

void Resource::setMax(const Resource& o) {
  milli_cpu = std::max(milli_cpu, o.milli_cpu);
  memory = std::max(memory, o.memory);
  ephemeral_storage = std::max(ephemeral_storage, o.ephemeral_storage);
  allowed_pod_number = std::max(allowed_pod_number, o.allowed_pod_number);
  for (const auto& [name, v] : o.scalar) {
    if (v > scalarValue(name))
      setScalar(name, v);
  }
}

}  // namespace koord::roles::scheduler
