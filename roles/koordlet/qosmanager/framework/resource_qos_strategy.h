// The shared shape of a NodeSLO's resourceQOSStrategy as the koordlet's strategies and hooks
// decode it: a per-class section (cpuQOS, resctrlQOS, ...), policies.cpuPolicy, bounded integers.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::roles::koordlet::qosmanager {

inline constexpr std::string_view kResourceQOSStrategyPath = "resourceQOSStrategy";

/// resourceQOSStrategy.<cls>.<section>: `object` is null when the class or its section is absent;
/// `path` names the section in errors either way.
struct ResourceQOSSection {
  const boost::json::object* object = nullptr;
  std::string path;
};
kube::Expected<ResourceQOSSection> resourceQOSSection(const boost::json::object& strategy,
                                                      std::string_view cls,
                                                      std::string_view section);

/// policies.cpuPolicy; empty when policies or the field is absent.
kube::Expected<std::string> resourceQOSCpuPolicy(const boost::json::object& strategy);

/// An optional integer field (Go's *int64) refused outside [min, max], the bound an API validate
/// tag sets; nullopt when absent.
kube::Expected<std::optional<std::int64_t>> boundedIntField(const boost::json::object& o,
                                                            std::string_view name,
                                                            std::string_view path, std::int64_t min,
                                                            std::int64_t max);

}  // namespace koord::roles::koordlet::qosmanager
