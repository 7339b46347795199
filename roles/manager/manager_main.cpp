// koord manager: the co-location control plane (webhooks, SLO controllers, batch resources).
#include <atomic>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "admission_handlers.h"
#include "koord/apis/features.h"
#include "koord/app/leader_election_flags.h"
#include "koord/app/role_app.h"
#include "koord/core/log.h"
#include "koord/http/file_util.h"
#include "koord/kube/event_recorder.h"
#include "koord/kube/kubeconfig.h"
#include "koord/kube/leader_election.h"
#include "koord/kube/rest_client.h"
#include "manager_controllers.h"
#include "manager_informers.h"
#include "manager_options.h"
#include "sloconfig/slo_config_source.h"
#include "webhookserver/webhook_runtime.h"

namespace koord::roles::manager {

namespace {

kube::RestConfig restConfig(const ManagerOptions& o) {
  auto config = kube::resolveConfig(o.kubeconfig);
  if (!config)
    throw app::ConfigError("no API server configuration: " + config.error().message);
  config->qps = o.rest_config_qps;
  config->burst = o.rest_config_burst;
  config->user_agent = "koord-manager";
  return std::move(*config);
}

}  // namespace

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
    // Checked here, not at the webhook server's first start: that one would only log and retry,
    // leaving the replica unready for a fault that needs the operator.
    if (!o.webhook_client_ca_file.empty()) {
      if (auto pem = http::readFile(o.webhook_client_ca_file); !pem) {
        throw app::ConfigError(fmt::format("--webhook-client-ca-file {}: {}",
                                           o.webhook_client_ca_file, pem.error().message()));
      }
    }

    app::RoleApp role("manager", Reactor::Options{.threads = 2});
    role.serveOps(o.metrics_addr, app::OpsEndpoints::kMetrics);
    role.serveOps(o.health_probe_addr, app::OpsEndpoints::kHealth);
    auto& io = role.reactor().context();

    kube::RestClient client(io, restConfig(o));
    kube::EventRecorder recorder(client, io, {"koord-manager", app::hostName()});
    ManagerInformers informers(client, io, o.config_namespace, o.slo_config_name);
    SloConfigSource slo_config(o.config_namespace, o.slo_config_name, &recorder, role.metrics());
    informers.slo_config.addHandlers(
        {[&](const std::string&, const ConfigMapData& cm) { slo_config.update(cm); },
         [&](const std::string&, const ConfigMapData&, const ConfigMapData& cm) {
           slo_config.update(cm);
         },
         [&](const std::string&, const ConfigMapData&) { slo_config.remove(); }});

    // The controllers write only while this replica leads: once the lease's renew deadline has
    // passed or leadership has ended, their client refuses a write that was still queued (in a
    // work queue, behind the rate limiter) instead of sending it while a successor takes over.
    auto fence = std::make_shared<kube::LeadershipFence>();
    std::unique_ptr<kube::RestClient> fenced_client;
    if (o.enable_leader_election)
      fenced_client = client.fenced([fence] { return fence->remaining(); });
    ManagerControllers controllers(fenced_client ? *fenced_client : client, informers, slo_config,
                                   enabledControllers(o.controllers), role.metrics());
    controllers.watch();

    // Admission: every replica serves it, leader or not.
    auto handlers = admissionHandlers(informers, gates, o);
    std::unique_ptr<WebhookRuntime> webhooks;
    std::atomic<bool> webhooks_serving{handlers.empty()};
    if (handlers.empty() && !o.webhook_client_ca_file.empty()) {
      KOORD_LOG_WARNING(
          "manager: --webhook-client-ca-file has no effect: every webhook gate is off, so no "
          "webhook server runs");
    }
    if (!handlers.empty()) {
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
      webhooks = std::make_unique<WebhookRuntime>(client, io, std::move(wo), std::move(handlers),
                                                  role.metrics());
    }

    informers.start();
    // Waits for the caches off the io threads: informers fill them on the io threads.
    std::atomic<bool> caches_synced{false};
    std::thread sync_waiter([&] {
      while (!role.reactor().stopping()) {
        if (informers.waitForSync(std::chrono::milliseconds(500))) {
          caches_synced = true;
          if (informers.slo_config.store().size() == 0)
            slo_config.markSyncedWithoutConfigMap();
          KOORD_LOG_INFO("manager: informer caches synced");
          break;
        }
      }
    });
    auto update_readiness = [&] {
      if (caches_synced && webhooks_serving)
        role.health().setReady(true);
      else
        role.health().setReady(
            false, caches_synced ? "webhook server not serving yet" : "informer caches not synced");
    };
    update_readiness();

    if (webhooks) {
      webhooks->start([&] {
        webhooks_serving = true;
        update_readiness();
      });
    }

    // The controllers run only on the leader; losing the lease ends the process (as
    // controller-runtime does), since a leader that lost it may already have a successor.
    std::atomic<bool> lost_leadership{false};
    std::thread leader_thread;
    std::mutex leader_mu;
    auto start_leading = [&] {
      std::lock_guard lock(leader_mu);
      leader_thread = std::thread([&] {
        while (!caches_synced && !role.reactor().stopping())
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (role.reactor().stopping())
          return;
        auto names = controllers.names();
        KOORD_LOG_INFO("manager: leading, starting controllers {}", fmt::join(names, ","));
        controllers.start();
      });
    };
    std::unique_ptr<kube::LeaderElector> elector;
    if (o.enable_leader_election) {
      kube::LeaderElectionConfig le;
      le.lease_namespace = o.leader_election_namespace;
      le.lease_name = "koordinator-manager";
      le.identity = app::leaderIdentity();
      le.on_started_leading = start_leading;
      le.fence = fence;
      le.on_stopped_leading = [&] {
        if (!role.reactor().stopping()) {
          KOORD_LOG_ERROR("manager: leader election lost, exiting");
          lost_leadership = true;
          role.reactor().requestStop();
        }
      };
      le.on_new_leader = [](const std::string& id) {
        KOORD_LOG_INFO("manager: the leader is {}", id);
      };
      elector = std::make_unique<kube::LeaderElector>(client, io, std::move(le));
      elector->start();
    } else {
      start_leading();
    }

    // On the io thread: only what returns at once. Blocking joins follow run(), when no io
    // thread is needed to finish them.
    role.reactor().onShutdown([&] {
      if (elector)
        elector->stop();
      if (webhooks)
        webhooks->requestStop();
      informers.stop();
      client.httpClient().closeIdleConnections();
    });
    app::warnGatesWithoutEffect(gates, "manager");
    int rc = role.run();

    if (elector)
      elector->stop();
    {
      std::lock_guard lock(leader_mu);
      if (leader_thread.joinable())
        leader_thread.join();
    }
    controllers.stop();
    if (webhooks)
      webhooks->stop();
    sync_waiter.join();
    informers.stop();
    return lost_leadership ? 1 : rc;
  });
}

}  // namespace koord::roles::manager
