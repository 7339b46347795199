// koord descheduler: moves pods off nodes whose measured load is too high, and off nodes where
// they break a rule of their own, within the eviction caps.
#include <fmt/format.h>

#include <fstream>
#include <thread>

#include "config/descheduler_config.h"
#include "descheduler.h"
#include "descheduler_informers.h"
#include "descheduler_options.h"
#include "evictions/api_pod_evictor.h"
#include "koord/apis/features.h"
#include "koord/app/leader_gate.h"
#include "koord/app/role_app.h"
#include "koord/core/duration.h"
#include "koord/core/log.h"
#include "koord/kube/event_recorder.h"
#include "koord/kube/rest_client.h"

namespace koord::roles::descheduler {

namespace {

config::DeschedulerConfig loadConfig(const DeschedulerOptions& o) {
  auto c = o.config.empty() ? config::defaultDeschedulerConfig(inTreeRegistry())
                            : config::loadDeschedulerConfig(o.config, inTreeRegistry());
  if (!c)
    throw app::ConfigError("--config: " + c.error().message);
  if (o.config.empty()) {
    // Without a file the flags name the Lease, as Koordinator's deprecated flags do.
    c->leader_election.leader_elect = o.leader_election.leader_elect;
    c->leader_election.lease_duration = o.leader_election.lease_duration;
    c->leader_election.renew_deadline = o.leader_election.renew_deadline;
    c->leader_election.retry_period = o.leader_election.retry_period;
    c->leader_election.resource_name = o.leader_election.resource_name;
    c->leader_election.resource_namespace = o.leader_election.resource_namespace;
  }
  return std::move(*c);
}

app::LeaderGateOptions gateOptions(const config::DeschedulerConfig& c) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  app::LeaderGateOptions gate;
  gate.role = "descheduler";
  gate.leader_elect = c.leader_election.leader_elect;
  gate.election.lease_namespace = c.leader_election.resource_namespace;
  gate.election.lease_name = c.leader_election.resource_name;
  gate.election.lease_duration = duration_cast<milliseconds>(c.leader_election.lease_duration);
  gate.election.renew_deadline = duration_cast<milliseconds>(c.leader_election.renew_deadline);
  gate.election.retry_period = duration_cast<milliseconds>(c.leader_election.retry_period);
  gate.sync_poll = milliseconds(200);
  return gate;
}

}  // namespace

int roleMain(int argc, char** argv) {
  return app::runRole(argv[0], [&] {
    DeschedulerOptions o;
    FeatureGate gates(apis::managerFeatures());  // koordinator's pkg/features gate
    FlagSet flags(argv[0]);
    registerFlags(flags, o, gates);
    if (app::parseOrHelp(flags, argc, argv))
      return 0;
    app::applyCommonOptions(o.common, &gates);
    validate(o);
    const config::DeschedulerConfig cfg = loadConfig(o);
    if (!o.write_config_to.empty()) {
      std::ofstream out(o.write_config_to, std::ios::binary | std::ios::trunc);
      out << config::encodeDeschedulerConfig(cfg) << "\n";
      if (!out.flush())
        throw app::ConfigError("--write-config-to: cannot write " + o.write_config_to);
      KOORD_LOG_INFO("descheduler: wrote configuration to {}", o.write_config_to);
      return 0;
    }
    for (const auto& name : cfg.dropped_default_plugins)
      KOORD_LOG_WARNING(
          "descheduler: default plugin {} is not built yet and is left out of every "
          "profile",
          name);
    std::optional<kube::Selector> node_selector;
    if (cfg.node_selector) {
      auto s = kube::toSelector(*cfg.node_selector);
      if (!s)
        throw app::ConfigError("--config: nodeSelector: " + s.error().message);
      node_selector = std::move(*s);
    }

    app::warnSecureServingWithoutEffect(flags, "descheduler");
    app::RoleApp role("descheduler", Reactor::Options{.threads = 2});
    if (o.port != 0)
      role.serveOps(app::joinHostPort(o.address, o.port));
    app::serveSecureOps(role, o.secure_serving);
    auto& io = role.reactor().context();
    kube::RestClient client(
        io, app::apiServerConfig(cfg.client_connection.kubeconfig, cfg.client_connection.qps,
                                 cfg.client_connection.burst, "koord-descheduler"));
    kube::EventRecorder recorder(client, io, {"koord-descheduler", app::hostName()});
    DeschedulerInformers informers(client, io);
    app::LeaderGate gate(role.reactor(), client, gateOptions(cfg));
    ApiPodEvictor evictor(
        gate.writer(), recorder, [&informers] { return informers.evictionVersion(); }, cfg.dry_run);
    // What plugins that run controllers reach (MigrationController): started once leading.
    std::vector<BackgroundController> controllers;
    ClusterServices services{
        .writer = gate.writer(),
        .reader = client,
        .events = recorder,
        .io = io,
        .evictor = evictor,
        .dry_run = cfg.dry_run,
        .pod = [&informers](std::string_view ns,
                            std::string_view name) -> std::shared_ptr<const Pod> {
          return informers.pods.store().get(fmt::format("{}/{}", ns, name));
        },
        .add_controller =
            [&controllers](BackgroundController c) { controllers.push_back(std::move(c)); }};
    Descheduler descheduler(
        cfg, inTreeRegistry(),
        [&](TimePoint now) { return informers.snapshot(now, node_selector); }, evictor,
        role.metrics(), &services);
    informers.start();
    gate.start({
        .wait_for_sync = [&](std::chrono::milliseconds t) { return informers.waitForSync(t); },
        .on_synced = [&] { role.health().setReady(true); },
        .on_leading =
            [&] {
              KOORD_LOG_INFO("descheduler: leading, descheduling every {} (dryRun {})",
                             formatGoDuration(cfg.descheduling_interval), cfg.dry_run);
              for (auto& c : controllers) {
                KOORD_LOG_INFO("descheduler: starting controller {}", c.name);
                c.start();
              }
              // The first pass waits for the controllers' caches (bounded: a controller that
              // never syncs is reported and the passes start anyway).
              const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
              for (auto& c : controllers) {
                while (c.synced && !c.synced()) {
                  if (std::chrono::steady_clock::now() > deadline) {
                    KOORD_LOG_WARNING("descheduler: controller {} has not synced; passes start",
                                      c.name);
                    break;
                  }
                  std::this_thread::sleep_for(std::chrono::milliseconds(50));
                }
              }
              descheduler.start();
            },
    });
    role.reactor().onShutdown([&] {
      gate.stopElection();
      informers.stop();
      client.httpClient().closeIdleConnections();
    });
    app::warnGatesWithoutEffect(gates, "descheduler");
    int rc = gate.join(role.run());
    descheduler.stop();
    for (auto& c : controllers)
      c.stop();
    informers.stop();
    return rc;
  });
}

}  // namespace koord::roles::descheduler
