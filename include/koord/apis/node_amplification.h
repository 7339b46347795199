// Koordinator's node resource amplification: the ratio by which a node's allocatable was
// amplified per resource (node.koordinator.sh/resource-amplification-ratio), as schedulers read it.
#pragma once

#include <optional>
#include <string_view>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::apis {

inline constexpr std::string_view kAnnotationNodeResourceAmplificationRatio =
    "node.koordinator.sh/resource-amplification-ratio";
/// The node's allocatable before amplification, as the manager keeps it.
inline constexpr std::string_view kAnnotationNodeRawAllocatable =
    "node.koordinator.sh/raw-allocatable";

/// Koordinator's GetNodeResourceAmplificationRatio: the ratio of `resource` in the annotation
/// (a JSON object of resource name -> number); nullopt when the annotation or the resource is
/// absent. An error naming the annotation when it is too long, not JSON, not an object, or the
/// resource's value is not a finite number (Go's json.Unmarshal refuses those too).
kube::Expected<std::optional<double>> nodeAmplificationRatio(const kube::Labels& annotations,
                                                             std::string_view resource);

}  // namespace koord::apis
