// Koordinator's ScoringStrategy in plugin args (NodeNUMAResource, DeviceShare): a type and
// weighted resources, decoded strictly with Koordinator's validation.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"

namespace koord::roles::scheduler::config {

/// The plugins have scorers for these two only (Koordinator's fail to build with
/// BalancedAllocation), so decoding refuses any other.
enum class KoordScoringType : std::uint8_t { kLeastAllocated, kMostAllocated };

struct KoordResourceWeight {
  std::string name;
  std::int64_t weight = 1;

  friend bool operator==(const KoordResourceWeight&, const KoordResourceWeight&) = default;
};

struct KoordScoringStrategy {
  KoordScoringType type = KoordScoringType::kLeastAllocated;
  std::vector<KoordResourceWeight> resources;

  friend bool operator==(const KoordScoringStrategy&, const KoordScoringStrategy&) = default;
};

std::string_view toString(KoordScoringType type);

/// The member `name` of `args`; `defaults` when absent or null (Koordinator defaults the whole
/// strategy, not its parts). Unknown fields, an unknown type and weights outside (0, 100] are
/// errors naming the path ("scoringStrategy.resources[1].weight: ..."); an empty type reads as
/// LeastAllocated.
kube::Expected<KoordScoringStrategy> decodeKoordScoringStrategy(
    const boost::json::object& args, std::string_view name, const KoordScoringStrategy& defaults);

}  // namespace koord::roles::scheduler::config
