#include "runtime_proxy_options.h"

#include <fmt/format.h>

namespace koord::roles::runtime_proxy {

void registerFlags(FlagSet& f, RuntimeProxyOptions& o) {
  app::addLoggingFlags(f, o.common);
  f.addString("koord-runtimeproxy-endpoint", &o.koord_runtimeproxy_endpoint,
              "/var/run/koord-runtimeproxy/runtimeproxy.sock",
              "koord-runtimeproxy service endpoint.");
  f.addString("remote-runtime-service-endpoint", &o.remote_runtime_service_endpoint,
              "/var/run/containerd/containerd.sock", "backend runtime service endpoint.");
  f.addString("remote-image-service-endpoint", &o.remote_image_service_endpoint, "",
              "backend image service endpoint (defaults to the runtime service endpoint).");
  f.addString("backend-runtime-mode", &o.backend_runtime_mode, "Containerd",
              "backend container engine(Containerd|Docker).");
  f.addString("runtime-hook-server-key", &o.runtime_hook_server_key,
              "runtimeproxy.koordinator.sh/skip-hookserver",
              "pod label key that makes the proxy skip hook servers.");
  f.addString("runtime-hook-server-val", &o.runtime_hook_server_val, "true",
              "pod label value that makes the proxy skip hook servers.");
  f.addStringList("skip-hookserver-namespaces", &o.skip_hookserver_namespaces, {"kube-system"},
                  "koord addition: namespaces whose pods may skip hook servers with the "
                  "--runtime-hook-server-key label; elsewhere the label is ignored (logged once "
                  "per pod) and the hooks run. Comma-separated; empty: no pod may skip.");
  f.addString("metrics-addr", &o.metrics_addr, "",
              "koord addition: serve /healthz, /readyz and /metrics here (empty: off).");
  f.addString("hook-server-config-dir", &o.hook_server_config_dir, "/etc/runtime/hookserver.d",
              "koord addition: the directory hook servers register in (*.json), watched.");
  f.addDuration("hook-server-timeout", &o.hook_server_timeout, std::chrono::milliseconds(1000),
                "koord addition: deadline of one hook call; then the hook's failure-policy "
                "decides.");
}

void validate(const RuntimeProxyOptions& o) {
  if (o.backend_runtime_mode == "Docker") {
    throw app::ConfigError("--backend-runtime-mode=Docker is not supported yet; use Containerd");
  }
  if (o.backend_runtime_mode != "Containerd") {
    throw FlagError(fmt::format("--backend-runtime-mode={:?}: must be Containerd or Docker",
                                o.backend_runtime_mode));
  }
  if (o.hook_server_timeout <= std::chrono::milliseconds(0) ||
      o.hook_server_timeout > std::chrono::minutes(1)) {
    throw FlagError(
        "--hook-server-timeout: want a duration above 0 and at most 1m (kubelet's "
        "CRI calls time out at 2m)");
  }
  if (o.koord_runtimeproxy_endpoint.empty() || o.remote_runtime_service_endpoint.empty()) {
    throw FlagError(
        "--koord-runtimeproxy-endpoint and --remote-runtime-service-endpoint are required");
  }
}

}  // namespace koord::roles::runtime_proxy
