// PodLifeTime: evicts pods that have lived longer than maxPodLifeTimeSeconds, oldest first, as the
// community descheduler's plugin of that name.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "plugins/podlifetime/args.h"

namespace koord::roles::descheduler::podlifetime {

inline constexpr std::string_view kPodLifeTimeName = "PodLifeTime";

/// Whole seconds from the pod's creation to `now` (0 when created "after" now); none without a
/// creationTimestamp.
std::optional<std::uint64_t> ageSeconds(const Pod& pod, TimePoint now);

/// `pod` is in one of `states`: its phase, or the waiting reason of one of its (regular)
/// containers. Empty `states` lets every pod in.
bool inStates(const Pod& pod, const std::vector<std::string>& states);

class PodLifeTime final : public DeschedulePlugin {
 public:
  /// `selection`: podfilter::PodFilter::make(args->common).
  PodLifeTime(std::shared_ptr<const PodLifeTimeArgs> args, FrameworkHandle& handle,
              podfilter::PodFilter selection);

  std::string_view name() const override { return kPodLifeTimeName; }
  /// The pods of every given node older than the limit, oldest first across nodes (so caps and
  /// budgets spend themselves on the oldest), skipping nodes at their cap, until the total cap.
  Expected<void> deschedule(const std::vector<const Node*>& nodes) override;

 private:
  std::shared_ptr<const PodLifeTimeArgs> args_;
  FrameworkHandle& handle_;
  podfilter::PodFilter selection_;
};

}  // namespace koord::roles::descheduler::podlifetime
