// The controllers a node asks the scheduler to keep their pods away from: its
// scheduler.alpha.kubernetes.io/preferAvoidPods annotation, read once when the Node is decoded
// so that NodePreferAvoidPods compares two strings per node instead of parsing JSON per cycle.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace koord::roles::scheduler {

inline constexpr std::string_view kAnnotationPreferAvoidPods =
    "scheduler.alpha.kubernetes.io/preferAvoidPods";

/// Bounds the entries read from one annotation (the API server bounds only the total size).
inline constexpr std::size_t kMaxAvoidedControllers = 1024;

/// One podSignature.podController of the annotation.
struct AvoidedController {
  std::string kind;
  std::string uid;
  bool operator==(const AvoidedController&) const = default;
};

/// The controllers the annotation's value lists. A value that is not the AvoidPods JSON avoids
/// nothing, as upstream then scores the node as free; entries past the bound are left out.
std::vector<AvoidedController> parsePreferAvoidPods(std::string_view annotation);

}  // namespace koord::roles::scheduler
