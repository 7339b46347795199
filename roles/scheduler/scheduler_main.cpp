// koord scheduler: kube-scheduler's framework with Koordinator's load-aware plugins.
#include <atomic>
#include <stdexcept>
#include <thread>

#include "config/expand_plugins.h"
#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/apis/features.h"
#include "koord/app/leader_election_flags.h"
#include "koord/app/role_app.h"
#include "koord/core/log.h"
#include "koord/kube/kubeconfig.h"
#include "koord/kube/leader_election.h"
#include "koord/kube/rest_client.h"
#include "kube_scheduler_api.h"
#include "scheduler.h"
#include "scheduler_informers.h"
#include "scheduler_options.h"

namespace koord::roles::scheduler {

namespace {

// The configuration file, checked in full before anything starts: an unknown plugin, extension
// point, field or arg is a startup error naming it.
config::SchedulerConfig loadConfig(const SchedulerOptions& o) {
  if (o.config.empty()) {
    auto defaults = config::parseSchedulerConfigText(
        "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n",
        inTreeRegistry());
    if (!defaults)
      throw app::ConfigError("the default configuration: " + defaults.error().message);
    return std::move(*defaults);
  }
  auto cfg = config::loadSchedulerConfig(o.config, inTreeRegistry());
  if (!cfg)
    throw app::ConfigError("--config: " + cfg.error().message);
  return std::move(*cfg);
}

// As kube-scheduler: without --config the deprecated flags (--kubeconfig, --kube-api-*,
// --leader-elect*) configure the client and the election; with it the file does, except that a
// --kubeconfig or --master given on the command line still says where the API server is.
kube::RestConfig restConfig(const SchedulerOptions& o, const config::SchedulerConfig& cfg) {
  const std::string kubeconfig =
      !o.kubeconfig.empty() ? o.kubeconfig : cfg.client_connection.kubeconfig;
  auto rc = kube::resolveConfig(kubeconfig);
  if (!rc)
    throw app::ConfigError("no API server configuration: " + rc.error().message);
  if (!o.master.empty())
    rc->host = o.master;
  if (o.config.empty()) {
    rc->qps = o.kube_api_qps;
    rc->burst = o.kube_api_burst;
  } else {
    rc->qps = cfg.client_connection.qps;
    rc->burst = cfg.client_connection.burst;
  }
  rc->user_agent = "koord-scheduler";
  return std::move(*rc);
}

config::LeaderElection leaderElection(const SchedulerOptions& o,
                                      const config::SchedulerConfig& cfg) {
  if (!o.config.empty())
    return cfg.leader_election;
  config::LeaderElection le;
  le.leader_elect = o.leader_election.leader_elect;
  le.lease_duration = o.leader_election.lease_duration;
  le.renew_deadline = o.leader_election.renew_deadline;
  le.retry_period = o.leader_election.retry_period;
  le.resource_name = o.leader_election.resource_name;
  le.resource_namespace = o.leader_election.resource_namespace;
  return le;
}

}  // namespace

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
    auto& io = role.reactor().context();
    kube::RestClient client(io, restConfig(o, cfg));
    SchedulerInformers informers(client, io);
    const auto le_config = leaderElection(o, cfg);
    // Bindings, preemptions and status patches go out only while this replica leads: one still
    // queued when the lease's renew deadline passes is refused, not sent beside a successor's.
    auto fence = std::make_shared<kube::LeadershipFence>();
    std::unique_ptr<kube::RestClient> fenced_client;
    if (le_config.leader_elect)
      fenced_client = client.fenced([fence] { return fence->remaining(); });
    KubeSchedulerApi api(fenced_client ? *fenced_client : client, io, informers, app::hostName());
    std::unique_ptr<Scheduler> scheduler;
    try {
      scheduler = std::make_unique<Scheduler>(cfg, inTreeRegistry(), api, role.metrics());
    } catch (const std::invalid_argument& e) {
      throw app::ConfigError(std::string("--config: ") + e.what());
    }
    api.setQueue(&scheduler->queue());
    informers.connect(*scheduler);
    informers.pods.addHandlers(
        {nullptr, nullptr, [&api](const std::string&, const PodInfo& p) { api.forgetPod(p.uid); }});
    informers.start();

    // The scheduling loop starts once the caches are in and this replica leads: a scheduler
    // that acted on half a cluster would overcommit the nodes it has not seen yet.
    std::atomic<bool> leading{false};
    role.health().setReady(false, "informer caches not synced");
    std::thread starter([&] {
      bool synced = false;
      while (!role.reactor().stopping()) {
        if (!synced && informers.waitForSync(std::chrono::milliseconds(200))) {
          synced = true;
          role.health().setReady(true);
          KOORD_LOG_INFO("scheduler: informer caches synced");
        }
        if (synced && leading) {
          KOORD_LOG_INFO("scheduler: leading with synced caches: scheduling");
          scheduler->start();
          return;
        }
        if (synced)
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });

    std::atomic<bool> lost_leadership{false};
    std::unique_ptr<kube::LeaderElector> elector;
    if (le_config.leader_elect) {
      kube::LeaderElectionConfig le;
      le.lease_namespace = le_config.resource_namespace;
      le.lease_name = le_config.resource_name;
      le.identity = app::leaderIdentity();
      le.lease_duration =
          std::chrono::duration_cast<std::chrono::milliseconds>(le_config.lease_duration);
      le.renew_deadline =
          std::chrono::duration_cast<std::chrono::milliseconds>(le_config.renew_deadline);
      le.retry_period =
          std::chrono::duration_cast<std::chrono::milliseconds>(le_config.retry_period);
      le.on_started_leading = [&] { leading = true; };
      le.fence = fence;
      le.on_stopped_leading = [&] {
        if (!role.reactor().stopping()) {
          KOORD_LOG_ERROR("scheduler: leader election lost, exiting");
          lost_leadership = true;
          role.reactor().requestStop();
        }
      };
      le.on_new_leader = [](const std::string& id) {
        KOORD_LOG_INFO("scheduler: the leader is {}", id);
      };
      elector = std::make_unique<kube::LeaderElector>(client, io, std::move(le));
      elector->start();
    } else {
      leading = true;
    }

    role.reactor().onShutdown([&] {
      if (elector)
        elector->stop();
      informers.stop();
      client.httpClient().closeIdleConnections();
    });
    app::warnGatesWithoutEffect(gates, "scheduler");
    int rc = role.run();
    if (elector)
      elector->stop();
    starter.join();
    scheduler->stop();
    informers.stop();
    return lost_leadership ? 1 : rc;
  });
}

}  // namespace koord::roles::scheduler
