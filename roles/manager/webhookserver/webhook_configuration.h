// The Mutating/ValidatingWebhookConfigurations that make the apiserver call koord-manager:
// created from koord's defaults when absent, otherwise pointed at us with the current caBundle.
#pragma once

#include <boost/json/fwd.hpp>

#include <set>
#include <string>

#include "koord/kube/error.h"

namespace koord::kube {
class RestClient;
}

namespace koord::roles::manager {

struct WebhookConfigurationOptions {
  std::string mutating_name = "koordinator-mutating-webhook-configuration";
  std::string validating_name = "koordinator-validating-webhook-configuration";
  std::string namespace_ = "koordinator-system";
  std::string service_name = "koordinator-webhook-service";
  /// WEBHOOK_HOST: when set, webhooks get url https://<host>:<port><path> instead of a service.
  std::string host;
  int port = 9876;
  /// WEBHOOK_CONFIGURATION_FAILURE_POLICY_PODS: when set, the failurePolicy of every webhook
  /// whose rules cover pods, whatever its template says.
  std::string failure_policy_pods;
  /// Paths this replica serves (by feature gate); webhooks for other paths are left out, as
  /// Koordinator leaves them out, so the apiserver never calls a path that answers 404.
  std::set<std::string> served_paths;
};

/// koord's default webhooks (Koordinator's config/webhook manifests with their patches):
/// mpod-create/mpod-update on /mutate-pod, melasticquota and velasticquota on
/// /{mutate,validate}-scheduling-sigs-k8s-io-v1alpha1-elasticquota, vpod on /validate-pod,
/// vconfigmap on /validate-configmap, and koord's own vnode-writes on /validate-node-writes and
/// vreservation on /validate-reservation; `mutating` picks which configuration's list.
boost::json::array defaultWebhooks(bool mutating);

/// The webhooks to write: each of `templates` (a configuration's "template" annotation, else
/// its webhooks as first seen) whose path is served, with the service or URL of `options`,
/// `ca_pem` as caBundle and, on pod webhooks, options.failure_policy_pods when set. Errors name the
/// webhook whose clientConfig is unusable.
kube::Expected<boost::json::array> renderWebhooks(const boost::json::array& templates,
                                                  const WebhookConfigurationOptions& options,
                                                  const std::string& ca_pem);

/// Reads both configurations, creates the missing ones (with the template annotation holding
/// defaultWebhooks) and updates the others when what renderWebhooks gives differs from what
/// they hold. Blocking; returns true when something was written.
kube::Expected<bool> ensureWebhookConfigurations(kube::RestClient& client,
                                                 const WebhookConfigurationOptions& options,
                                                 const std::string& ca_pem);

}  // namespace koord::roles::manager
