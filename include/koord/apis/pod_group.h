// The scheduling.sigs.k8s.io/v1alpha1 PodGroup (a gang as an object: how many of its pods must
// be placed together, and how long they wait) projected once from JSON, and its status patch.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::apis {

/// The scheduler-plugins API group Koordinator vendors: PodGroup and ElasticQuota.
inline constexpr std::string_view kSchedulingSigsGroup = "scheduling.sigs.k8s.io";
inline constexpr std::string_view kSchedulingSigsVersion = "v1alpha1";
inline constexpr std::string_view kPodGroupResource = "podgroups";
inline constexpr std::string_view kPodGroupKind = "PodGroup";

/// Bound on spec.minResources' names: a gang asks for a handful of resources.
inline constexpr std::size_t kMaxPodGroupResourceNames = 256;

/// status.phase as the vendored type names it. kNone is "" (no controller has looked yet):
/// Koordinator's controller moves it to Pending before anything else, so it stays apart.
enum class PodGroupPhase {
  kNone,
  kPending,
  kPreScheduling,
  kScheduling,
  kScheduled,
  kRunning,
  kFinished,
  kFailed,
  kUnknown,
};

struct PodGroupStatus {
  PodGroupPhase phase = PodGroupPhase::kNone;
  /// The owners of the gang's pods ("namespace/owner", comma-joined) once they occupy it.
  std::string occupied_by;
  std::int32_t scheduled = 0;
  std::int32_t running = 0;
  std::int32_t succeeded = 0;
  std::int32_t failed = 0;
  std::optional<std::chrono::system_clock::time_point> schedule_start_time;

  friend bool operator==(const PodGroupStatus&, const PodGroupStatus&) = default;
};

struct PodGroup {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  kube::Labels labels;
  /// Koordinator reads the gang's total-number, mode, match-policy and groups from these.
  kube::Labels annotations;
  std::chrono::system_clock::time_point creation_timestamp{};
  bool terminating = false;  // metadata.deletionTimestamp set

  // spec
  std::int32_t min_member = 0;
  /// nullopt when unset (a nil pointer in Go), which is not the same as an empty list.
  std::optional<kube::ResourceList> min_resources;
  std::optional<std::int32_t> schedule_timeout_seconds;

  PodGroupStatus status;

  /// "namespace/name": the gang id its pods are grouped under.
  std::string id() const { return namespace_ + "/" + name; }
  /// How long the gang's pods wait in Permit (Koordinator's GetWaitTimeDuration): the
  /// scheduleTimeoutSeconds when set and not negative (0 included), else `default_wait` (the
  /// Coscheduling args' defaultTimeout).
  std::chrono::nanoseconds waitTime(std::chrono::nanoseconds default_wait) const;
};

/// Projects a PodGroup. Unknown fields are ignored and JSON null reads as absent; a field of
/// the wrong type, a count past int32, a bad quantity or time, a phase the vendored type does
/// not name, or more than kMaxPodGroupResourceNames resources is an error naming the field
/// ("spec.minMember: expected integer, got string").
kube::Expected<PodGroup> decodePodGroup(const boost::json::value& v);

std::string_view toString(PodGroupPhase phase);

/// A JSON merge patch that leaves status exactly `status`, sent to the PodGroup itself (the
/// CRD, as Koordinator's, has no status subresource). Zero counts, an empty occupiedBy, phase
/// kNone and no start time are sent as null, removing what was there, as Go's omitempty
/// marshalling makes Koordinator's patch do. A non-empty `resource_version` is sent too,
/// making the patch fail with a conflict when the group changed meanwhile.
boost::json::value podGroupStatusPatch(const PodGroupStatus& status,
                                       std::string_view resource_version = {});

}  // namespace koord::apis
