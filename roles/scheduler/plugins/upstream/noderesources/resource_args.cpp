#include "plugins/upstream/noderesources/resource_args.h"

#include <boost/json.hpp>

#include <algorithm>

#include <fmt/format.h>

#include "framework/plugin.h"
#include "koord/kube/json_fields.h"
#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::upstream {

namespace {

namespace json = boost::json;
using kube::jsonfields::childPath;
using kube::jsonfields::field;
using kube::jsonfields::indexPath;
using kube::jsonfields::typeError;

// The args' shape scores are 0..10 (MaxCustomPriorityScore); node scores are 0..100.
constexpr std::int64_t kMaxCustomPriorityScore = 10;

}  // namespace

kube::Expected<std::vector<ResourceSpec>> decodeResourceSpecs(const json::value& v,
                                                              std::string_view path) {
  std::vector<ResourceSpec> out;
  if (v.is_null())
    return out;
  if (!v.is_array())
    return typeError(path, "array", v);
  const json::array& items = v.get_array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string ip = indexPath(path, i);
    if (!items[i].is_object())
      return typeError(ip, "object", items[i]);
    const json::object& o = items[i].get_object();
    if (auto known = checkKnownFields(o, {"name", "weight"}, ip); !known)
      return known.error();
    auto name = kube::jsonfields::stringField(o, "name", ip);
    if (!name)
      return name.error();
    if (name->empty())
      return kube::makeKubeError(fmt::format("{}: Required value", childPath(ip, "name")));
    if (std::any_of(out.begin(), out.end(), [&](const auto& r) { return r.name == *name; }))
      return kube::makeKubeError(
          fmt::format("{}: Duplicate value: \"{}\"", childPath(ip, "name"), *name));
    ResourceSpec spec{.name = std::move(*name), .weight = 0};
    if (const json::value* w = field(o, "weight")) {
      auto weight = intValue(*w, childPath(ip, "weight"));
      if (!weight)
        return weight.error();
      spec.weight = *weight;
    }
    out.push_back(std::move(spec));
  }
  return out;
}

kube::Expected<std::vector<ResourceSpec>> decodeV1beta1ResourcesArgs(const json::value* args) {
  auto o = argsObject(args);
  if (!o)
    return o.error();
  std::vector<ResourceSpec> resources;
  if (*o != nullptr) {
    if (auto known = checkKnownFields(**o, {"resources"}, ""); !known)
      return known.error();
    if (const json::value* r = field(**o, "resources")) {
      auto decoded = decodeResourceSpecs(*r, "resources");
      if (!decoded)
        return decoded.error();
      resources = std::move(*decoded);
    }
  }
  if (resources.empty())
    return defaultResourceSpecs();
  for (std::size_t i = 0; i < resources.size(); ++i) {
    const auto& r = resources[i];
    const std::string wp = childPath(indexPath("resources", i), "weight");
    if (r.weight <= 0)
      return kube::makeKubeError(
          fmt::format("{}: resource {} weight {} must be positive", wp, r.name, r.weight));
    if (r.weight > kMaxNodeScore)
      return kube::makeKubeError(
          fmt::format("{}: resource {} weight {} must not exceed 100", wp, r.name, r.weight));
  }
  return resources;
}

kube::Expected<void> validateResourceWeights(const std::vector<ResourceSpec>& resources,
                                             std::string_view path) {
  for (std::size_t i = 0; i < resources.size(); ++i) {
    const auto& r = resources[i];
    if (r.weight <= 0 || r.weight > kMaxNodeScore) {
      return kube::makeKubeError(
          fmt::format("{}: Invalid value: {}: resource weight of {} not in valid range (0, 100]",
                      childPath(indexPath(path, i), "weight"), r.weight, r.name));
    }
  }
  return {};
}

kube::Expected<std::vector<UtilizationShapePoint>> decodeRequestedToCapacityRatio(
    const json::value& v, std::string_view path) {
  if (!v.is_object())
    return typeError(path, "object", v);
  const json::object& o = v.get_object();
  if (auto known = checkKnownFields(o, {"shape"}, path); !known)
    return known.error();
  const std::string sp = childPath(path, "shape");
  const json::value* shape = field(o, "shape");
  if (shape == nullptr || (shape->is_array() && shape->get_array().empty()))
    return kube::makeKubeError(
        fmt::format("{}: Required value: at least one point must be "
                    "specified",
                    sp));
  if (!shape->is_array())
    return typeError(sp, "array", *shape);
  std::vector<UtilizationShapePoint> out;
  const json::array& points = shape->get_array();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string ip = indexPath(sp, i);
    if (!points[i].is_object())
      return typeError(ip, "object", points[i]);
    const json::object& p = points[i].get_object();
    if (auto known = checkKnownFields(p, {"utilization", "score"}, ip); !known)
      return known.error();
    UtilizationShapePoint point;
    if (const json::value* u = field(p, "utilization")) {
      auto value = intValue(*u, childPath(ip, "utilization"));
      if (!value)
        return value.error();
      point.utilization = *value;
    }
    if (const json::value* s = field(p, "score")) {
      auto value = intValue(*s, childPath(ip, "score"));
      if (!value)
        return value.error();
      point.score = *value;
    }
    if (point.utilization < 0 || point.utilization > 100)
      return kube::makeKubeError(fmt::format("{}: Invalid value: {}: not in valid range [0, 100]",
                                             childPath(ip, "utilization"), point.utilization));
    if (point.score < 0 || point.score > kMaxCustomPriorityScore)
      return kube::makeKubeError(fmt::format("{}: Invalid value: {}: not in valid range [0, {}]",
                                             childPath(ip, "score"), point.score,
                                             kMaxCustomPriorityScore));
    if (!out.empty() && out.back().utilization >= point.utilization)
      return kube::makeKubeError(fmt::format(
          "{}: Invalid value: {}: utilization values must be sorted in increasing order",
          childPath(ip, "utilization"), point.utilization));
    point.score *= kMaxNodeScore / kMaxCustomPriorityScore;
    out.push_back(point);
  }
  return out;
}

}  // namespace koord::roles::scheduler::upstream
