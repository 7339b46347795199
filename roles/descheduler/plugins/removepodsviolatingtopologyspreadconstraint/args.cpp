// RemovePodsViolatingTopologySpreadConstraintArgs: strict decoding, defaults and validation.
#include "plugins/removepodsviolatingtopologyspreadconstraint/args.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"

namespace koord::roles::descheduler::topologyspread {

namespace json = boost::json;
namespace strict = kube::strict;

bool RemovePodsViolatingTopologySpreadConstraintArgs::allows(
    UnsatisfiableConstraintAction action) const {
  return std::find(constraints.begin(), constraints.end(), action) != constraints.end();
}

Expected<RemovePodsViolatingTopologySpreadConstraintArgs>
decodeRemovePodsViolatingTopologySpreadConstraintArgs(const json::value* args) {
  RemovePodsViolatingTopologySpreadConstraintArgs a;
  if (args == nullptr || args->is_null())
    return a;
  auto root = strict::asObject(*args, "args");
  if (!root)
    return root.error();
  const json::object& o = **root;
  if (auto ok =
          strict::rejectUnknownFields(o,
                                      {"namespaces", "labelSelector", "includeSoftConstraints",
                                       "constraints", "topologyBalanceNodeFit"},
                                      "");
      !ok)
    return ok.error();
  auto common = podfilter::decodeCommonArgs(o);
  if (!common)
    return common.error();
  a.common = std::move(*common);

  auto names = kube::jsonfields::stringList(o, "constraints", "");
  if (!names)
    return names.error();
  if (!names->empty()) {
    a.constraints.clear();
    for (std::size_t i = 0; i < names->size(); ++i) {
      const std::string& n = (*names)[i];
      UnsatisfiableConstraintAction action;
      if (n == "DoNotSchedule") {
        action = UnsatisfiableConstraintAction::kDoNotSchedule;
      } else if (n == "ScheduleAnyway") {
        action = UnsatisfiableConstraintAction::kScheduleAnyway;
      } else {
        return strict::fieldError(
            kube::jsonfields::indexPath("constraints", i),
            fmt::format("constraint {} is not one of [DoNotSchedule ScheduleAnyway]", n));
      }
      if (!a.allows(action))
        a.constraints.push_back(action);
    }
  }
  // The older switch for soft constraints, kept so configurations written for it still work.
  auto soft = strict::boolField(o, "includeSoftConstraints", "");
  if (!soft)
    return soft.error();
  if (soft->value_or(false) && !a.allows(UnsatisfiableConstraintAction::kScheduleAnyway))
    a.constraints.push_back(UnsatisfiableConstraintAction::kScheduleAnyway);

  auto node_fit = strict::boolField(o, "topologyBalanceNodeFit", "");
  if (!node_fit)
    return node_fit.error();
  a.topology_balance_node_fit = node_fit->value_or(true);
  return a;
}

}  // namespace koord::roles::descheduler::topologyspread
