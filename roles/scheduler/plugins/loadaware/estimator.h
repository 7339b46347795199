// Koordinator's default load estimator: what a pod will use before its usage is measured (a
// share of max(limit, request)), and the node capacity load is measured against.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "koord/apis/extension.h"
#include "koord/kube/labels.h"
#include "plugins/loadaware/args.h"
#include "plugins/loadaware/resource_vector.h"

namespace koord::roles::scheduler::loadaware {

inline constexpr std::string_view kAnnotationCustomEstimatedScalingFactors =
    "scheduling.koordinator.sh/load-estimated-scaling-factors";
inline constexpr std::string_view kAnnotationCustomEstimatedSecondsAfterPodScheduled =
    "scheduling.koordinator.sh/load-estimated-seconds-after-pod-scheduled";
inline constexpr std::string_view kAnnotationCustomEstimatedSecondsAfterInitialized =
    "scheduling.koordinator.sh/load-estimated-seconds-after-initialized";
inline constexpr std::string_view kAnnotationNodeRawAllocatable =
    "node.koordinator.sh/raw-allocatable";

/// What a pod that asks for nothing is assumed to use: 250m and 200 MiB (more than
/// kube-scheduler's non-zero defaults, on purpose: load matters more than requests here).
inline constexpr std::int64_t kDefaultEstimatedMilliCPU = 250;
inline constexpr std::int64_t kDefaultEstimatedMemory = 200LL * 1024 * 1024;

/// Koordinator's GetPodPriorityClassWithDefault: the declared class, else the QoS's.
apis::PriorityClass podPriorityWithDefault(const PodInfo& pod);

/// The pod's annotation as a resource -> percent map; nullopt when absent or not such a map
/// (Koordinator then uses the args' factors).
std::optional<ResourceFactors> customScalingFactors(const kube::Labels& annotations);

/// An integer annotation; -1 when absent or not an integer (Koordinator's "not customised").
std::int64_t customSeconds(const kube::Labels& annotations, std::string_view key);

/// One resource's estimate: round(max(limit, request) x factor / 100), at most the limit when
/// there is one; a resource asked for not at all counts its default (cpu and memory only).
/// `resource` is the name to read (batch-cpu for a batch pod's "cpu").
std::int64_t estimateResource(const Resource& requests, const Resource& limits,
                              std::string_view resource, std::int64_t factor);

class Estimator {
 public:
  explicit Estimator(const LoadAwareSchedulingArgs& args);

  /// Per scaling-factor resource (named as the args name it: "cpu" even when a batch pod's
  /// batch-cpu was read), the estimated usage.
  ResourceFactors estimatePod(const PodInfo& pod) const;
  /// status.allocatable, with node.koordinator.sh/raw-allocatable's entries in place of the
  /// amplified ones (load is real usage, so it is measured against real capacity).
  ResourceVector estimateNode(const Node& node, const ResourceVectorizer& vectorizer) const;

 private:
  ResourceFactors factors_;
  bool allow_customize_ = false;
};

/// estimatePod's result in a vectorizer's slots, written in place: Filter and Score estimate
/// the incoming pod on every node when PreFilter did not run, so no map is built unless the pod
/// customises its factors.
class VectorEstimator {
 public:
  VectorEstimator(const LoadAwareSchedulingArgs& args, const ResourceVectorizer& vectorizer);

  /// Writes vectorizer.size() entries to `out`.
  void estimate(const PodInfo& pod, std::int64_t* out) const;

 private:
  enum class Field : std::uint8_t { kNone, kCPU, kMemory, kEphemeralStorage, kPods, kScalar };
  /// Which of a Resource's values one estimate reads, and its value when the pod asks for none.
  struct Read {
    Field field = Field::kScalar;
    std::string scalar;
    std::int64_t if_none = 0;
    static Read of(std::string_view resource);
    std::int64_t from(const Resource& r) const;
  };
  /// One scaling factor: where its estimate goes and what it reads per priority class.
  struct Slot {
    std::size_t index = 0;
    std::int64_t factor = 0;
    std::array<Read, 5> reads;  // by apis::PriorityClass
  };
  Estimator estimator_;
  ResourceVectorizer vectorizer_;
  std::vector<Slot> slots_;
  bool allow_customize_ = false;
};

}  // namespace koord::roles::scheduler::loadaware
