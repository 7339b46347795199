// CFS quotas down a cgroup tree in the order cgroup v1 accepts. v1 refuses (EINVAL) a parent
// whose quota is below any child's, per period; v2 accepts any order and clamps.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "koord/core/expected.h"

#include <cstddef>

namespace koord::cgroup {

class ResourceExecutor;

/// cpu.cfs_quota_us for "no limit".
inline constexpr std::int64_t kCfsQuotaUnlimited = -1;

/// `quota` over `period` as a quota over `to_period` (-1 stays -1); what the kernel compares.
std::int64_t rescaleQuota(std::int64_t quota, std::int64_t period, std::int64_t to_period);

/// Whether `a` limits at least as tightly as `b` (-1 is no limit).
bool quotaAtMost(std::int64_t a, std::int64_t b);

/// `quota` kept within `ceiling`. An unlimited quota stays unlimited: under a limited parent the
/// kernel reads it as the parent's limit, and it is what the owner asked for once the limit goes.
std::int64_t quotaWithin(std::int64_t quota, std::int64_t ceiling);

struct QuotaWriteError {
  std::string dir;
  Error error;
};

struct QuotaWriteCounts {
  std::size_t written = 0;
  std::size_t unchanged = 0;
  std::vector<QuotaWriteError> errors;
};

/// Writes a cgroup's own quota and its children's in one leveled pass: the values that tighten
/// go in children first, then the ones that loosen, parents first, so no write finds a child
/// above its parent at any moment. `writes` pairs a directory with its new quota; a directory's
/// children are the entries below it. Errors name the file; the other writes still go in.
QuotaWriteCounts writeQuotasLeveled(
    ResourceExecutor& cgroups, const std::vector<std::pair<std::string, std::int64_t>>& writes);

/// The besteffort tier's quota with every pod and container cgroup under it kept within it. A
/// child above a new, lower tier quota is lowered first (what it had is remembered); when the tier
/// is raised or unlimited again, the children come back to what they had, within the new quota.
/// Another writer (the BatchResource reconciler) may change a child meanwhile: it caps its values
/// by the parent's quota too (capToParentQuota), so both converge on the same value.
class CfsQuotaTree {
 public:
  CfsQuotaTree(ResourceExecutor& cgroups, std::string tier_dir)
      : cgroups_(cgroups), tier_(std::move(tier_dir)) {}

  /// The tier at `quota` (over the tier's period, already written); an error for the tier's own
  /// write (the children's errors are returned beside it and do not stop the rest).
  Expected<void> apply(std::int64_t quota, std::vector<QuotaWriteError>* child_errors = nullptr);

  /// Children lowered and not yet given back what they had (for tests and logs).
  std::size_t lowered() const { return lowered_.size(); }

 private:
  ResourceExecutor& cgroups_;
  std::string tier_;
  struct Lowered {
    std::int64_t original;  // what the child had before the tier's quota went below it
    std::int64_t written;   // what this wrote; anything else means another writer took over
  };
  std::map<std::string, Lowered> lowered_;
};

/// `quota` for the cgroup `dir`, lowered to its parent's quota when the parent has a tighter one
/// (rescaled to `dir`'s period): what the kernel would refuse is never asked for. nullopt when
/// the parent's quota cannot be read (no such cgroup yet): the caller writes what it has.
std::optional<std::int64_t> capToParentQuota(const ResourceExecutor& cgroups, std::string_view dir,
                                             std::int64_t quota);

}  // namespace koord::cgroup
