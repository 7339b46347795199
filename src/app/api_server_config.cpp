#include <utility>

#include "koord/app/role_app.h"
#include "koord/kube/kubeconfig.h"

namespace koord::app {

kube::RestConfig apiServerConfig(const std::string& kubeconfig, double qps, int burst,
                                 std::string user_agent) {
  auto config = kube::resolveConfig(kubeconfig);
  if (!config)
    throw ConfigError("no API server configuration: " + config.error().message);
  config->qps = qps;
  config->burst = burst;
  config->user_agent = std::move(user_agent);
  return std::move(*config);
}

}  // namespace koord::app
