// Reads a PriorityClass's value from the API server, for a DefaultEvictor priorityThreshold given
// by name (resolved once, when the plugin is built, as upstream does).
#pragma once

#include <cstdint>
#include <string_view>

#include "koord/core/expected.h"

namespace koord::kube {
class RestClient;
}

namespace koord::roles::descheduler::defaultevictor {

/// GET scheduling.k8s.io/v1 priorityclasses/<name>: its value. Blocks the calling thread (plugins
/// are built before the passes start, off the client's io threads).
Expected<std::int32_t> priorityClassValue(kube::RestClient& client, std::string_view name);

}  // namespace koord::roles::descheduler::defaultevictor
