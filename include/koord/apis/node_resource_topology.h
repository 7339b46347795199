// The topology.node.k8s.io/v1alpha1 NodeResourceTopology the koordlet writes for its node (NUMA
// zones with their CPU and memory) and the Koordinator CPU annotations it carries, both ways.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::apis {

/// The k8stopologyawareschedwg API Koordinator vendors: cluster-scoped, one object per node,
/// named after it.
inline constexpr std::string_view kTopologyGroup = "topology.node.k8s.io";
inline constexpr std::string_view kTopologyVersion = "v1alpha1";
inline constexpr std::string_view kNodeResourceTopologyResource = "noderesourcetopologies";
inline constexpr std::string_view kNodeResourceTopologyKind = "NodeResourceTopology";

// Annotations on the NodeResourceTopology, written by the koordlet, read by the scheduler.
/// {"detail":[{"id","core","socket","node"}]}: every logical CPU.
inline constexpr std::string_view kAnnotationNodeCPUTopology = "node.koordinator.sh/cpu-topology";
/// [{"socket","node","cpuset"}]: the CPUs LS and Burstable pods share, per NUMA node.
inline constexpr std::string_view kAnnotationNodeCPUSharedPools =
    "node.koordinator.sh/cpu-shared-pools";
/// The same for BE pods, which may also run on LSR pods' CPUs.
inline constexpr std::string_view kAnnotationNodeBECPUSharedPools =
    "node.koordinator.sh/be-cpu-shared-pools";
/// [{"namespace","name","uid","cpuset","managedByKubelet"}]: CPUs the kubelet's static CPU
/// manager gave pods koord does not manage.
inline constexpr std::string_view kAnnotationNodeCPUAllocs = "node.koordinator.sh/pod-cpu-allocs";
/// {"cpuModel","hyperThreadEnabled","turboEnabled","catL3CbmMask","vendorID"}.
inline constexpr std::string_view kAnnotationCPUBasicInfo = "node.koordinator.sh/cpu-basic-info";
/// {"policy","options","reservedCPUs"}: the kubelet's CPU manager.
inline constexpr std::string_view kAnnotationKubeletCPUManagerPolicy =
    "kubelet.koordinator.sh/cpu-manager-policy";
/// The node's {"cpuset","cpusetExclusive"} for system QoS pods, copied from the Node.
inline constexpr std::string_view kAnnotationNodeSystemQOSResource =
    "node.koordinator.sh/system-qos-resource";
/// The object's managed-by label and the value Koordinator's koordlet gives it.
inline constexpr std::string_view kLabelManagedBy = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kNodeResourceTopologyManager = "Koordinator";

/// The kubelet's CPU manager policies and the options the scheduler reads.
inline constexpr std::string_view kKubeletCPUManagerPolicyStatic = "static";
inline constexpr std::string_view kKubeletCPUManagerPolicyNone = "none";
inline constexpr std::string_view kKubeletCPUManagerFullPCPUsOnlyOption = "full-pcpus-only";
inline constexpr std::string_view kKubeletCPUManagerDistributeAcrossNUMAOption =
    "distribute-cpus-across-numa";

/// topologyPolicies values (the kubelet's topology manager policy and scope).
inline constexpr std::string_view kTopologyPolicyNone = "None";
inline constexpr std::string_view kTopologyPolicyBestEffort = "BestEffort";
inline constexpr std::string_view kTopologyPolicyRestricted = "Restricted";
inline constexpr std::string_view kTopologyPolicySingleNUMANodeContainerLevel =
    "SingleNUMANodeContainerLevel";
inline constexpr std::string_view kTopologyPolicySingleNUMANodePodLevel = "SingleNUMANodePodLevel";
inline constexpr std::string_view kTopologyPolicyRestrictedContainerLevel =
    "RestrictedContainerLevel";
inline constexpr std::string_view kTopologyPolicyRestrictedPodLevel = "RestrictedPodLevel";
inline constexpr std::string_view kTopologyPolicyBestEffortContainerLevel =
    "BestEffortContainerLevel";
