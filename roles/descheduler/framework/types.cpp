#include "framework/types.h"

namespace koord::roles::descheduler {

ResourceAmounts amountsOf(const kube::ResourceList& list) {
  ResourceAmounts out;
  for (const auto& [name, q] : list)
    out[name] = name == "cpu" ? q.milliValue() : q.value();
  return out;
}

}  // namespace koord::roles::descheduler
