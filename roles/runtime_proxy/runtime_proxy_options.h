// koord-runtime-proxy's command line (cmd/koord-runtime-proxy): where it listens for kubelet,
// which runtime it forwards to, and the pod label that skips hook servers (and where it counts).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "koord/app/role_app.h"

namespace koord::roles::runtime_proxy {

struct RuntimeProxyOptions {
  app::CommonOptions common;
  std::string koord_runtimeproxy_endpoint = "/var/run/koord-runtimeproxy/runtimeproxy.sock";
  std::string remote_runtime_service_endpoint = "/var/run/containerd/containerd.sock";
  std::string remote_image_service_endpoint;  // empty: same as the runtime service endpoint
  std::string backend_runtime_mode = "Containerd";
  std::string runtime_hook_server_key = "runtimeproxy.koordinator.sh/skip-hookserver";
  std::string runtime_hook_server_val = "true";
  // koord addition: the label bypasses the hooks (and koord's cgroup policy), so only pods in
  // these namespaces may use it.
  std::vector<std::string> skip_hookserver_namespaces = {"kube-system"};
  std::string metrics_addr;  // koord addition, off by default
  // koord additions: where hook servers register (Koordinator's fixed path) and how long a
  // hook call may take before its failure policy applies.
  std::string hook_server_config_dir = "/etc/runtime/hookserver.d";
  std::chrono::milliseconds hook_server_timeout{1000};
};

void registerFlags(FlagSet& flags, RuntimeProxyOptions& o);
/// FlagError for an unknown --backend-runtime-mode; ConfigError for Docker, not built yet.
void validate(const RuntimeProxyOptions& o);

}  // namespace koord::roles::runtime_proxy