inline constexpr std::string_view kTopologyPolicyBestEffortPodLevel = "BestEffortPodLevel";

/// The zone type of a NUMA node, and its name ("node-0").
inline constexpr std::string_view kZoneTypeNode = "Node";
std::string nodeZoneName(int numa_node);
/// N of a "node-N" zone name; nullopt for any other name.
std::optional<int> numaNodeOfZone(std::string_view zone_name);

// Bounds on what the decoders read. A node has at most 1024 NUMA nodes (Linux's MAX_NUMNODES)
// and 8192 CPUs (kMaxCpuId + 1 of koord/cgroup/cpu_topology.h); the rest leaves room for zones
// other agents add.
inline constexpr std::size_t kMaxNRTZones = 4096;
inline constexpr std::size_t kMaxNRTZoneResources = 256;
inline constexpr std::size_t kMaxNRTZoneCosts = 4096;
inline constexpr std::size_t kMaxNRTZoneAttributes = 256;
inline constexpr std::size_t kMaxNRTTopologyPolicies = 16;
/// CPUs of the cpu-topology annotation, pools of a shared-pools annotation, pods of
/// pod-cpu-allocs: no node has more CPUs than this.
inline constexpr std::size_t kMaxNRTAnnotationItems = 8192;
/// Options of the CPU manager policy annotation.
inline constexpr std::size_t kMaxKubeletCPUManagerOptions = 64;

/// One resource of a zone; the koordlet writes the same quantity three times.
struct ZoneResourceInfo {
  std::string name;
  kube::Quantity capacity;
  kube::Quantity allocatable;
  kube::Quantity available;

  friend bool operator==(const ZoneResourceInfo&, const ZoneResourceInfo&) = default;
};

struct ZoneCost {
  std::string name;
  std::int64_t value = 0;
  friend bool operator==(const ZoneCost&, const ZoneCost&) = default;
};

struct ZoneAttribute {
  std::string name;
  std::string value;
  friend bool operator==(const ZoneAttribute&, const ZoneAttribute&) = default;
};

struct Zone {
  std::string name{};
  std::string type{};
  std::string parent{};
  std::vector<ZoneCost> costs{};
  std::vector<ZoneAttribute> attributes{};
  std::vector<ZoneResourceInfo> resources{};

  /// The resource named `name`; nullptr when the zone has none.
  const ZoneResourceInfo* resource(std::string_view name) const;

  friend bool operator==(const Zone&, const Zone&) = default;
};

struct NodeResourceTopology {
  std::string name;
  std::string uid;
  std::string resource_version;
  kube::Labels labels;
  kube::Labels annotations;
  std::chrono::system_clock::time_point creation_timestamp{};
  bool terminating = false;  // metadata.deletionTimestamp set

  std::vector<std::string> topology_policies;
  std::vector<Zone> zones;

  /// The zone named `name`; nullptr when there is none.
  const Zone* zone(std::string_view name) const;
};

/// Projects a NodeResourceTopology. Unknown fields are ignored and JSON null reads as absent;
/// a member of the wrong type, a bad quantity, or a list over its bound (kMaxNRT*) is an error
/// naming its path ("zones[1].resources[0].allocatable: ...").
kube::Expected<NodeResourceTopology> decodeNodeResourceTopology(const boost::json::value& v);

/// The object as JSON with apiVersion and kind: metadata (name; uid, resourceVersion, labels
/// and annotations when set), topologyPolicies and zones (both always present, as the CRD
/// requires them), each zone's parent, costs, attributes and resources only when set, and
/// quantities in their canonical form.
boost::json::value encodeNodeResourceTopology(const NodeResourceTopology& nrt);

