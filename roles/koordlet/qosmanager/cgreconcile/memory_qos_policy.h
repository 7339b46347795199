// Memory QoS configuration without I/O: each class's resourceQOSStrategy.<class>.memoryQOS with
// Koordinator's defaults, and a pod's koordinator.sh/memoryQOS override laid over its class's.
#pragma once

#include <boost/json/fwd.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "koord/apis/extension.h"
#include "koord/kube/error.h"

namespace koord::roles::koordlet::qosmanager {

/// The pod annotation whose JSON (PodMemoryQOSConfig: a policy and MemoryQOS's fields) overrides
/// the node's memoryQOS for that pod.
inline constexpr std::string_view kAnnotationPodMemoryQOS = "koordinator.sh/memoryQOS";
/// The longest koordinator.sh/memoryQOS value decoded; a real one is a few hundred bytes.
inline constexpr std::size_t kMaxPodMemoryQOSBytes = 4096;

/// The resourceQOSStrategy classes that carry a memoryQOS, in Koordinator's order.
enum class MemoryQOSClass : std::uint8_t { kLSR, kLS, kBE, kSystem };
inline constexpr std::size_t kMemoryQOSClassCount = 4;

/// "lsrClass", "lsClass", "beClass", "systemClass".
std::string_view memoryQOSClassField(MemoryQOSClass c);
/// A pod's class by its koord QoS (with Kubernetes' default): LSE shares LSR's; none has none.
std::optional<MemoryQOSClass> memoryQOSClassOf(apis::QoSClass qos);
/// The class whose settings a kubelet QoS tier's own cgroup takes (Koordinator's mapping for
/// static tier values): Guaranteed LSR, Burstable LS, BestEffort BE.
MemoryQOSClass memoryQOSClassOfTier(apis::KubeQoS tier);

/// MemoryQOS with every field set, as the reconciler applies it. The defaults are Koordinator's
/// NoneMemoryQOS: no protection, no throttling, no async reclaim.
struct MemoryQOS {
  std::int64_t min_limit_percent = 0;     // memory.min = request * this / 100
  std::int64_t low_limit_percent = 0;     // memory.low = request * this / 100
  std::int64_t throttling_percent = 0;    // memory.high between request and limit; 0: unlimited
  std::int64_t wmark_ratio = 0;           // memory.wmark_ratio
  std::int64_t wmark_scale_permill = 50;  // memory.wmark_scale_factor
  std::int64_t wmark_min_adj = 0;         // memory.wmark_min_adj
  std::int64_t priority_enable = 0;       // memory.use_priority_oom
  std::int64_t priority = 0;              // memory.priority
  std::int64_t oom_kill_group = 0;        // memory.oom.group
  friend bool operator==(const MemoryQOS&, const MemoryQOS&) = default;
};

/// Koordinator's NoneMemoryQOS: what a disabled class and a pod with policy "none" get.
MemoryQOS noneMemoryQOS();
/// Koordinator's DefaultMemoryQOS for the class: watermark reclaim on (ratio 95, scale 20),
/// wmarkMinAdj -25 for LSR and LS, 50 for BE; SYSTEM's is NoneMemoryQOS.
MemoryQOS defaultMemoryQOS(MemoryQOSClass c);

/// One class's memoryQOS after Koordinator's merge with its defaults.
struct MemoryQOSClassConfig {
  bool enable = false;
  MemoryQOS qos;
  friend bool operator==(const MemoryQOSClassConfig&, const MemoryQOSClassConfig&) = default;
};

struct MemoryQOSStrategy {
  std::array<MemoryQOSClassConfig, kMemoryQOSClassCount> classes;
  const MemoryQOSClassConfig& of(MemoryQOSClass c) const {
    return classes[static_cast<std::size_t>(c)];
  }
};

/// Decodes resourceQOSStrategy.{lsrClass,lsClass,beClass,systemClass}.memoryQOS as the koordlet
/// merges it: the class's defaults with the given fields laid over; then, for LSR, LS and BE
/// with enable false or absent, NoneMemoryQOS (SYSTEM keeps its fields, as in Koordinator).
/// Errors name the field: a JSON type other than Go's, a value outside the API's bounds
/// (percentages 0..100, wmarkScalePermill 1..1000, wmarkMinAdj -25..50, priority 0..12,
/// priorityEnable and oomKillGroup 0 or 1).
kube::Expected<MemoryQOSStrategy> decodeMemoryQOSStrategy(
    const boost::json::object& resource_qos_strategy);

/// The pod's memoryQOS: its class's `node` settings, replaced by NoneMemoryQOS for policy
/// "none" (the pod's other fields then ignored) or by the class's DefaultMemoryQOS for "auto",
/// then with the annotation's fields laid over (nullopt: no annotation). Policy "" and "default"
/// keep the node's. Errors name the annotation: malformed JSON, a value past
/// kMaxPodMemoryQOSBytes, a policy Koordinator does not define, and decodeMemoryQOSStrategy's
/// field errors. Unknown fields are ignored and JSON null overrides nothing, as in Go.
kube::Expected<MemoryQOS> podMemoryQOS(const MemoryQOS& node, MemoryQOSClass pod_class,
                                       std::optional<std::string_view> annotation);

}  // namespace koord::roles::koordlet::qosmanager
