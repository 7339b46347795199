#include "plugins/upstream/volumebinding/args.h"

#include <boost/json.hpp>

#include <string>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koord/kube/json_fields.h"
#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::upstream::volumebinding {
namespace {

namespace json = boost::json;
using kube::jsonfields::childPath;
using kube::jsonfields::field;
using kube::jsonfields::indexPath;
using kube::jsonfields::typeError;

constexpr std::string_view kTimeoutField = "bindTimeoutSeconds";
constexpr std::string_view kShapeField = "shape";
// Far more points than a piecewise-linear score needs; bounds what a config can make us hold.
constexpr std::size_t kMaxShapePoints = 100;

kube::Expected<std::int32_t> pointMember(const json::object& p, std::string_view name,
                                         std::string_view path) {
  const json::value* v = field(p, name);
  if (v == nullptr)
    return 0;
  return kube::jsonfields::int32Value(*v, childPath(path, name));
}

kube::Expected<std::vector<ShapePoint>> decodeShape(const json::value& v) {
  if (!v.is_array())
    return typeError(kShapeField, "array", v);
  const json::array& points = v.get_array();
  if (points.size() > kMaxShapePoints) {
    return kube::makeKubeError(fmt::format("{}: Too many: {}: must have at most {} items",
                                           kShapeField, points.size(), kMaxShapePoints));
  }
  std::vector<ShapePoint> out;
  out.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string ip = indexPath(kShapeField, i);
    if (!points[i].is_object())
      return typeError(ip, "object", points[i]);
    const json::object& p = points[i].get_object();
    if (auto known = checkKnownFields(p, {"utilization", "score"}, ip); !known)
      return known.error();
    auto utilization = pointMember(p, "utilization", ip);
    if (!utilization)
      return utilization.error();
    auto score = pointMember(p, "score", ip);
    if (!score)
      return score.error();
    out.push_back({*utilization, *score});
  }
  return out;
}

// validateFunctionShape, first error only: at least one point, utilization increasing, each
// utilization within [0, 100] and each score within [0, 10].
kube::Expected<void> validateShape(const std::vector<ShapePoint>& shape) {
  if (shape.empty()) {
    return kube::makeKubeError(
        fmt::format("{}: Required value: at least one point must be specified", kShapeField));
  }
  for (std::size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      return kube::makeKubeError(fmt::format(
          "{}: Invalid value: {}: Utilization values must be sorted in increasing order",
          childPath(indexPath(kShapeField, i), "utilization"), shape[i].utilization));
    }
  }
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const ShapePoint& p = shape[i];
    if (p.utilization < 0 || p.utilization > 100) {
      return kube::makeKubeError(fmt::format("{}: Invalid value: {}: not in valid range [0, 100]",
                                             childPath(indexPath(kShapeField, i), "utilization"),
                                             p.utilization));
    }
    if (p.score < 0 || p.score > kMaxShapeScore) {
      return kube::makeKubeError(fmt::format("{}: Invalid value: {}: not in valid range [0, {}]",
                                             childPath(indexPath(kShapeField, i), "score"), p.score,
                                             kMaxShapeScore));
    }
  }
  return {};
}

}  // namespace

kube::Expected<std::shared_ptr<const VolumeBindingArgs>> decodeVolumeBindingArgs(
    const boost::json::value* args, std::string_view api_version) {
  const bool v1beta1 = isV1beta1OrOlder(api_version);
  auto out = std::make_shared<VolumeBindingArgs>();
  auto o = argsObject(args);
  if (!o)
    return o.error();
  bool has_shape = false;
  if (*o != nullptr) {
    auto known = v1beta1 ? checkKnownFields(**o, {kTimeoutField}, "")
                         : checkKnownFields(**o, {kTimeoutField, kShapeField}, "");
    if (!known)
      return known.error();
    if (const json::value* v = field(**o, kTimeoutField)) {
      auto timeout = intValue(*v, kTimeoutField);
      if (!timeout)
        return timeout.error();
      out->bind_timeout_seconds = *timeout;
    }
    if (const json::value* v = field(**o, kShapeField)) {
      auto shape = decodeShape(*v);
      if (!shape)
        return shape.error();
      out->shape = std::move(*shape);
      has_shape = true;
    }
  }
  if (v1beta1) {
    if (out->bind_timeout_seconds <= 0) {
      return kube::makeKubeError(fmt::format(
          "invalid BindTimeoutSeconds: {}, must be positive integer", out->bind_timeout_seconds));
    }
  } else if (out->bind_timeout_seconds < 0) {
    return kube::makeKubeError(fmt::format(
        "{}: Invalid value: {}: invalid BindTimeoutSeconds, should not be a negative value",
        kTimeoutField, out->bind_timeout_seconds));
  }
  if (has_shape) {
    if (auto valid = validateShape(out->shape); !valid)
      return valid.error();
    // kube-scheduler reads it only behind the VolumeCapacityPriority alpha gate.
    KOORD_LOG_WARNING(
        "scheduler: VolumeBindingArgs.shape has no effect in koord (no VolumeCapacityPriority "
        "score is built)");
  }
  return std::shared_ptr<const VolumeBindingArgs>(std::move(out));
}

}  // namespace koord::roles::scheduler::upstream::volumebinding
