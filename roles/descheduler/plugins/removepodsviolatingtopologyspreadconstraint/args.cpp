// RemovePodsViolatingTopologySpreadConstraintArgs: strict decoding, defaults and validation.
#include "plugins/removepodsviolatingtopologyspreadconstraint/args.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"
#include "plugins/pluginkit/args_reader.h"

namespace koord::roles::descheduler::topologyspread {

namespace json = boost::json;
namespace strict = kube::strict;

namespace {

// The constraints the args name, each once, in the order given; none named keeps the default.
Expected<void> setConstraints(const std::vector<std::string>& names,
                              RemovePodsViolatingTopologySpreadConstraintArgs& a) {
  if (names.empty())
    return {};
  a.constraints.clear();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
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
  return {};
}

}  // namespace

bool RemovePodsViolatingTopologySpreadConstraintArgs::allows(
    UnsatisfiableConstraintAction action) const {
  return std::find(constraints.begin(), constraints.end(), action) != constraints.end();
}

Expected<RemovePodsViolatingTopologySpreadConstraintArgs>
decodeRemovePodsViolatingTopologySpreadConstraintArgs(const json::value* args) {
  RemovePodsViolatingTopologySpreadConstraintArgs a;
  std::vector<std::string> names;
  bool soft = false;
  pluginkit::ArgsReader r(args, {"namespaces", "labelSelector", "includeSoftConstraints",
                                 "constraints", "topologyBalanceNodeFit"});
  r.common(a.common)
      .strings("constraints", names)
      .then([&] { return setConstraints(names, a); })
      // The older switch for soft constraints, kept so configurations written for it still work.
      .boolean("includeSoftConstraints", soft)
      .boolean("topologyBalanceNodeFit", a.topology_balance_node_fit);
  if (soft && !a.allows(UnsatisfiableConstraintAction::kScheduleAnyway))
    a.constraints.push_back(UnsatisfiableConstraintAction::kScheduleAnyway);
  return r.finish(std::move(a));
}

}  // namespace koord::roles::descheduler::topologyspread
