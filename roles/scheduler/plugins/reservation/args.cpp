#include "plugins/reservation/args.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::reservation {

namespace {

namespace json = boost::json;
using kube::jsonfields::field;

kube::Expected<void> readInt32(const json::object& o, std::string_view name, std::int32_t& out) {
  if (const json::value* v = field(o, name)) {
    auto n = kube::jsonfields::int32Value(*v, name);
    if (!n)
      return n.error();
    out = *n;
  }
  return {};
}

kube::Expected<void> readInt64(const json::object& o, std::string_view name, std::int64_t& out) {
  if (const json::value* v = field(o, name)) {
    auto n = kube::jsonfields::intValue(*v, name);
    if (!n)
      return n.error();
    out = *n;
  }
  return {};
}

kube::Expected<void> readBool(const json::object& o, std::string_view name, bool& out) {
  auto b = kube::jsonfields::optionalBoolField(o, name, "");
  if (!b)
    return b.error();
  if (*b)
    out = **b;
  return {};
}

kube::Error invalid(std::string_view name, std::int64_t value, std::string_view why) {
  return kube::makeKubeError(fmt::format("{}: Invalid value: {}: {}", name, value, why));
}

}  // namespace

kube::Expected<ReservationArgs> decodeReservationArgs(const json::value* args,
                                                      std::string_view /*api_version*/) {
  ReservationArgs out;
  auto o = upstream::argsObject(args);
  if (!o)
    return o.error();
  if (*o != nullptr) {
    const json::object& a = **o;
    if (auto known = upstream::checkKnownFields(
            a,
            {"apiVersion", "kind", "enablePreemption", "minCandidateNodesPercentage",
             "minCandidateNodesAbsolute", "controllerWorkers", "gcDurationSeconds",
             "gcIntervalSeconds", "disableGarbageCollection", "resyncIntervalSeconds"},
            "");
        !known)
      return known.error();
    for (auto r : {readBool(a, "enablePreemption", out.enable_preemption),
                   readInt32(a, "minCandidateNodesPercentage", out.min_candidate_nodes_percentage),
                   readInt32(a, "minCandidateNodesAbsolute", out.min_candidate_nodes_absolute),
                   readInt32(a, "controllerWorkers", out.controller_workers),
                   readInt64(a, "gcDurationSeconds", out.gc_duration_seconds),
                   readInt64(a, "gcIntervalSeconds", out.gc_interval_seconds),
                   readBool(a, "disableGarbageCollection", out.disable_garbage_collection),
                   readInt64(a, "resyncIntervalSeconds", out.resync_interval_seconds)}) {
      if (!r)
        return r.error();
    }
  }
  if (out.min_candidate_nodes_percentage < 0 || out.min_candidate_nodes_percentage > 100)
    return invalid("minCandidateNodesPercentage", out.min_candidate_nodes_percentage,
                   "not in valid range [0, 100]");
  if (out.min_candidate_nodes_absolute < 0)
    return invalid("minCandidateNodesAbsolute", out.min_candidate_nodes_absolute,
                   "not in valid range [0, inf)");
  if (out.controller_workers < 1)
    return invalid("controllerWorkers", out.controller_workers, "must be at least 1");
  if (out.gc_duration_seconds <= 0)
    return invalid("gcDurationSeconds", out.gc_duration_seconds, "must be positive");
  if (out.gc_interval_seconds <= 0)
    return invalid("gcIntervalSeconds", out.gc_interval_seconds, "must be positive");
  if (out.resync_interval_seconds <= 0)
    return invalid("resyncIntervalSeconds", out.resync_interval_seconds, "must be positive");
  return out;
}

}  // namespace koord::roles::scheduler::reservation
