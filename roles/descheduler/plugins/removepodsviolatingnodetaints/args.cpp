// RemovePodsViolatingNodeTaintsArgs: strict decoding and upstream's validation.
#include "plugins/removepodsviolatingnodetaints/args.h"

#include <boost/json.hpp>

#include <utility>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"

namespace koord::roles::descheduler::nodetaints {

namespace json = boost::json;
namespace strict = kube::strict;

Expected<RemovePodsViolatingNodeTaintsArgs> decodeRemovePodsViolatingNodeTaintsArgs(
    const json::value* args) {
  RemovePodsViolatingNodeTaintsArgs a;
  if (args == nullptr || args->is_null())
    return a;
  auto root = strict::asObject(*args, "args");
  if (!root)
    return root.error();
  const json::object& o = **root;
  if (auto ok =
          strict::rejectUnknownFields(o,
                                      {"namespaces", "labelSelector", "includePreferNoSchedule",
                                       "excludedTaints", "includedTaints"},
                                      "");
      !ok)
    return ok.error();
  auto common = podfilter::decodeCommonArgs(o);
  if (!common)
    return common.error();
  a.common = std::move(*common);

  auto prefer = strict::boolField(o, "includePreferNoSchedule", "");
  if (!prefer)
    return prefer.error();
  a.include_prefer_no_schedule = prefer->value_or(false);

  auto excluded = kube::jsonfields::stringList(o, "excludedTaints", "");
  if (!excluded)
    return excluded.error();
  a.excluded_taints = std::move(*excluded);
  if (kube::jsonfields::field(o, "includedTaints") != nullptr) {
    auto included = kube::jsonfields::stringList(o, "includedTaints", "");
    if (!included)
      return included.error();
    a.included_taints = std::move(*included);
  }
  if (!a.excluded_taints.empty() && a.included_taints && !a.included_taints->empty())
    return strict::fieldError("includedTaints",
                              "either includedTaints or excludedTaints can be set, but not both");
  return a;
}

}  // namespace koord::roles::descheduler::nodetaints
