// The node.koordinator.sh/extended-resource-spec pod annotation: each container's batch
// requests and limits, written by the manager's webhook and read by the koordlet's runtime hooks.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "koord/kube/error.h"
#include "koord/kube/quantity.h"

namespace koord::apis {

struct ExtendedContainerSpec {
  kube::ResourceList requests;
  kube::ResourceList limits;
  friend bool operator==(const ExtendedContainerSpec&, const ExtendedContainerSpec&) = default;
};

/// By container name.
using ExtendedResourceSpec = std::map<std::string, ExtendedContainerSpec, std::less<>>;

/// The annotation as Go's json.Unmarshal reads it into Koordinator's ExtendedResourceSpec: null
/// is empty, a container's null entry has no resources, other keys are ignored. Errors name the
/// field; text longer than an annotation may be (kMaxAnnotationValueBytes) is refused unread.
kube::Expected<ExtendedResourceSpec> parseExtendedResourceSpec(std::string_view text);

}  // namespace koord::apis
