// Gang scheduling as pods and PodGroups declare it (Koordinator's gang annotations, scheduler-
// plugins' pod-group labels), read into a GangSpec as Koordinator's Coscheduling reads it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/pod_group.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::apis {

inline constexpr std::string_view kAnnotationGangName = "gang.scheduling.koordinator.sh/name";
/// The fewest of the gang's pods that must be placed together (an int32).
inline constexpr std::string_view kAnnotationGangMinAvailable =
    "gang.scheduling.koordinator.sh/min-available";
/// How long the gang's pods wait in Permit (a Go duration).
inline constexpr std::string_view kAnnotationGangWaitingTime =
    "gang.scheduling.koordinator.sh/waiting-time";
/// How many pods the gang has in all (an int32); min-available when unset.
inline constexpr std::string_view kAnnotationGangTotalNumber =
    "gang.scheduling.koordinator.sh/total-number";
inline constexpr std::string_view kAnnotationGangMode = "gang.scheduling.koordinator.sh/mode";
/// The gangs bound together with this one, a JSON array of "namespace/name" gang ids: none is
/// bound until all of them can be.
inline constexpr std::string_view kAnnotationGangGroups = "gang.scheduling.koordinator.sh/groups";
/// Declared by Koordinator for marking a gang that timed out; v1.5 neither writes nor reads it.
inline constexpr std::string_view kAnnotationGangTimeout = "gang.scheduling.koordinator.sh/timeout";
/// Which of the gang's pods count towards min-available.
inline constexpr std::string_view kAnnotationGangMatchPolicy =
    "gang.scheduling.koordinator.sh/match-policy";
/// The match policy under scheduler-plugins' prefix, read on a pod whose own is empty.
inline constexpr std::string_view kAnnotationAliasGangMatchPolicy =
    "pod-group.scheduling.sigs.k8s.io/match-policy";

/// scheduler-plugins' label naming the pod's PodGroup: the gang is that object's.
inline constexpr std::string_view kLabelPodGroup = "pod-group.scheduling.sigs.k8s.io";
/// The lightweight-coscheduling labels (deprecated, still read by v1.5): the gang's name and its
/// min-available, which win over the annotations.
inline constexpr std::string_view kLabelLightweightPodGroupName =
    "pod-group.scheduling.sigs.k8s.io/name";
inline constexpr std::string_view kLabelLightweightPodGroupMinAvailable =
    "pod-group.scheduling.sigs.k8s.io/min-available";

inline constexpr std::string_view kGangModeStrict = "Strict";
inline constexpr std::string_view kGangModeNonStrict = "NonStrict";
inline constexpr std::string_view kGangMatchPolicyOnlyWaiting = "only-waiting";
inline constexpr std::string_view kGangMatchPolicyWaitingAndRunning = "waiting-and-running";
inline constexpr std::string_view kGangMatchPolicyOnceSatisfied = "once-satisfied";

/// The Coscheduling args' defaultTimeout when the configuration leaves it out.
inline constexpr std::chrono::seconds kDefaultGangWaitTime{600};

/// A gang's name becomes a PodGroup's name or part of an id: a DNS subdomain at most.
inline constexpr std::size_t kMaxGangNameBytes = 253;
/// A gang id is a namespace (a DNS label), "/" and a name.
inline constexpr std::size_t kMaxGangIdBytes = 63 + 1 + kMaxGangNameBytes;
/// The groups annotation binds the gangs of one job: a few roles, far fewer than this.
inline constexpr std::size_t kMaxGangGroups = 256;

/// Strict: a pod of the gang that fails scheduling fails the whole gang's cycle; NonStrict: the
/// others keep what they got.
enum class GangMode { kStrict, kNonStrict };
/// once-satisfied: pods stop counting once the gang was satisfied; only-waiting: only pods
/// waiting in Permit count; waiting-and-running: bound pods count too.
enum class GangMatchPolicy { kOnceSatisfied, kOnlyWaiting, kWaitingAndRunning };
/// Where a gang's settings come from: the pod's own annotations, or the PodGroup its
/// pod-group.scheduling.sigs.k8s.io label names.
enum class GangSource { kPodAnnotations, kPodGroup };

