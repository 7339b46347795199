// koord scheduler: kube-scheduler's framework with Koordinator's load-aware plugins.
#include "koord/apis/features.h"
#include "koord/app/leader_election_flags.h"
#include "koord/app/leader_gate.h"
#include "koord/app/role_app.h"
#include "koord/core/log.h"
#include "koord/kube/rest_client.h"
#include "kube_scheduler_api.h"
#include "plugins/reservation/args.h"
#include "scheduler.h"
#include "scheduler_informers.h"
#include "scheduler_options.h"
#include "scheduler_startup.h"

namespace koord::roles::scheduler {

int roleMain(int argc, char** argv) {
  return app::runRole(argv[0], [&] {
    SchedulerOptions o;
    FeatureGate gates(apis::schedulerFeatures());
    FlagSet flags(argv[0]);
    registerFlags(flags, o, gates);
    if (app::parseOrHelp(flags, argc, argv))
      return 0;
    app::applyCommonOptions(o.common, &gates);
    validate(o);
    const auto cfg = loadConfig(o);
    KOORD_LOG_INFO("scheduler: {}", config::describe(cfg));

    app::RoleApp role("scheduler", Reactor::Options{.threads = 2});
    if (o.port != 0)
      role.serveOps(app::joinHostPort(o.address, o.port));
    app::serveSecureOps(role, o.secure_serving);
    warnFlagsWithoutEffect(flags);
    auto& io = role.reactor().context();
    kube::RestClient client(io, restConfig(o, cfg));
    SchedulerInformers informers(client, io);
    // Bindings, preemptions and status patches go out only while this replica leads.
    app::LeaderGate gate(role.reactor(), client, leaderGateOptions(o, cfg));
    KubeSchedulerApi api(gate.writer(), io, informers, app::hostName());
    auto scheduler = makeScheduler(cfg, api, role.metrics());
    api.setQueue(&scheduler->queue());
    reservation::ReservationController reservations(
        api, scheduler->cache(), scheduler->metrics(),
        reservationControllerOptions(scheduler->findPlugin(reservation::kPluginName)));
    scheduler->setReservationOwnerHook([&reservations] { reservations.poke(); });
    informers.connect(*scheduler);
    informers.pods.addHandlers(
        {nullptr, nullptr, [&api](const std::string&, const PodInfo& p) { api.forgetPod(p.uid); }});
    informers.start();

    // The scheduling loop starts once the caches are in and this replica leads: a scheduler
    // that acted on half a cluster would overcommit the nodes it has not seen yet.
    role.health().setReady(false, "informer caches not synced");
    gate.start({
        .wait_for_sync = [&](std::chrono::milliseconds t) { return informers.waitForSync(t); },
        .on_synced = [&] { role.health().setReady(true); },
        .on_leading =
            [&] {
              KOORD_LOG_INFO("scheduler: leading with synced caches: scheduling");
              scheduler->start();
              reservations.start();
            },
    });

    role.reactor().onShutdown([&] {
      gate.stopElection();
      informers.stop();
      client.httpClient().closeIdleConnections();
    });
    app::warnGatesWithoutEffect(gates, "scheduler");
    int rc = gate.join(role.run());
    reservations.stop();
    scheduler->stop();
    informers.stop();
    return rc;
  });
}

}  // namespace koord::roles::scheduler
