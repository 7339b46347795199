// The scheduler's resource vector: CPU in millicores, memory and ephemeral storage in bytes, the
// pod count, and scalar (extended, hugepages, batch-*) resources by name, as kube-scheduler's
// framework.Resource keeps them. Plain integers: filters and scores add and compare these on
// every node of every cycle.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "koord/kube/quantity.h"

namespace koord::roles::scheduler {

inline constexpr std::string_view kResourceCPU = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourceEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kResourcePods = "pods";

/// kube-scheduler's defaults for a container that requests nothing, used only for scoring
/// (non-zero requests): 100 millicores and 200 MiB.
inline constexpr std::int64_t kDefaultMilliCPURequest = 100;
inline constexpr std::int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;

struct Resource {
  std::int64_t milli_cpu = 0;
  std::int64_t memory = 0;
  std::int64_t ephemeral_storage = 0;
  std::int64_t allowed_pod_number = 0;
  /// Every other resource (Quantity::value(), so batch-cpu "1000" is 1000), sorted by name, no
  /// zero entries; a pod names a handful at most.
  std::vector<std::pair<std::string, std::int64_t>> scalar;

  /// cpu as millicores, memory/ephemeral-storage/pods/scalars by value(); names that are not
  /// resources a pod or node can carry (a bad name) are the caller's to refuse before this.
  static Resource fromList(const kube::ResourceList& list);

  std::int64_t scalarValue(std::string_view name) const;
  void setScalar(std::string_view name, std::int64_t value);
  void addScalar(std::string_view name, std::int64_t value);
  /// The value for any resource name (cpu in millicores).
  std::int64_t get(std::string_view name) const;

  void add(const Resource& other);
  /// Saturates nothing: a node's requested may go below zero only through a bookkeeping bug,
  /// which the cache reports.
  void subtract(const Resource& other);
  /// max() per resource (init containers against the containers' sum).
  void setMax(const Resource& other);

  friend bool operator==(const Resource&, const Resource&) = default;
};

}  // namespace koord::roles::scheduler
