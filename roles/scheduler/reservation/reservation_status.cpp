#include "reservation/reservation_status.h"

#include <boost/json.hpp>

#include "koord/kube/quantity.h"
#include "koord/kube/time.h"

namespace koord::roles::scheduler::reservation {

namespace json = boost::json;

namespace {

json::object condition(std::string_view type, bool status, std::string_view reason,
                       const std::string& message, TimePoint now) {
  const std::string t = kube::formatTime(now);
  json::object c{{"type", type},
                 {"status", status ? "True" : "False"},
                 {"reason", reason},
                 {"lastProbeTime", t},
                 {"lastTransitionTime", t}};
  if (!message.empty())
    c["message"] = message;
  return c;
}

// The conditions of `r` with `replacement` in place of the one of its type (a merge patch
// replaces the whole list, so the others are written back as they were).
json::array withCondition(const apis::Reservation& r, json::object replacement) {
  const std::string type(replacement.at("type").get_string());
  json::array out;
  for (const auto& c : r.conditions) {
    if (c.type == type)
      continue;
    json::object o{{"type", c.type}, {"status", c.status}};
    if (!c.reason.empty())
      o["reason"] = c.reason;
    if (!c.message.empty())
      o["message"] = c.message;
    if (c.last_probe_time)
      o["lastProbeTime"] = kube::formatTime(*c.last_probe_time);
    if (c.last_transition_time)
      o["lastTransitionTime"] = kube::formatTime(*c.last_transition_time);
    out.push_back(std::move(o));
  }
  out.push_back(std::move(replacement));
  return out;
}

json::value statusPatch(json::object status) {
  return json::object{{"status", std::move(status)}};
}

}  // namespace

json::object resourceListJson(const Resource& r) {
  json::object out;
  if (r.milli_cpu != 0)
    out["cpu"] = kube::Quantity::fromMilli(r.milli_cpu).toString();
  if (r.memory != 0)
    out["memory"] = kube::Quantity::fromInt(r.memory, kube::Quantity::Format::kBinarySI).toString();
  if (r.ephemeral_storage != 0)
    out["ephemeral-storage"] =
        kube::Quantity::fromInt(r.ephemeral_storage, kube::Quantity::Format::kBinarySI).toString();
  for (const auto& [name, value] : r.scalar) {
    if (value != 0)
      out[name] = kube::Quantity::fromInt(value).toString();
  }
  return out;
}

json::value availablePatch(const ReservationState& r, const std::string& node, TimePoint now) {
  json::array conditions;
  conditions.push_back(condition(apis::kReservationConditionScheduled, true,
                                 apis::kReasonReservationScheduled, "", now));
  conditions.push_back(condition(apis::kReservationConditionReady, true,
                                 apis::kReasonReservationAvailable, "", now));
  return statusPatch({{"phase", toString(apis::ReservationPhase::kAvailable)},
                      {"nodeName", node},
                      {"allocatable", resourceListJson(r.reserve_pod->requests)},
                      {"conditions", std::move(conditions)}});
}

json::value unschedulablePatch(const apis::Reservation& r, const std::string& message,
                               TimePoint now) {
  return statusPatch(
      {{"phase", toString(apis::ReservationPhase::kPending)},
       {"conditions",
        withCondition(r, condition(apis::kReservationConditionScheduled, false,
                                   apis::kReasonReservationUnschedulable, message, now))}});
}

json::value finishedPatch(const apis::Reservation& r, apis::ReservationPhase phase,
                          std::string_view reason, const std::string& message, TimePoint now) {
  return statusPatch({{"phase", toString(phase)},
                      {"conditions", withCondition(r, condition(apis::kReservationConditionReady,
                                                                false, reason, message, now))}});
}

json::value ownersPatch(const Resource& allocated, const std::vector<OwnerRef>& owners) {
  json::array list;
  for (const auto& o : owners)
    list.push_back(json::object{{"namespace", o.namespace_}, {"name", o.name}, {"uid", o.uid}});
  json::object allocated_json = resourceListJson(allocated);
  return statusPatch(
      {{"allocated",
        allocated_json.empty() ? json::value(nullptr) : json::value(std::move(allocated_json))},
       {"currentOwners", list.empty() ? json::value(nullptr) : json::value(std::move(list))}});
}

}  // namespace koord::roles::scheduler::reservation
