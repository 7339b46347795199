// The framework's community order (framework/pod_sort.h), under the plugin's own name.
#include "plugins/removepodsviolatinginterpodantiaffinity/pod_order.h"

#include "framework/pod_sort.h"

namespace koord::roles::descheduler::interpodantiaffinity {

void sortPodsLowToHigh(std::vector<std::shared_ptr<const Pod>>& pods) {
  descheduler::sortPodsLowToHigh(pods);
}

}  // namespace koord::roles::descheduler::interpodantiaffinity
