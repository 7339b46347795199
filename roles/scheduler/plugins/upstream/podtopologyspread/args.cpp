#include "plugins/upstream/podtopologyspread/args.h"

#include <boost/json.hpp>

#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "koord/kube/labels.h"
#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::upstream {

namespace {

namespace json = boost::json;
using kube::jsonfields::childPath;
using kube::jsonfields::field;
using kube::jsonfields::indexPath;
using kube::jsonfields::typeError;

constexpr std::string_view kDoNotSchedule = "DoNotSchedule";
constexpr std::string_view kScheduleAnyway = "ScheduleAnyway";
constexpr std::string_view kSystem = "System";
constexpr std::string_view kList = "List";

// A defaultConstraints entry as written, before validation: the enum and the selector are
// checked by validate() so that errors come in upstream's order.
struct RawConstraint {
  std::int64_t max_skew = 0;
  std::string topology_key;
  std::string when_unsatisfiable;
  bool has_label_selector = false;
};

kube::Error invalid(std::string_view path, std::string_view value, std::string_view why) {
  return kube::makeKubeError(fmt::format("{}: Invalid value: {}: {}", path, value, why));
}

kube::Expected<RawConstraint> decodeConstraint(const json::value& v, std::string_view path) {
  if (!v.is_object())
    return typeError(path, "object", v);
  const json::object& o = v.get_object();
  if (auto known = checkKnownFields(
          o, {"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector"}, path);
      !known)
    return known.error();
  RawConstraint out;
  if (const json::value* skew = field(o, "maxSkew")) {
    const std::string sp = childPath(path, "maxSkew");
    auto n = intValue(*skew, sp);
    if (!n)
      return n.error();
    if (*n < std::numeric_limits<std::int32_t>::min() ||
        *n > std::numeric_limits<std::int32_t>::max())
      return kube::makeKubeError(fmt::format("{}: {} overflows int32", sp, *n));
    out.max_skew = *n;
  }
  auto key = kube::jsonfields::stringField(o, "topologyKey", path);
  if (!key)
    return key.error();
  out.topology_key = std::move(*key);
  auto when = kube::jsonfields::stringField(o, "whenUnsatisfiable", path);
  if (!when)
    return when.error();
  out.when_unsatisfiable = std::move(*when);
  if (const json::value* selector = field(o, "labelSelector")) {
    if (!selector->is_object())
      return typeError(childPath(path, "labelSelector"), "object", *selector);
    out.has_label_selector = true;
  }
  return out;
}

// ValidatePodTopologySpreadArgs' checks, in its order, for one entry.
kube::Expected<DefaultSpreadConstraint> validateConstraint(const RawConstraint& c,
                                                           std::string_view path) {
  DefaultSpreadConstraint out;
  if (c.max_skew <= 0)
    return invalid(childPath(path, "maxSkew"), std::to_string(c.max_skew),
                   "must be greater than zero");
  out.max_skew = static_cast<std::int32_t>(c.max_skew);
  const std::string kp = childPath(path, "topologyKey");
  if (c.topology_key.empty())
    return kube::makeKubeError(fmt::format("{}: Required value: can not be empty", kp));
  if (auto why = kube::validateLabelKey(c.topology_key))
    return invalid(kp, fmt::format("\"{}\"", c.topology_key), *why);
  out.topology_key = c.topology_key;
  const std::string wp = childPath(path, "whenUnsatisfiable");
  if (c.when_unsatisfiable.empty())
    return kube::makeKubeError(fmt::format("{}: Required value: can not be empty", wp));
  if (c.when_unsatisfiable == kDoNotSchedule) {
    out.when_unsatisfiable = UnsatisfiableConstraintAction::kDoNotSchedule;
  } else if (c.when_unsatisfiable == kScheduleAnyway) {
    out.when_unsatisfiable = UnsatisfiableConstraintAction::kScheduleAnyway;
  } else {
    return kube::makeKubeError(
        fmt::format("{}: Unsupported value: \"{}\": supported values: \"{}\", \"{}\"", wp,
                    c.when_unsatisfiable, kDoNotSchedule, kScheduleAnyway));
  }
  if (c.has_label_selector)
    return kube::makeKubeError(
        fmt::format("{}: Forbidden: constraint must not define a selector, as they deduced for "
                    "each pod",
                    childPath(path, "labelSelector")));
  return out;
}

std::string_view actionName(UnsatisfiableConstraintAction a) {
  return a == UnsatisfiableConstraintAction::kDoNotSchedule ? kDoNotSchedule : kScheduleAnyway;
}

}  // namespace

