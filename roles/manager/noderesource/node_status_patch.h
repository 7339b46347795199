// The request body that writes a node's batch resources: a JSON merge patch for the nodes/status
// subresource, touching only kubernetes.io/batch-cpu and batch-memory.
#pragma once

#include <boost/json/value.hpp>

#include "noderesource/node_view.h"

namespace koord::roles::manager::noderesource {

/// {"status":{"capacity":{"kubernetes.io/batch-cpu":"25000","kubernetes.io/batch-memory":
/// "33G"},"allocatable":{...the same...}}}; a nullopt value becomes null, which removes the key
/// (what Koordinator's full status update does when it degrades or resets). Send with
/// kube::PatchType::kMergePatch to nodes/<name>/status: a merge patch leaves every other
/// capacity and allocatable entry, which the kubelet owns, as it is.
boost::json::value buildNodeStatusPatch(const BatchValues& desired);

}  // namespace koord::roles::manager::noderesource
