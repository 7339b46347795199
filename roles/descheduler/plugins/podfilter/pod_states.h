// The states filter of the community descheduler's PodLifeTime and RemovePodsHavingTooManyRestarts
// args: a pod's phase or a regular container's waiting reason, as upstream's podutil matches it.
#pragma once

#include <string>
#include <vector>

#include "framework/types.h"

namespace koord::roles::descheduler::podfilter {

/// `pod` is in one of `states`: its phase, or the waiting reason of one of its (regular)
/// containers. Empty `states` lets every pod in.
bool inStates(const Pod& pod, const std::vector<std::string>& states);

}  // namespace koord::roles::descheduler::podfilter
