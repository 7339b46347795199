#include "plugins/elasticquota/resources.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace koord::roles::scheduler::elasticquota {

void chargeResources(Resources& into, const Resources& r, int sign) {
  for (const auto& [name, v] : r) {
    auto it = into.try_emplace(name, 0).first;
    it->second = sign > 0 ? saturatingAdd(it->second, v) : saturatingSub(it->second, v);
    if (sign < 0 && it->second == 0)
      into.erase(it);
  }
}

std::int64_t saturatingAdd(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out))
    return b > 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  return out;
}

std::int64_t saturatingSub(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_sub_overflow(a, b, &out))
    return b < 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  return out;
}

Resources resourcesFromList(const kube::ResourceList& list) {
  Resources out;
  for (const auto& [name, q] : list)
    out[name] = name == kResourceCPU ? q.milliValue() : q.value();
  return out;
}

Resources resourcesFromRequest(const Resource& request) {
  Resources out;
  auto put = [&out](std::string_view name, std::int64_t v) {
    if (v != 0)
      out[std::string(name)] = v;
  };
  put(kResourceCPU, request.milli_cpu);
  put(kResourceMemory, request.memory);
  put(kResourceEphemeralStorage, request.ephemeral_storage);
  for (const auto& [name, v] : request.scalar)
    put(name, v);
  return out;
}

kube::ResourceList resourcesToList(const Resources& r) {
  kube::ResourceList out;
  for (const auto& [name, v] : r) {
    if (name == kResourceCPU)
      out.emplace(name, kube::Quantity::fromMilli(v));
    else if (name == kResourceMemory)
      out.emplace(name, kube::Quantity::fromInt(v, kube::Quantity::Format::kBinarySI));
    else
      out.emplace(name, kube::Quantity::fromInt(v));
  }
  return out;
}

std::string printResources(const Resources& r) {
  if (r.empty())
    return "<empty>";
  std::string out;
  for (const auto& [name, q] : resourcesToList(r)) {
    if (!out.empty())
      out += ',';
    out += fmt::format("{}:{}", name, q.toString());
  }
  return out;
}

Resources addResources(const Resources& a, const Resources& b) {
  Resources out = a;
  for (const auto& [name, v] : b)
    out[name] = saturatingAdd(valueOf(out, name), v);
  return out;
}

Resources subtractResources(const Resources& a, const Resources& b) {
  Resources out = a;
  for (const auto& [name, v] : b)
    out[name] = saturatingSub(valueOf(out, name), v);
  return out;
}

Resources maskResources(const Resources& r, const Resources& names) {
  Resources out;
  for (const auto& [name, v] : r) {
    if (names.contains(name))
      out.emplace(name, v);
  }
  return out;
}

Resources maxResources(const Resources& a, const Resources& b) {
  Resources out = a;
  for (const auto& [name, v] : b) {
    auto [it, inserted] = out.emplace(name, v);
    if (!inserted)
      it->second = std::max(it->second, v);
  }
  return out;
}

Resources capResources(const Resources& request, const Resources& max) {
  Resources out = request;
  for (auto& [name, v] : out) {
    if (auto it = max.find(name); it != max.end())
      v = std::min(v, it->second);
  }
  return out;
}

void chargeCapped(Resources& into, const Resources& request, const Resources& max) {
  for (const auto& [name, v] : request) {
    std::int64_t capped = v;
    if (auto it = max.find(name); it != max.end())
      capped = std::min(capped, it->second);
    auto at = into.try_emplace(name, 0).first;
    at->second = saturatingAdd(at->second, capped);
  }
}

std::int64_t valueOf(const Resources& r, std::string_view name) {
  auto it = r.find(name);
  return it == r.end() ? 0 : it->second;
}

std::vector<std::string> exceededNames(const Resources& used, const Resources& limit) {
  std::vector<std::string> out;
  for (const auto& [name, cap] : limit) {
    auto it = used.find(name);
    if (it != used.end() && it->second > cap)
      out.push_back(name);
  }
  return out;
}

}  // namespace koord::roles::scheduler::elasticquota
