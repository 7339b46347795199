#include "config/koord_scoring_strategy.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"

namespace koord::roles::scheduler::config {

namespace {

namespace json = boost::json;
namespace jf = kube::jsonfields;

/// The most resources a strategy may weigh: each is summed per node per pod.
constexpr std::size_t kMaxResources = 64;

kube::Expected<void> onlyKnown(const json::object& o, std::initializer_list<std::string_view> known,
                               std::string_view path) {
  for (const auto& member : o) {
    bool found = false;
    for (std::string_view k : known)
      found = found || member.key() == k;
    if (!found)
      return kube::makeKubeError(
          fmt::format("{}: unknown field", jf::childPath(path, member.key())));
  }
  return {};
}

}  // namespace

std::string_view toString(KoordScoringType type) {
  return type == KoordScoringType::kMostAllocated ? "MostAllocated" : "LeastAllocated";
}

kube::Expected<KoordScoringStrategy> decodeKoordScoringStrategy(
    const json::object& args, std::string_view name, const KoordScoringStrategy& defaults) {
  auto object = jf::objectField(args, name, "");
  if (!object)
    return object.error();
  if (*object == nullptr)
    return defaults;
  const json::object& s = **object;
  const std::string path(name);
  if (auto known = onlyKnown(s, {"type", "resources"}, path); !known)
    return known.error();
  KoordScoringStrategy out;
  auto type = jf::stringField(s, "type", path);
  if (!type)
    return type.error();
  if (*type == "MostAllocated") {
    out.type = KoordScoringType::kMostAllocated;
  } else if (type->empty() || *type == "LeastAllocated") {
    out.type = KoordScoringType::kLeastAllocated;
  } else {
    return kube::makeKubeError(
        fmt::format("{}: Unsupported value: \"{}\": supported values: \"LeastAllocated\", "
                    "\"MostAllocated\"",
                    jf::childPath(path, "type"), *type));
  }
  auto resources = jf::objectList(s, "resources", path);
  if (!resources)
    return resources.error();
  if (resources->size() > kMaxResources)
    return kube::makeKubeError(
        fmt::format("{}: at most {} resources", jf::childPath(path, "resources"), kMaxResources));
  for (std::size_t i = 0; i < resources->size(); ++i) {
    const std::string at = jf::indexPath(jf::childPath(path, "resources"), i);
    const json::object& r = *(*resources)[i];
    if (auto known = onlyKnown(r, {"name", "weight"}, at); !known)
      return known.error();
    auto rname = jf::stringField(r, "name", at);
    if (!rname)
      return rname.error();
    auto weight = jf::int64Field(r, "weight", at);
    if (!weight)
      return weight.error();
    // Koordinator's validateResources.
    if (*weight <= 0 || *weight > 100)
      return kube::makeKubeError(
          fmt::format("{}: Invalid value: {}: resource weight of {} not in valid range (0, 100]",
                      jf::childPath(at, "weight"), *weight, *rname));
    out.resources.push_back({std::move(*rname), *weight});
  }
  return out;
}

}  // namespace koord::roles::scheduler::config