/// The gang a pod is in.
struct PodGang {
  std::string namespace_;
  std::string name;
  GangSource source = GangSource::kPodAnnotations;

  /// "namespace/name", as Koordinator's gang cache keys it.
  std::string id() const { return namespace_ + "/" + name; }
  friend bool operator==(const PodGang&, const PodGang&) = default;
};

/// Koordinator's GetGangNameByPod: the pod-group.scheduling.sigs.k8s.io label, else the
/// lightweight name label, else the gang name annotation; the first non-empty one names the
/// gang, in the pod's namespace. nullopt when none does; an error naming the key whose value is
/// longer than kMaxGangNameBytes.
kube::Expected<std::optional<PodGang>> podGang(std::string_view pod_namespace,
                                               const kube::Labels& labels,
                                               const kube::Labels& annotations);
/// podGang's id ("namespace/name"), or nullopt for a pod in no gang.
kube::Expected<std::optional<std::string>> podGangId(std::string_view pod_namespace,
                                                     const kube::Labels& labels,
                                                     const kube::Labels& annotations);

/// A gang's settings, as Koordinator's Gang holds them once initialised.
struct GangSpec {
  /// "namespace/name".
  std::string id;
  GangSource source = GangSource::kPodAnnotations;
  std::int32_t min_available = 0;
  std::int32_t total_number = 0;
  GangMode mode = GangMode::kStrict;
  GangMatchPolicy match_policy = GangMatchPolicy::kOnceSatisfied;
  std::chrono::nanoseconds wait_time{0};
  /// The gang ids bound together, sorted; the gang itself alone when the annotation is unset,
  /// empty or unreadable. Koordinator neither adds the gang itself nor drops duplicates or
  /// empty ids, and neither does this.
  std::vector<std::string> groups;
  /// The groups joined by ",": the key of the gang group.
  std::string group_id;
  /// Each annotation that was set but unusable, why, and what was used instead ("<key>:
  /// unsupported value \"Loose\", using Strict"): Koordinator logs these and goes on with its
  /// default, and so does the parse; a caller logs them or sends them as Events.
  std::vector<std::string> ignored;
};

/// The gang of a pod that declares it itself (Koordinator's tryInitByPodConfig), with
/// `default_wait` for the Coscheduling args' defaultTimeout:
///   - min-available: the lightweight label when non-empty, else the annotation; an int32 as
///     strconv.ParseInt reads it (sign, decimal digits). Missing or malformed is an error naming
///     the key: Koordinator leaves such a gang uninitialised.
///   - total-number: its int32; min-available when unset or malformed, and when below
///     min-available unless it is 0 (then 0 is kept, as Koordinator keeps it).
///   - mode: Strict or NonStrict; Strict otherwise.
///   - waiting-time: a positive Go duration; default_wait otherwise.
///   - groups: a JSON array of gang ids; non-string items read as "" (as Go's decoder leaves
///     them); the gang itself when unset, null, empty or not an array.
///   - match policy: the annotation, else the alias; once-satisfied unless one of the three.
/// Errors too, naming the key: a pod in no gang, or whose gang is a PodGroup's (read that with
/// gangSpecFromPodGroup); a name over kMaxGangNameBytes; more than kMaxGangGroups groups, one
/// over kMaxGangIdBytes, or a groups value over kMaxAnnotationValueBytes.
kube::Expected<GangSpec> gangSpecFromPod(std::string_view pod_namespace, const kube::Labels& labels,
                                         const kube::Labels& annotations,
                                         std::chrono::nanoseconds default_wait);

/// The gang of a PodGroup (Koordinator's tryInitByPodGroup): min-available is spec.minMember,
/// the wait time PodGroup::waitTime(default_wait), and total-number, mode, match-policy (not
/// its alias) and groups come from the PodGroup's annotations, read as gangSpecFromPod reads
/// them. Only the groups' bounds are errors.
kube::Expected<GangSpec> gangSpecFromPodGroup(const PodGroup& group,
                                              std::chrono::nanoseconds default_wait);

std::string_view toString(GangMode mode);
std::string_view toString(GangMatchPolicy policy);

}  // namespace koord::apis
