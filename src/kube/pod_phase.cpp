#include "koord/kube/pod_phase.h"

#include <fmt/format.h>

namespace koord::kube {

Error unsupportedPodPhase(std::string_view name) {
  return invalidArgument(
      fmt::format("status.phase: unsupported value {:?}: supported values: \"Failed\", "
                  "\"Pending\", \"Running\", \"Succeeded\", \"Unknown\"",
                  name));
}

}  // namespace koord::kube
