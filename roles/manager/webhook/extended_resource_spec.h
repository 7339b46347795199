// The node.koordinator.sh/extended-resource-spec pod annotation: each container's batch-cpu and
// batch-memory requests and limits, for the runtime hooks that never see the pod spec.
#pragma once

#include <boost/json/fwd.hpp>

#include <string>

#include "koord/kube/error.h"

namespace koord::manager::webhook {

/// The annotation's value for `pod` as Koordinator writes it:
/// {"containers":{"<name>":{"limits":{...},"requests":{...}}}}, containers and resources sorted,
/// quantities canonical, empty parts left out ("{}" when no container has batch resources).
kube::Expected<std::string> extendedResourceSpecFor(const boost::json::object& pod);

/// Sets the annotation unless the pod already carries an equal one (equal quantities, any
/// spelling); a pod without batch resources and without the annotation is left alone. An
/// annotation that does not parse is an error, as in Koordinator.
kube::Expected<void> updateExtendedResourceSpec(boost::json::object& pod);

}  // namespace koord::manager::webhook