// Koordinator's annotations (apis/extension/numa_aware.go, cpu_normalization.go). The parsers
// read them as Go's json.Unmarshal reads them into Koordinator's types: an absent annotation and
// JSON null give the empty value, unknown members are ignored, members left out keep their zero
// values. Errors, which name the annotation and the member: text that is not JSON or longer than
// kMaxAnnotationValueBytes, a member of the wrong type, a number that is not an int32, a list
// over kMaxNRTAnnotationItems, a string (cpuset, ...) longer than a CPU list may be. CPU lists
// are kept as written; the reader parses them (koord/cgroup/cpu_topology.h parseCpuList).

/// One logical CPU. Stricter than Go: every id is non-negative and `id` at most 8191, since
/// readers index by them.
struct CPUInfo {
  std::int32_t id = 0;
  std::int32_t core = 0;
  std::int32_t socket = 0;
  std::int32_t node = 0;
  friend bool operator==(const CPUInfo&, const CPUInfo&) = default;
};

struct CPUTopology {
  std::vector<CPUInfo> detail;
  friend bool operator==(const CPUTopology&, const CPUTopology&) = default;
};

struct CPUSharedPool {
  std::int32_t socket = 0;
  std::int32_t node = 0;
  std::string cpuset{};
  friend bool operator==(const CPUSharedPool&, const CPUSharedPool&) = default;
};

struct PodCPUAlloc {
  std::string namespace_{};
  std::string name{};
  std::string uid{};
  std::string cpuset{};
  bool managed_by_kubelet = false;
  friend bool operator==(const PodCPUAlloc&, const PodCPUAlloc&) = default;
};

struct KubeletCPUManagerPolicy {
  std::string policy{};
  std::map<std::string, std::string, std::less<>> options{};
  std::string reserved_cpus{};
  friend bool operator==(const KubeletCPUManagerPolicy&, const KubeletCPUManagerPolicy&) = default;
};

struct CPUBasicInfo {
  std::string cpu_model{};
  bool hyper_thread_enabled = false;
  bool turbo_enabled = false;
  std::string cat_l3_cbm_mask{};
  std::string vendor_id{};
  friend bool operator==(const CPUBasicInfo&, const CPUBasicInfo&) = default;
};

/// node.koordinator.sh/cpu-topology.
kube::Expected<CPUTopology> parseCPUTopologyAnnotation(const kube::Labels& annotations);
/// node.koordinator.sh/cpu-shared-pools, or with `key` kAnnotationNodeBECPUSharedPools the BE
/// pools.
kube::Expected<std::vector<CPUSharedPool>> parseCPUSharedPools(
    const kube::Labels& annotations, std::string_view key = kAnnotationNodeCPUSharedPools);
/// node.koordinator.sh/pod-cpu-allocs.
kube::Expected<std::vector<PodCPUAlloc>> parsePodCPUAllocs(const kube::Labels& annotations);
/// kubelet.koordinator.sh/cpu-manager-policy; at most kMaxKubeletCPUManagerOptions options.
kube::Expected<KubeletCPUManagerPolicy> parseKubeletCPUManagerPolicy(
    const kube::Labels& annotations);
/// node.koordinator.sh/cpu-basic-info; nullopt when absent (Koordinator's GetCPUBasicInfo).
kube::Expected<std::optional<CPUBasicInfo>> parseCPUBasicInfo(const kube::Labels& annotations);

// The annotation values as Koordinator's koordlet writes them (Go's json.Marshal of its types:
// members in declaration order, omitempty members left out, a nil list as null).
/// {"detail":[...]}, or {} without CPUs.
std::string formatCPUTopology(const CPUTopology& topology);
/// [...], or null without pools.
std::string formatCPUSharedPools(std::span<const CPUSharedPool> pools);
/// [...], or null without pods.
std::string formatPodCPUAllocs(std::span<const PodCPUAlloc> allocs);
/// {"policy","options","reservedCPUs"} without the empty ones; options sorted by name.
std::string formatKubeletCPUManagerPolicy(const KubeletCPUManagerPolicy& policy);
std::string formatCPUBasicInfo(const CPUBasicInfo& info);

}  // namespace koord::apis
