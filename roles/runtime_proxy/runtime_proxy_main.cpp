// koord runtime-proxy: a CRI proxy between kubelet and containerd that calls koordlet hooks.
#include <absl/synchronization/mutex.h>

#include <chrono>

#include "cri/cri_backend.h"
#include "cri/cri_proxy_server.h"
#include "hooks/hook_dispatcher.h"
#include "hooks/hook_interceptor.h"
#include "hooks/hook_server_registry.h"
#include "hooks/runtime_object_cache.h"
#include "hooks/runtime_object_rebuild.h"
#include "koord/app/role_app.h"
#include "koord/core/log.h"
#include "runtime_proxy_options.h"

namespace koord::roles::runtime_proxy {

namespace {

// Calls in flight when the proxy is told to stop get this long; kubelet retries what is cut.
constexpr std::chrono::seconds kShutdownGrace{5};

}  // namespace

int roleMain(int argc, char** argv) {
  return app::runRole(argv[0], [&] {
    RuntimeProxyOptions o;
    FlagSet flags(argv[0]);
    registerFlags(flags, o);
    if (app::parseOrHelp(flags, argc, argv))
      return 0;
    app::applyCommonOptions(o.common, nullptr);
    validate(o);

    // Debian's abseil is built with mutex deadlock detection on: every gRPC lock then updates a
    // lock graph, a few percent of the proxy's CPU per forwarded call. gRPC's locking is not
    // what this process could debug anyway.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    app::RoleApp role("runtime-proxy");
    HookServerRegistry hook_servers(o.hook_server_config_dir);
    hook_servers.start(role.reactor().context());
    role.reactor().onShutdown([&] { hook_servers.stop(); });
    HookDispatcher dispatcher(hook_servers, o.hook_server_timeout);
    RuntimeObjectCache seen;
    // Before serving, for a while: kubelet's first calls after a restart may start containers
    // it created through the previous process; the rebuild goes on if the runtime is not up.
    RuntimeObjectRebuilder rebuild(
        unixTarget(o.remote_runtime_service_endpoint, "remote-runtime-service-endpoint"), seen);
    rebuild.waitDone(std::chrono::seconds(2));
    SkipLabelPolicy skip(o.runtime_hook_server_key, o.runtime_hook_server_val,
                         o.skip_hookserver_namespaces);
    HookInterceptor hooks(dispatcher, seen, skip);
    CriProxyServer proxy(
        CriProxyConfig{
            .listen_endpoint = o.koord_runtimeproxy_endpoint,
            .runtime_endpoint = o.remote_runtime_service_endpoint,
            .image_endpoint = o.remote_image_service_endpoint,
        },
        &hooks);
    proxy.start();
    if (!o.metrics_addr.empty())
      role.serveOps(o.metrics_addr);
    const int rc = role.run();
    proxy.shutdown(kShutdownGrace);
    return rc;
  });
}

}  // namespace koord::roles::runtime_proxy
