// decodePodGroup (the PodGroup JSON -> PodGroup projection), its phases' spellings, the wait
// time Koordinator derives from it, and the status patch.
#include "koord/apis/pod_group.h"

#include <boost/json.hpp>

#include <utility>

#include "crd_object.h"
#include "enum_names.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/time.h"
#include "object_fields.h"

namespace koord::apis {

namespace json = boost::json;
using namespace koord::kube::jsonfields;
using kube::Expected;

namespace {

using detail::EnumName;

constexpr EnumName<PodGroupPhase> kPhases[] = {
    {PodGroupPhase::kNone, ""},
    {PodGroupPhase::kPending, "Pending"},
    {PodGroupPhase::kPreScheduling, "PreScheduling"},
    {PodGroupPhase::kScheduling, "Scheduling"},
    {PodGroupPhase::kScheduled, "Scheduled"},
    {PodGroupPhase::kRunning, "Running"},
    {PodGroupPhase::kFinished, "Finished"},
    {PodGroupPhase::kFailed, "Failed"},
    {PodGroupPhase::kUnknown, "Unknown"},
};

// The int32 member `name`; nullopt when absent or null.
Expected<std::optional<std::int32_t>> optionalInt32(const json::object& o, std::string_view name,
                                                    std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return std::optional<std::int32_t>();
  auto n = int32Value(*v, childPath(path, name));
  if (!n)
    return n.error();
  return std::optional<std::int32_t>(*n);
}

Expected<void> decodeSpec(const json::object& spec, PodGroup& out) {
  constexpr std::string_view kPath = "spec";
  auto min_member = optionalInt32(spec, "minMember", kPath);
  if (!min_member)
    return min_member.error();
  out.min_member = min_member->value_or(0);
  auto min_resources =
      detail::boundedResourceList(spec, "minResources", kPath, kMaxPodGroupResourceNames);
  if (!min_resources)
    return min_resources.error();
  out.min_resources = std::move(*min_resources);
  auto timeout = optionalInt32(spec, "scheduleTimeoutSeconds", kPath);
  if (!timeout)
    return timeout.error();
  out.schedule_timeout_seconds = *timeout;
  return {};
}

Expected<void> decodeStatus(const json::object& status, PodGroup& group) {
  constexpr std::string_view kPath = "status";
  PodGroupStatus& out = group.status;
  auto phase = detail::enumField(status, "phase", kPath, kPhases);
  if (!phase)
    return phase.error();
  out.phase = phase->value_or(PodGroupPhase::kNone);
  auto occupied = stringField(status, "occupiedBy", kPath);
  if (!occupied)
    return occupied.error();
  out.occupied_by = std::move(*occupied);
  for (const auto& [name, target] :
       {std::pair<std::string_view, std::int32_t*>{"scheduled", &out.scheduled},
        {"running", &out.running},
        {"succeeded", &out.succeeded},
        {"failed", &out.failed}}) {
    auto n = optionalInt32(status, name, kPath);
    if (!n)
      return n.error();
    *target = n->value_or(0);
  }
  auto start = timeField(status, "scheduleStartTime", kPath);
  if (!start)
    return start.error();
  out.schedule_start_time = *start;
  return {};
}

json::value countOrNull(std::int32_t n) {
  return n == 0 ? json::value(nullptr) : json::value(n);
}

}  // namespace

std::chrono::nanoseconds PodGroup::waitTime(std::chrono::nanoseconds default_wait) const {
  if (schedule_timeout_seconds && *schedule_timeout_seconds >= 0)
    return std::chrono::seconds(*schedule_timeout_seconds);
  return default_wait;
}

Expected<PodGroup> decodePodGroup(const json::value& v) {
  return detail::decodeCrd<PodGroup>(v, "PodGroup", decodeSpec, decodeStatus);
}

std::string_view toString(PodGroupPhase phase) {
  return detail::nameOf(kPhases, phase);
}

json::value podGroupStatusPatch(const PodGroupStatus& status, std::string_view resource_version) {
  json::object s;
  s["phase"] = status.phase == PodGroupPhase::kNone ? json::value(nullptr)
                                                    : json::value(toString(status.phase));
  s["occupiedBy"] =
      status.occupied_by.empty() ? json::value(nullptr) : json::value(status.occupied_by);
  s["scheduled"] = countOrNull(status.scheduled);
  s["running"] = countOrNull(status.running);
  s["succeeded"] = countOrNull(status.succeeded);
  s["failed"] = countOrNull(status.failed);
  s["scheduleStartTime"] = status.schedule_start_time
                               ? json::value(kube::formatTime(*status.schedule_start_time))
                               : json::value(nullptr);
  json::object patch{{"status", std::move(s)}};
  if (!resource_version.empty())
    patch["metadata"] = json::object{{"resourceVersion", resource_version}};
  return patch;
}

}  // namespace koord::apis
