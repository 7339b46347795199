// RemovePodsHavingTooManyRestarts: evicts pods whose containers restarted too often on their node
// (a bad volume, a node-specific setting), as the community descheduler's plugin of that name.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "plugins/removepodshavingtoomanyrestarts/args.h"

namespace koord::roles::descheduler::toomanyrestarts {

inline constexpr std::string_view kTooManyRestartsName = "RemovePodsHavingTooManyRestarts";

/// The restarts of the pod's containers, its init containers' too when asked.
std::int32_t totalRestarts(const Pod& pod, bool including_init_containers);

/// `pod` is in one of `states`: its phase, or the waiting reason of one of its (regular)
/// containers. Empty `states` lets every pod in.
bool inStates(const Pod& pod, const std::vector<std::string>& states);

class RemovePodsHavingTooManyRestarts final : public DeschedulePlugin {
 public:
  /// `selection`: podfilter::PodFilter::make(args->common).
  RemovePodsHavingTooManyRestarts(std::shared_ptr<const RemovePodsHavingTooManyRestartsArgs> args,
                                  FrameworkHandle& handle, podfilter::PodFilter selection);

  std::string_view name() const override { return kTooManyRestartsName; }
  /// Node by node, in the order given: every pod over the threshold that the filters let go, until
  /// the node's cap (next node) or the total cap (done).
  Expected<void> deschedule(const std::vector<const Node*>& nodes) override;

 private:
  std::shared_ptr<const RemovePodsHavingTooManyRestartsArgs> args_;
  FrameworkHandle& handle_;
  podfilter::PodFilter selection_;
};

}  // namespace koord::roles::descheduler::toomanyrestarts
