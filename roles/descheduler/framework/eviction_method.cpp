#include "framework/eviction_method.h"

#include <utility>

namespace koord::roles::descheduler {

namespace {

constexpr std::pair<EvictionMethod, std::string_view> kMethods[] = {
    {EvictionMethod::kEviction, "Eviction"},
    {EvictionMethod::kDelete, "Delete"},
    {EvictionMethod::kSoftEviction, "SoftEviction"},
};

}  // namespace

std::string_view toString(EvictionMethod method) {
  for (const auto& [m, name] : kMethods) {
    if (m == method)
      return name;
  }
  return "Eviction";
}

std::optional<EvictionMethod> parseEvictionMethod(std::string_view name) {
  for (const auto& [m, n] : kMethods) {
    if (n == name)
      return m;
  }
  return std::nullopt;
}

}  // namespace koord::roles::descheduler
