#include "qosmanager/framework/resource_qos_strategy.h"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"

namespace koord::roles::koordlet::qosmanager {

namespace json = boost::json;
using kube::jsonfields::childPath;

kube::Expected<ResourceQOSSection> resourceQOSSection(const json::object& strategy,
                                                      std::string_view cls,
                                                      std::string_view section) {
  const std::string class_path = childPath(kResourceQOSStrategyPath, cls);
  ResourceQOSSection out{nullptr, childPath(class_path, section)};
  auto class_obj = kube::jsonfields::objectField(strategy, cls, kResourceQOSStrategyPath);
  if (!class_obj)
    return class_obj.error();
  if (*class_obj == nullptr)
    return out;
  auto found = kube::jsonfields::objectField(**class_obj, section, class_path);
  if (!found)
    return found.error();
  out.object = *found;
  return out;
}

kube::Expected<std::string> resourceQOSCpuPolicy(const json::object& strategy) {
  auto policies = kube::jsonfields::objectField(strategy, "policies", kResourceQOSStrategyPath);
  if (!policies)
    return policies.error();
  if (*policies == nullptr)
    return std::string();
  return kube::jsonfields::stringField(**policies, "cpuPolicy",
                                       childPath(kResourceQOSStrategyPath, "policies"));
}

kube::Expected<std::optional<std::int64_t>> boundedIntField(const json::object& o,
                                                            std::string_view name,
                                                            std::string_view path, std::int64_t min,
                                                            std::int64_t max) {
  const json::value* v = kube::jsonfields::field(o, name);
  if (v == nullptr)
    return std::optional<std::int64_t>();
  if (!v->is_int64())
    return kube::jsonfields::typeError(childPath(path, name), "integer", *v);
  const std::int64_t n = v->get_int64();
  if (n < min || n > max) {
    const std::string bound =
        max - min == 1 ? fmt::format("{} or {}", min, max) : fmt::format("in [{}, {}]", min, max);
    return kube::makeKubeError(
        fmt::format("{}: must be {}, got {}", childPath(path, name), bound, n));
  }
  return std::optional<std::int64_t>(n);
}

}  // namespace koord::roles::koordlet::qosmanager
