#include "koord/apis/colocation_profile.h"
#include "koord/kube/json_fields.h"

#include <boost/json.hpp>

#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "koord/kube/decode.h"

namespace koord::apis {
namespace {

using namespace koord::kube::jsonfields;

namespace json = boost::json;

// intstr.GetScaledValueFromIntOrPercent(p, 100, false): an integer as is, a string only as
// "<int>%" (Go's Atoi accepts a sign).
kube::Expected<std::int32_t> decodeProbability(const json::value& v, std::string_view path) {
  if (!v.is_string())
    return int32Value(v, path);
  std::string_view s = v.get_string();
  if (s.empty() || s.back() != '%') {
    return kube::makeKubeError(fmt::format(
        "{}: invalid value \"{}\": a string must be a percentage such as \"50%\"", path, s));
  }
  std::string_view digits = s.substr(0, s.size() - 1);
  if (!digits.empty() && digits.front() == '+')
    digits.remove_prefix(1);
  std::int32_t out = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
      (digits.front() == '-' && digits.size() == 1)) {
    return kube::makeKubeError(
        fmt::format("{}: invalid value \"{}\": not an integer percentage", path, s));
  }
  return out;
}

kube::Expected<std::optional<kube::LabelSelector>> decodeOptionalSelector(const json::object& o,
                                                                          std::string_view name,
                                                                          std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return std::optional<kube::LabelSelector>();
  std::string p = fmt::format("{}.{}", path, name);
  auto sel = kube::decodeLabelSelector(*v, p);
  if (!sel)
    return sel.error();
  // Refuse now what LabelSelectorAsSelector would refuse at every admission.
  if (auto compiled = kube::toSelector(*sel); !compiled)
    return kube::makeKubeError(fmt::format("{}: {}", p, compiled.error().message));
  return std::optional<kube::LabelSelector>(std::move(*sel));
}

kube::Expected<kube::Labels> decodeMap(const json::object& o, std::string_view name,
                                       std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return kube::Labels();
  return kube::decodeStringMap(*v, fmt::format("{}.{}", path, name));
}

kube::Expected<void> decodeSpec(const json::object& spec, ClusterColocationProfile& out) {
  constexpr std::string_view kPath = "spec";
  auto ns_selector = decodeOptionalSelector(spec, "namespaceSelector", kPath);
  if (!ns_selector)
    return ns_selector.error();
  out.namespace_selector = std::move(*ns_selector);
  auto selector = decodeOptionalSelector(spec, "selector", kPath);
  if (!selector)
    return selector.error();
  out.selector = std::move(*selector);

  if (const json::value* p = field(spec, "probability")) {
    auto percent = decodeProbability(*p, "spec.probability");
    if (!percent)
      return percent.error();
    out.probability_percent = *percent;
  }

  auto qos = stringField(spec, "qosClass", kPath);
  if (!qos)
    return qos.error();
  if (!qos->empty() && qosClassByName(*qos) == QoSClass::kNone) {
    return kube::makeKubeError(fmt::format(
        "spec.qosClass: unsupported value \"{}\": supported values: \"BE\", \"LS\", \"LSE\", "
        "\"LSR\", \"SYSTEM\"",
        *qos));
  }
  out.qos_class = std::move(*qos);

  auto priority_class = stringField(spec, "priorityClassName", kPath);
  if (!priority_class)
    return priority_class.error();
  out.priority_class_name = std::move(*priority_class);

  if (const json::value* p = field(spec, "koordinatorPriority")) {
    auto priority = int32Value(*p, "spec.koordinatorPriority");
    if (!priority)
      return priority.error();
    out.koordinator_priority = *priority;
  }

  struct MapField {
    std::string_view name;
    kube::Labels* target;
  };
  for (const MapField& m :
       {MapField{"labels", &out.labels}, MapField{"annotations", &out.annotations},
        MapField{"labelKeysMapping", &out.label_keys_mapping},
        MapField{"annotationKeysMapping", &out.annotation_keys_mapping},
        MapField{"labelSuffixes", &out.label_suffixes}}) {
    auto decoded = decodeMap(spec, m.name, kPath);
    if (!decoded)
      return decoded.error();
    *m.target = std::move(*decoded);
  }

  auto scheduler = stringField(spec, "schedulerName", kPath);
  if (!scheduler)
    return scheduler.error();
  out.scheduler_name = std::move(*scheduler);

  if (const json::value* patch = field(spec, "patch")) {
    // A strategic merge patch of a Pod can only be an object.
    if (!patch->is_object())
      return typeError("spec.patch", "object", *patch);
    out.patch = *patch;
  }
  return {};
}

}  // namespace

kube::Expected<ClusterColocationProfile> decodeClusterColocationProfile(
    const boost::json::value& v) {
  const json::object* o = v.if_object();
  if (o == nullptr)
    return typeError("ClusterColocationProfile", "object", v);
  ClusterColocationProfile out;
  if (const json::value* meta = field(*o, "metadata")) {
    const json::object* m = meta->if_object();
    if (m == nullptr)
      return typeError("metadata", "object", *meta);
    auto name = stringField(*m, "name", "metadata");
    if (!name)
      return name.error();
    out.name = std::move(*name);
    auto annotations = decodeMap(*m, "annotations", "metadata");
    if (!annotations)
      return annotations.error();
    out.skip_update_resources = annotations->count(kAnnotationSkipUpdateResources) > 0;
  }
  if (const json::value* spec = field(*o, "spec")) {
    const json::object* s = spec->if_object();
    if (s == nullptr)
      return typeError("spec", "object", *spec);
    if (auto decoded = decodeSpec(*s, out); !decoded)
      return decoded.error();
  }
  return out;
}

}  // namespace koord::apis
