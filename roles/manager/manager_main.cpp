// koord manager: the co-location control plane (webhooks, SLO controllers, batch resources).
#include <cstdlib>

#include <fmt/format.h>

#include "admission_handlers.h"
#include "koord/apis/features.h"
#include "koord/app/leader_election_flags.h"
#include "koord/app/leader_gate.h"
#include "koord/app/role_app.h"
#include "koord/core/log.h"
#include "koord/kube/event_recorder.h"
#include "koord/kube/kubeconfig.h"
#include "koord/kube/rest_client.h"
#include "manager_controllers.h"
#include "manager_informers.h"
#include "manager_options.h"
#include "manager_readiness.h"
#include "manager_startup.h"
#include "sloconfig/slo_config_source.h"
#include "webhookserver/webhook_runtime.h"

namespace koord::roles::manager {

int roleMain(int argc, char** argv) {
  return app::runRole(argv[0], [&] {
    ManagerOptions o;
    FeatureGate gates(apis::managerFeatures());
    FlagSet flags(argv[0]);
    registerFlags(flags, o, gates);
    if (app::parseOrHelp(flags, argc, argv))
      return 0;
    app::applyCommonOptions(o.common, &gates);
    validate(o);
    readEnvironment(o, [](const char* n) -> const char* { return std::getenv(n); });
    checkWebhookClientCaFile(o);

    app::RoleApp role("manager", Reactor::Options{.threads = 2});
    role.serveOps(o.metrics_addr, app::OpsEndpoints::kMetrics);
    role.serveOps(o.health_probe_addr, app::OpsEndpoints::kHealth);
    auto& io = role.reactor().context();

    kube::RestClient client(io, app::apiServerConfig(o.kubeconfig, o.rest_config_qps,
                                                     o.rest_config_burst, "koord-manager"));
    kube::EventRecorder recorder(client, io, {"koord-manager", app::hostName()});
    ManagerInformers informers(client, io, o.config_namespace, o.slo_config_name);
    SloConfigSource slo_config(o.config_namespace, o.slo_config_name, &recorder, role.metrics());
    feedSloConfig(informers, slo_config);

    app::LeaderGate gate(role.reactor(), client, leaderGateOptions(o));
    ManagerControllers controllers(
        gate.writer(), informers, slo_config, enabledControllers(o.controllers), role.metrics(),
        noderesource::enabledNodeResourcePlugins(o.noderesource_plugins));
    controllers.watch();

    // Admission: every replica serves it, leader or not.
    auto webhooks =
        makeWebhookRuntime(client, io, admissionHandlers(informers, gates, o), o, role.metrics());
    informers.start();
    ManagerReadiness readiness(role.health(), webhooks != nullptr);
    if (webhooks)
      webhooks->start([&] { readiness.webhooksServing(); });

    gate.start({
        .wait_for_sync = [&](std::chrono::milliseconds t) { return informers.waitForSync(t); },
        .on_synced =
            [&] {
              if (informers.slo_config.store().size() == 0)
                slo_config.markSyncedWithoutConfigMap();
              readiness.cachesSynced();
            },
        .on_leading =
            [&] {
              auto names = controllers.names();
              KOORD_LOG_INFO("manager: leading, starting controllers {}", fmt::join(names, ","));
              controllers.start();
            },
    });

    // On the io thread: only what returns at once. Blocking joins follow run(), when no io
    // thread is needed to finish them.
    role.reactor().onShutdown([&] {
      gate.stopElection();
      if (webhooks)
        webhooks->requestStop();
      informers.stop();
      client.httpClient().closeIdleConnections();
    });
    app::warnGatesWithoutEffect(gates, "manager");
    int rc = gate.join(role.run());
    controllers.stop();
    if (webhooks)
      webhooks->stop();
    informers.stop();
    return rc;
  });
}

}  // namespace koord::roles::manager
