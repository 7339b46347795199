// The admission paths this replica serves (/mutate-pod, the ElasticQuota paths and the
// /validate-* paths), chosen by feature gate and bound to the informers' stores.
#pragma once

#include <map>
#include <string>

#include "webhookserver/webhook_server.h"

namespace koord {
class FeatureGate;
}

namespace koord::roles::manager {

struct ManagerInformers;
struct ManagerOptions;

/// Path -> handler; empty when every admission gate is off.
std::map<std::string, AdmissionHandler> admissionHandlers(ManagerInformers& informers,
                                                          const FeatureGate& gates,
                                                          const ManagerOptions& options);

}  // namespace koord::roles::manager
