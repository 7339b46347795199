// Counts per topology pair (topology key, node label value): how many matching pods, or how
// much score weight, a topology domain holds. PreFilter/PreScore fill it once per pod; Filter
// and Score then look a node up by its labels without allocating.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "koord/kube/labels.h"

namespace koord::roles::scheduler::upstream::interpodaffinity {

class TopologyCounts {
 public:
  /// Adds delta to the pair; a pair whose count comes back to exactly 0 is dropped (as
  /// upstream's maps delete it), so empty() means no pair holds a count.
  void add(const std::string& key, const std::string& value, std::int64_t delta);
  /// 0 for a pair not held.
  std::int64_t get(const std::string& key, const std::string& value) const;
  bool empty() const { return keys_.empty(); }

  /// Whether some pair (key, labels[key]) holds a positive count.
  bool anyPositiveOn(const kube::Labels& labels) const;
  /// The sum of the counts of every pair (key, labels[key]).
  std::int64_t sumOn(const kube::Labels& labels) const;

  /// Every pair and its count, sorted (for tests and debugging).
  std::vector<std::tuple<std::string, std::string, std::int64_t>> entries() const;

 private:
  struct KeyCounts {
    std::string key;
    std::unordered_map<std::string, std::int64_t> values;
  };
  const KeyCounts* find(const std::string& key) const;

  // Few distinct topology keys per pod (hostname, zone, region), so a scan beats hashing.
  std::vector<KeyCounts> keys_;
};

}  // namespace koord::roles::scheduler::upstream::interpodaffinity
