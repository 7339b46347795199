#include "manager_startup.h"

#include <utility>

#include <fmt/format.h>

#include "koord/app/role_app.h"
#include "koord/core/log.h"
#include "koord/http/file_util.h"
#include "webhookserver/webhook_runtime.h"

namespace koord::roles::manager {

// Checked here, not at the webhook server's first start: that one would only log and retry,
// leaving the replica unready for a fault that needs the operator.
void checkWebhookClientCaFile(const ManagerOptions& o) {
  if (o.webhook_client_ca_file.empty())
    return;
  if (auto pem = http::readFile(o.webhook_client_ca_file); !pem) {
    throw app::ConfigError(fmt::format("--webhook-client-ca-file {}: {}", o.webhook_client_ca_file,
                                       pem.error().message()));
  }
}

app::LeaderGateOptions leaderGateOptions(const ManagerOptions& o) {
  app::LeaderGateOptions gate;
  gate.role = "manager";
  gate.leader_elect = o.enable_leader_election;
  gate.election.lease_namespace = o.leader_election_namespace;
  gate.election.lease_name = "koordinator-manager";
  return gate;
}

void feedSloConfig(ManagerInformers& informers, SloConfigSource& slo_config) {
  informers.slo_config.addHandlers(
      {[&](const std::string&, const ConfigMapData& cm) { slo_config.update(cm); },
       [&](const std::string&, const ConfigMapData&, const ConfigMapData& cm) {
         slo_config.update(cm);
       },
       [&](const std::string&, const ConfigMapData&) { slo_config.remove(); }});
}

std::unique_ptr<WebhookRuntime> makeWebhookRuntime(kube::RestClient& client,
                                                   boost::asio::io_context& io,
                                                   std::map<std::string, AdmissionHandler> handlers,
                                                   const ManagerOptions& o,
                                                   metrics::Registry& metrics) {
  if (handlers.empty()) {
    if (!o.webhook_client_ca_file.empty()) {
      KOORD_LOG_WARNING(
          "manager: --webhook-client-ca-file has no effect: every webhook gate is off, so no "
          "webhook server runs");
    }
    return nullptr;
  }
  WebhookRuntimeOptions wo;
  wo.certs.namespace_ = o.pod_namespace;
  wo.certs.secret_name = o.secret_name;
  wo.certs.service_name = o.service_name;
  wo.certs.host = o.webhook_host;
  wo.certs.cert_dir = o.webhook_cert_dir;
  wo.configurations.mutating_name = o.mutating_webhook_name;
  wo.configurations.validating_name = o.validating_webhook_name;
  wo.configurations.namespace_ = o.pod_namespace;
  wo.configurations.service_name = o.service_name;
  wo.configurations.host = o.webhook_host;
  wo.configurations.failure_policy_pods = o.webhook_failure_policy_pods;
  wo.configurations.port = o.webhook_port;
  wo.server.address = app::joinHostPort("", o.webhook_port);
  wo.server.client_ca_file = o.webhook_client_ca_file;
  wo.server.client_common_names = o.webhook_client_cn;
  return std::make_unique<WebhookRuntime>(client, io, std::move(wo), std::move(handlers), metrics);
}

}  // namespace koord::roles::manager
