// What the manager's main derives from its flags and environment before it runs: the lease, the
// slo-controller-config feed, and the webhook runtime that serves admission.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "koord/app/leader_gate.h"
#include "koord/core/metrics.h"
#include "koord/kube/rest_client.h"
#include "manager_informers.h"
#include "manager_options.h"
#include "webhookserver/webhook_server.h"

namespace boost::asio {
class io_context;
}

namespace koord::roles::manager {

class WebhookRuntime;

/// Reads --webhook-client-ca-file now, so that a fault that needs the operator is an exit at
/// startup; throws app::ConfigError naming the file.
void checkWebhookClientCaFile(const ManagerOptions& o);

/// Koordinator's lock, "koordinator-manager" in --leader-election-namespace, at client-go's
/// default timings.
app::LeaderGateOptions leaderGateOptions(const ManagerOptions& o);

/// Keeps `slo_config` on the informer's slo-controller-config ConfigMap.
void feedSloConfig(ManagerInformers& informers, SloConfigSource& slo_config);

/// The webhook server for `handlers`, its certificates and configurations; nullptr when every
/// webhook gate is off (handlers empty).
std::unique_ptr<WebhookRuntime> makeWebhookRuntime(kube::RestClient& client,
                                                   boost::asio::io_context& io,
                                                   std::map<std::string, AdmissionHandler> handlers,
                                                   const ManagerOptions& o,
                                                   metrics::Registry& metrics);

}  // namespace koord::roles::manager
