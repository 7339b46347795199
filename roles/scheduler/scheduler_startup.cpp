#include "scheduler_startup.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "framework/plugin_registry.h"
#include "koord/app/role_app.h"
#include "koord/kube/kubeconfig.h"
#include "plugins/reservation/reservation_plugin.h"
#include "scheduler.h"

namespace koord::roles::scheduler {

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
  const bool from_flags = o.config.empty();
  auto rc = app::apiServerConfig(
      kubeconfig, from_flags ? o.kube_api_qps : cfg.client_connection.qps,
      from_flags ? o.kube_api_burst : cfg.client_connection.burst, "koord-scheduler");
  if (!o.master.empty())
    rc.host = o.master;
  return rc;
}

namespace {

kube::LeaderElection leaderElection(const SchedulerOptions& o, const config::SchedulerConfig& cfg) {
  if (!o.config.empty())
    return cfg.leader_election;
  kube::LeaderElection le;
  le.leader_elect = o.leader_election.leader_elect;
  le.lease_duration = o.leader_election.lease_duration;
  le.renew_deadline = o.leader_election.renew_deadline;
  le.retry_period = o.leader_election.retry_period;
  le.resource_name = o.leader_election.resource_name;
  le.resource_namespace = o.leader_election.resource_namespace;
  return le;
}

}  // namespace

app::LeaderGateOptions leaderGateOptions(const SchedulerOptions& o,
                                         const config::SchedulerConfig& cfg) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  const auto le = leaderElection(o, cfg);
  app::LeaderGateOptions gate;
  gate.role = "scheduler";
  gate.leader_elect = le.leader_elect;
  gate.election.lease_namespace = le.resource_namespace;
  gate.election.lease_name = le.resource_name;
  gate.election.lease_duration = duration_cast<milliseconds>(le.lease_duration);
  gate.election.renew_deadline = duration_cast<milliseconds>(le.renew_deadline);
  gate.election.retry_period = duration_cast<milliseconds>(le.retry_period);
  gate.sync_poll = milliseconds(200);
  return gate;
}

std::unique_ptr<Scheduler> makeScheduler(const config::SchedulerConfig& cfg, SchedulerApi& api,
                                         metrics::Registry& metrics) {
  try {
    return std::make_unique<Scheduler>(cfg, inTreeRegistry(), api, metrics);
  } catch (const std::invalid_argument& e) {
    throw app::ConfigError(std::string("--config: ") + e.what());
  }
}

reservation::ControllerOptions reservationControllerOptions(const Plugin* plugin) {
  reservation::ReservationArgs args;
  if (const auto* p = dynamic_cast<const reservation::ReservationPlugin*>(plugin))
    args = p->args();
  reservation::ControllerOptions o;
  o.resync_interval = std::chrono::seconds(args.resync_interval_seconds);
  o.gc_interval = std::chrono::seconds(args.gc_interval_seconds);
  o.gc_duration = std::chrono::seconds(args.gc_duration_seconds);
  o.gc_disabled = args.disable_garbage_collection;
  return o;
}

}  // namespace koord::roles::scheduler
