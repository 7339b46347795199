#include "koord/apis/node_amplification.h"

#include <boost/json.hpp>

#include <cmath>

#include <fmt/format.h>

#include "koord/apis/input_limits.h"
#include "object_fields.h"

namespace koord::apis {

kube::Expected<std::optional<double>> nodeAmplificationRatio(const kube::Labels& annotations,
                                                             std::string_view resource) {
  constexpr std::string_view key = kAnnotationNodeResourceAmplificationRatio;
  auto parsed = detail::parseAnnotationJson(annotations, key, kMaxSmallAnnotationValueBytes);
  if (!parsed)
    return parsed.error();
  if (!*parsed)
    return std::optional<double>();
  if ((*parsed)->syntax_error)
    return kube::makeKubeError(fmt::format("{}: not JSON", key));
  const boost::json::value& v = (*parsed)->value;
  if (v.is_null())
    return std::optional<double>();
  const boost::json::object* o = v.if_object();
  if (o == nullptr)
    return kube::makeKubeError(fmt::format("{}: not an object of ratios", key));
  const boost::json::value* ratio = o->if_contains(resource);
  if (ratio == nullptr || ratio->is_null())
    return std::optional<double>();
  if (!ratio->is_number())
    return kube::makeKubeError(fmt::format("{}: {}: not a number", key, resource));
  const double r = ratio->to_number<double>();
  if (!std::isfinite(r))
    return kube::makeKubeError(fmt::format("{}: {}: not a finite number", key, resource));
  return std::optional<double>(r);
}

}  // namespace koord::apis
