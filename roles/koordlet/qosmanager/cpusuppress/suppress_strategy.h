// The part of a NodeSLO's resourceUsedThresholdWithBE that BE CPU suppression reads: whether it
// runs, how much of the node LS pods are protected up to, and which cgroup knob holds BE back.
#pragma once

#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::roles::koordlet::qosmanager {

/// cpuSuppressPolicy: "cpuset" (the default) shrinks the besteffort cgroup's cpuset.cpus,
/// "cfsQuota" its CFS quota.
enum class CPUSuppressPolicy : std::uint8_t { kCPUSet, kCFSQuota };
std::string_view cpuSuppressPolicyName(CPUSuppressPolicy p);

/// Koordinator's DefaultResourceThresholdStrategy for these fields.
struct CPUSuppressStrategy {
  bool enable = false;
  std::int64_t threshold_percent = 65;
  /// cpuSuppressMinPercent: unset means no floor.
  std::optional<std::int64_t> min_percent;
  CPUSuppressPolicy policy = CPUSuppressPolicy::kCPUSet;
};

/// Reads enable, cpuSuppressThresholdPercent, cpuSuppressMinPercent and cpuSuppressPolicy; an
/// absent or null field keeps its default and other fields are ignored. Errors (naming the
/// field) for a JSON type other than Go's (a bool; integers, not 65.5; a string) and for a
/// percent outside 0..100. A policy other than "cfsQuota" is kCPUSet, because that is all the
/// koordlet tests for and the API leaves the string open.
kube::Expected<CPUSuppressStrategy> decodeCPUSuppressStrategy(
    const boost::json::object& resource_used_threshold_with_be);

}  // namespace koord::roles::koordlet::qosmanager
