// The caps every eviction of a descheduling pass is held to (maxNoOfPodsToEvictPerNode,
// PerNamespace, Total): a slot is taken before the eviction and given back if it fails.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace koord::roles::descheduler {

class EvictionLimiter {
 public:
  EvictionLimiter(std::optional<std::uint32_t> per_node, std::optional<std::uint32_t> per_namespace,
                  std::optional<std::uint32_t> total);

  /// Takes one slot for an eviction on `node` in `ns` when no cap is reached; the check and the
  /// count are one step, so concurrent callers never pass a cap together (Koordinator checks
  /// and counts in two steps). False names the cap in `why` when given.
  bool tryReserve(std::string_view node, std::string_view ns, std::string* why = nullptr);
  /// Gives back a slot tryReserve took, for an eviction that did not happen.
  void release(std::string_view node, std::string_view ns);
  /// A new pass starts from zero.
  void reset();

  bool nodeLimitReached(std::string_view node) const;
  bool namespaceLimitReached(std::string_view ns) const;
  bool totalLimitReached() const;
  std::uint32_t total() const;
  std::uint32_t onNode(std::string_view node) const;

 private:
  const std::optional<std::uint32_t> per_node_, per_namespace_, total_cap_;
  mutable std::mutex mu_;
  std::uint32_t total_ = 0;
  std::map<std::string, std::uint32_t, std::less<>> by_node_, by_namespace_;
};

}  // namespace koord::roles::descheduler
