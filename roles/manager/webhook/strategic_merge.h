// The part of Kubernetes' strategic merge patch that ClusterColocationProfile patches use on
// Pods: JSON merge plus the Pod's keyed lists (containers by name, volumeMounts by mountPath...).
#pragma once

#include <boost/json/fwd.hpp>

#include "koord/kube/error.h"

namespace koord::manager::webhook {

/// Merges `patch` into `pod` in place (see pod_mutating.h for what is and is not supported).
/// On error `pod` may be partly merged; callers work on a copy.
kube::Expected<void> strategicMergePod(boost::json::object& pod, const boost::json::object& patch);

}  // namespace koord::manager::webhook