const std::vector<DefaultSpreadConstraint>& systemDefaultSpreadConstraints() {
  static const std::vector<DefaultSpreadConstraint> kDefaults{
      {3, std::string(kLabelHostname), UnsatisfiableConstraintAction::kScheduleAnyway},
      {5, std::string(kLabelTopologyZone), UnsatisfiableConstraintAction::kScheduleAnyway},
  };
  return kDefaults;
}

const std::vector<DefaultSpreadConstraint>& PodTopologySpreadArgs::effectiveDefaults() const {
  return defaulting_type == SpreadDefaultingType::kSystem ? systemDefaultSpreadConstraints()
                                                          : default_constraints;
}

kube::Expected<std::shared_ptr<const PodTopologySpreadArgs>> decodePodTopologySpreadArgs(
    const json::value* args, std::string_view api_version) {
  auto o = argsObject(args);
  if (!o)
    return o.error();
  std::vector<RawConstraint> raw;
  std::string defaulting;
  if (*o != nullptr) {
    if (auto known = checkKnownFields(**o, {"defaultConstraints", "defaultingType"}, ""); !known)
      return known.error();
    if (const json::value* list = field(**o, "defaultConstraints")) {
      if (!list->is_array())
        return typeError("defaultConstraints", "array", *list);
      const json::array& items = list->get_array();
      for (std::size_t i = 0; i < items.size(); ++i) {
        auto c = decodeConstraint(items[i], indexPath("defaultConstraints", i));
        if (!c)
          return c.error();
        raw.push_back(std::move(*c));
      }
    }
    auto type = kube::jsonfields::stringField(**o, "defaultingType", "");
    if (!type)
      return type.error();
    defaulting = std::move(*type);
  }

  if (defaulting.empty()) {
    // 1.20's v1beta1 kept explicit lists working by defaulting to List when one is given; from
    // v1beta2 on the default is always System, and a list then needs defaultingType: List.
    defaulting = std::string(isV1beta1OrOlder(api_version) && !raw.empty() ? kList : kSystem);
  }
  auto out = std::make_shared<PodTopologySpreadArgs>();
  if (defaulting == kSystem) {
    if (!raw.empty())
      return invalid("defaultingType", fmt::format("\"{}\"", defaulting),
                     "when .defaultConstraints are not empty");
    out->defaulting_type = SpreadDefaultingType::kSystem;
  } else if (defaulting == kList) {
    out->defaulting_type = SpreadDefaultingType::kList;
  } else {
    return invalid("defaultingType", fmt::format("\"{}\"", defaulting),
                   fmt::format("must be one of {{\"{}\", \"{}\"}}", kSystem, kList));
  }

  for (std::size_t i = 0; i < raw.size(); ++i) {
    const std::string path = indexPath("defaultConstraints", i);
    auto c = validateConstraint(raw[i], path);
    if (!c)
      return c.error();
    for (const auto& earlier : out->default_constraints) {
      if (earlier.topology_key == c->topology_key &&
          earlier.when_unsatisfiable == c->when_unsatisfiable)
        return kube::makeKubeError(fmt::format("{}: Duplicate value: \"{{{}, {}}}\"", path,
                                               c->topology_key, actionName(c->when_unsatisfiable)));
    }
    out->default_constraints.push_back(std::move(*c));
  }
  return std::shared_ptr<const PodTopologySpreadArgs>(std::move(out));
}

}  // namespace koord::roles::scheduler::upstream
