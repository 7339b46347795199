// Koordinator's core vocabulary (apis/extension): QoS classes, priority classes and bands, the
// batch/mid extended resources and the label/annotation keys every role reads and writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::apis {

// Pod labels and annotations.
inline constexpr std::string_view kLabelPodQoS = "koordinator.sh/qosClass";
inline constexpr std::string_view kLabelPodPriority = "koordinator.sh/priority";
inline constexpr std::string_view kLabelPodPriorityClass = "koordinator.sh/priority-class";
inline constexpr std::string_view kAnnotationExtendedResourceSpec =
    "node.koordinator.sh/extended-resource-spec";
inline constexpr std::string_view kAnnotationResourceStatus =
    "scheduling.koordinator.sh/resource-status";
inline constexpr std::string_view kAnnotationDeviceAllocated =
    "scheduling.koordinator.sh/device-allocated";
inline constexpr std::string_view kAnnotationReservationAllocated =
    "scheduling.koordinator.sh/reservation-allocated";
/// Written by koord-scheduler as it binds a pod, and trusted by the koordlet and the device
/// plugins: a pod that brought its own could take another pod's CPUs or devices.
inline constexpr std::string_view kSchedulerOwnedPodAnnotations[] = {
    kAnnotationResourceStatus, kAnnotationDeviceAllocated, kAnnotationReservationAllocated};

// Node labels and annotations.
inline constexpr std::string_view kAnnotationNodeReservation = "node.koordinator.sh/reservation";
inline constexpr std::string_view kAnnotationNodeColocationStrategy =
    "node.koordinator.sh/colocation-strategy";
inline constexpr std::string_view kLabelCPUReclaimRatio = "node.koordinator.sh/cpu-reclaim-ratio";
inline constexpr std::string_view kLabelMemoryReclaimRatio =
    "node.koordinator.sh/memory-reclaim-ratio";
inline constexpr std::string_view kAnnotationCPUNormalizationRatio =
    "node.koordinator.sh/cpu-normalization-ratio";

// Extended resources: batch-cpu is integer milli-cores, batch-memory bytes.
inline constexpr std::string_view kBatchCPU = "kubernetes.io/batch-cpu";
inline constexpr std::string_view kBatchMemory = "kubernetes.io/batch-memory";
inline constexpr std::string_view kMidCPU = "kubernetes.io/mid-cpu";
inline constexpr std::string_view kMidMemory = "kubernetes.io/mid-memory";

// The koord scheduler's name, as ClusterColocationProfiles usually set it.
inline constexpr std::string_view kKoordSchedulerName = "koord-scheduler";

enum class QoSClass : std::uint8_t { kNone, kSystem, kLSE, kLSR, kLS, kBE };
enum class PriorityClass : std::uint8_t { kNone, kProd, kMid, kBatch, kFree };
/// Kubernetes' own pod QoS (status.qosClass), from which an unlabelled pod's koord QoS follows.
enum class KubeQoS : std::uint8_t { kGuaranteed, kBurstable, kBestEffort };

/// "SYSTEM", "LSE", "LSR", "LS", "BE"; anything else (case matters) is kNone.
QoSClass qosClassByName(std::string_view name);
/// The label value; "" for kNone.
std::string_view qosClassName(QoSClass qos);

/// "koord-prod", "koord-mid", "koord-batch", "koord-free"; anything else is kNone.
PriorityClass priorityClassByName(std::string_view name);
/// The PriorityClass object's name; "" for kNone.
std::string_view priorityClassName(PriorityClass priority);

/// A priority class's band of spec.priority values and the value used when only the class is
/// known (koord-prod 9000-9999 default 9500, mid 7000-7999/7500, batch 5000-5999/5500,
/// free 3000-3999/3500).
struct PriorityBand {
  std::int32_t min = 0;
  std::int32_t max = 0;
  std::int32_t default_value = 0;
};
/// nullopt for kNone.
std::optional<PriorityBand> priorityBand(PriorityClass priority);
/// The class whose band holds `priority`; kNone outside every band.
PriorityClass priorityClassByValue(std::int32_t priority);

/// The koord QoS a pod declares: the koordinator.sh/qosClass label, else kNone.
QoSClass podQoSClassRaw(const kube::Labels& labels);
/// The priority class a pod declares: the koordinator.sh/priority-class label when present
/// (an unknown value is kNone), else the band of spec.priority, else kNone.
PriorityClass podPriorityClassRaw(const kube::Labels& labels, std::optional<std::int32_t> priority);

/// Guaranteed -> LSR, Burstable -> LS, BestEffort -> BE.
QoSClass qosClassForKubeQoS(KubeQoS kube_qos);
/// The QoS label, else the one that follows from the Kubernetes QoS.
QoSClass podQoSClassWithDefault(const kube::Labels& labels, KubeQoS kube_qos);
/// SYSTEM/LSE/LSR/LS -> koord-prod, BE -> koord-batch, none -> kNone.
PriorityClass priorityClassForQoS(QoSClass qos);
/// The declared class, else the one that follows from the QoS (label or Kubernetes QoS).
PriorityClass podPriorityClassWithDefault(const kube::Labels& labels,
                                          std::optional<std::int32_t> priority, KubeQoS kube_qos);

/// One container's requests and limits, as Kubernetes' QoS computation reads them.
struct ContainerResources {
  kube::ResourceList requests;
  kube::ResourceList limits;
};

/// Kubernetes' GetPodQOS (1.20) over containers and init containers: BestEffort when no
/// container requests or limits cpu or memory; Guaranteed when every container limits both cpu
/// and memory and the summed requests equal the summed limits; Burstable otherwise. Requests are
/// read as given: the API server defaults missing requests to the limits before any webhook or
/// informer sees the pod, so a limits-only container reaches here only in hand-made input.
KubeQoS computeKubeQoS(const std::vector<ContainerResources>& containers);
/// status.qosClass ("Guaranteed", "Burstable", "BestEffort") when set and known, else computed.
KubeQoS kubeQoSFromStatus(std::string_view status_qos_class,
                          const std::vector<ContainerResources>& containers);

/// The extended resource that replaces cpu or memory for pods of `priority`: batch-* for
/// koord-batch, mid-* for koord-mid, "" otherwise (and for any other resource name).
std::string_view extendedResourceFor(PriorityClass priority, std::string_view resource);

}  // namespace koord::apis
