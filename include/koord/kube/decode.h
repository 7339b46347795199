// Projection of Kubernetes API JSON (Boost.JSON values) into the kube layer's typed structs:
// JSON in once at the informer, compact structs out, errors that name the bad field.
#pragma once

#include <boost/json/fwd.hpp>

#include <span>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"
#include "koord/kube/scheduling_match.h"

namespace koord::kube {

// Every decoder takes the path of `v` inside its object, used only in error messages
// ("spec.tolerations[2].operator: ..."). JSON null reads as Go's zero value (empty list, empty
// map, zero quantity), as encoding/json would; unknown fields are ignored.

/// A string -> string map: metadata.labels, metadata.annotations, spec.nodeSelector.
Expected<Labels> decodeStringMap(const boost::json::value& v,
                                 std::string_view path = "metadata.labels");
/// Only the entries of a string -> string map whose keys are in `keys`, the others left unread:
/// a projection that needs two annotations does not copy the kilobytes of
/// last-applied-configuration beside them. Errors as decodeStringMap's, for those entries.
Expected<Labels> decodeStringMapEntries(const boost::json::value& v,
                                        std::span<const std::string_view> keys,
                                        std::string_view path = "metadata.annotations");
/// A string or a JSON number, parsed as Quantity.
Expected<Quantity> decodeQuantity(const boost::json::value& v, std::string_view path);
/// resources.requests, resources.limits, status.capacity, status.allocatable.
Expected<ResourceList> decodeResourceList(const boost::json::value& v, std::string_view path);
/// A metav1.LabelSelector object. A null or absent selector is not an empty one (it matches
/// nothing, see toSelector): check for it before calling, which refuses null.
Expected<LabelSelector> decodeLabelSelector(const boost::json::value& v,
                                            std::string_view path = "spec.selector");
Expected<NodeSelector> decodeNodeSelector(const boost::json::value& v, std::string_view path);
/// pod.spec.affinity.nodeAffinity.
Expected<NodeAffinity> decodeNodeAffinity(const boost::json::value& v,
                                          std::string_view path = "spec.affinity.nodeAffinity");
/// node.spec.taints.
Expected<std::vector<Taint>> decodeTaints(const boost::json::value& v,
                                          std::string_view path = "spec.taints");
/// pod.spec.tolerations.
Expected<std::vector<Toleration>> decodeTolerations(const boost::json::value& v,
                                                    std::string_view path = "spec.tolerations");

}  // namespace koord::kube
