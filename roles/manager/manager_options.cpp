#include "manager_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "koord/core/duration.h"

namespace koord::roles::manager {

const std::vector<std::string>& knownControllers() {
  static const std::vector<std::string> kAll = {"colocationprofile", "nodemetric", "noderesource",
                                                "nodeslo", "quotaprofile"};
  return kAll;
}

const std::vector<std::string>& knownNodeResourcePlugins() {
  static const std::vector<std::string> kAll = {"MidResource",       "BatchResource",
                                                "CPUNormalization",  "ResourceAmplification",
                                                "GPUDeviceResource", "RDMADeviceResource"};
  return kAll;
}

void registerFlags(FlagSet& flags, ManagerOptions& o, const FeatureGate& gates) {
  app::addLoggingFlags(flags, o.common);
  app::addFeatureGatesFlag(flags, o.common, gates);
  flags.addString("kubeconfig", &o.kubeconfig, "",
                  "Path to a kubeconfig. Only required if out-of-cluster.");
  flags.addInt("rest-config-qps", &o.rest_config_qps, 30, "QPS of rest config.");
  flags.addInt("rest-config-burst", &o.rest_config_burst, 50, "Burst of rest config.");
  flags.addString("metrics-addr", &o.metrics_addr, ":8080",
                  "The address the metric endpoint binds to.");
  flags.addString("health-probe-addr", &o.health_probe_addr, ":8000",
                  "The address the healthz/readyz endpoint binds to.");
  flags.addBool("enable-leader-election", &o.enable_leader_election, true,
                "Whether you need to enable leader election.");
  flags.addString("leader-election-namespace", &o.leader_election_namespace, "koordinator-system",
                  "This determines the namespace in which the leader election lease will be "
                  "created.");
  flags.addString("leader-elect-resource-lock", &o.leader_elect_resource_lock, "leases",
                  "The type of resource object that is used for locking during leader election.");
  flags.addString("namespace", &o.namespace_, "",
                  "Namespace if specified restricts the manager's cache to watch objects in the "
                  "desired namespace. Defaults to all namespaces.");
  flags.addString("sync-period", &o.sync_period, "",
                  "Determines the minimum frequency at which watched resources are reconciled.");
  flags.addStringList("controllers", &o.controllers, {"*"},
                      fmt::format("A list of controllers to enable. '*' enables all on-by-default "
                                  "controllers, 'foo' enables the controller named 'foo', '-foo' "
                                  "disables the controller named 'foo'. All controllers: {}.",
                                  fmt::join(knownControllers(), ", ")));
  flags.addStringList("noderesource-plugins", &o.noderesource_plugins, knownNodeResourcePlugins(),
                      "A list of noderesource plugins to enable.");
  flags.addString("slo-config-name", &o.slo_config_name, "slo-controller-config",
                  "The name of the slo controller config.");
  flags.addString("config-namespace", &o.config_namespace, "koordinator-system",
                  "The namespace of the slo controller config.");
  flags.addString("node-strategy-name-need-check", &o.node_strategy_name_need_check, "false",
                  "Whether node strategies in the slo controller config must be named.");
  flags.addBool("colocation-profile-reconcile-by-default",
                &o.colocation_profile_reconcile_by_default, false,
                "Reconcile pods against ClusterColocationProfiles by default.");
  flags.addDuration("colocation-profile-reconcile-interval",
                    &o.colocation_profile_reconcile_interval, std::chrono::seconds(30),
                    "The interval of the colocation profile controller's reconciliation.");
  flags.addDouble("colocation-profile-update-pod-qps", &o.colocation_profile_update_pod_qps, 10,
                  "QPS of pod updates by the colocation profile controller.");
  flags.addInt("colocation-profile-update-pod-qps-burst",
               &o.colocation_profile_update_pod_qps_burst, 100,
               "Burst of pod updates by the colocation profile controller.");
  flags.addStringList("scheduler-usernames", &o.scheduler_usernames, {},
                      "Users allowed to set or change the scheduler-owned pod annotations "
                      "(resource-status, device-allocated, reservation-allocated); /validate-pod "
                      "denies them to everyone else. Default: "
                      "system:serviceaccount:<POD_NAMESPACE>:koord-scheduler.");
  flags.addStringList("koordlet-usernames", &o.koordlet_usernames, {},
                      "The koordlets' identities: /validate-node-writes lets each change only "
                      "its own node's Node, NodeMetric and Device (the node its bound token's pod "
                      "runs on). Default: system:serviceaccount:<POD_NAMESPACE>:koordlet.");
  flags.addString("webhook-client-ca-file", &o.webhook_client_ca_file, "",
                  "PEM file of the CA that signed the apiserver's webhook client certificate. "
                  "When set, the admission webhook server refuses TLS connections without a "
                  "certificate from it (configure the apiserver to send one: docs/manager.md). "
                  "Re-read when the file changes. Empty: any caller is served.");
  flags.bindEnv("webhook-client-ca-file", {"WEBHOOK_CLIENT_CA_FILE"});
  flags.addStringList("webhook-client-cn", &o.webhook_client_cn, {},
                      "With --webhook-client-ca-file: the common names the client certificate "
                      "may carry, e.g. the one in the apiserver's webhook kubeconfig. Needed when "
                      "that CA also signs other clients' certificates. Empty: any certificate "
                      "from the CA.");
  flags.bindEnv("webhook-client-cn", {"WEBHOOK_CLIENT_CN"});
  flags.addHelpSection(
      "Environment",
      {"WEBHOOK_PORT (9876)  port of the admission webhook server (TLS)",
       "WEBHOOK_CERT_DIR (/tmp/koordinator-webhook-certs), WEBHOOK_HOST, "
       "WEBHOOK_CONFIGURATION_FAILURE_POLICY_PODS (Fail|Ignore: the pod webhooks' policy)",
       "POD_NAMESPACE (koordinator-system), SECRET_NAME (koordinator-webhook-certs)",
       "SERVICE_NAME (koordinator-webhook-service)",
       "MUTATING_WEBHOOK_NAME, VALIDATING_WEBHOOK_NAME (koordinator-*-webhook-configuration)"});
}

void readEnvironment(ManagerOptions& o, const char* (*getenv)(const char*)) {
  if (const char* v = getenv("WEBHOOK_PORT"); v != nullptr && *v != '\0') {
    std::string_view s(v);
    int port = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), port);
    if (ec != std::errc() || ptr != s.data() + s.size() || port < 1 || port > 65535) {
      throw app::ConfigError(fmt::format("WEBHOOK_PORT={:?} is not a port number (1-65535)", s));
    }
    o.webhook_port = port;
  }
  auto str = [getenv](const char* name, std::string& target) {
    if (const char* v = getenv(name); v != nullptr && *v != '\0')
      target = v;
  };
  str("WEBHOOK_CERT_DIR", o.webhook_cert_dir);
  str("WEBHOOK_HOST", o.webhook_host);
  str("WEBHOOK_CONFIGURATION_FAILURE_POLICY_PODS", o.webhook_failure_policy_pods);
  if (!o.webhook_failure_policy_pods.empty() && o.webhook_failure_policy_pods != "Fail" &&
      o.webhook_failure_policy_pods != "Ignore") {
    throw app::ConfigError(
        fmt::format("WEBHOOK_CONFIGURATION_FAILURE_POLICY_PODS={:?}: want Fail or Ignore",
                    o.webhook_failure_policy_pods));
  }
  str("POD_NAMESPACE", o.pod_namespace);
  str("SECRET_NAME", o.secret_name);
  str("SERVICE_NAME", o.service_name);
  str("MUTATING_WEBHOOK_NAME", o.mutating_webhook_name);
  str("VALIDATING_WEBHOOK_NAME", o.validating_webhook_name);
}

std::vector<std::string> koordletUsernames(const ManagerOptions& o) {
  if (!o.koordlet_usernames.empty())
    return o.koordlet_usernames;
  return {fmt::format("system:serviceaccount:{}:koordlet", o.pod_namespace)};
}

std::vector<std::string> schedulerUsernames(const ManagerOptions& o) {
  if (!o.scheduler_usernames.empty())
    return o.scheduler_usernames;
  return {fmt::format("system:serviceaccount:{}:koord-scheduler", o.pod_namespace)};
}

std::vector<std::string> enabledControllers(const std::vector<std::string>& spec) {
  const auto& all = knownControllers();
  auto known = [&all](const std::string& n) {
    return std::find(all.begin(), all.end(), n) != all.end();
  };
  std::set<std::string> on;
  bool star = false;
  for (const auto& item : spec) {
    if (item == "*") {
      star = true;
    } else if (!item.empty() && item[0] == '-') {
      if (!known(item.substr(1))) {
        throw FlagError(fmt::format("--controllers: unknown controller {:?}", item.substr(1)));
      }
    } else if (!known(item)) {
      throw FlagError(fmt::format("--controllers: unknown controller {:?}", item));
    } else {
      on.insert(item);
    }
  }
  if (star)
    on.insert(all.begin(), all.end());
  for (const auto& item : spec) {
    if (!item.empty() && item[0] == '-')
      on.erase(item.substr(1));
  }
  return {on.begin(), on.end()};
}

void validate(const ManagerOptions& o) {
  (void)enabledControllers(o.controllers);
  const auto& plugins = knownNodeResourcePlugins();
  // Koordinator's forms: a name, "*" for every plugin, "-Name" to leave one out.
  for (const auto& p : o.noderesource_plugins) {
    const std::string_view name = std::string_view(p).starts_with('-') && p.size() > 1
                                      ? std::string_view(p).substr(1)
                                      : std::string_view(p);
    if (p != "*" && std::find(plugins.begin(), plugins.end(), name) == plugins.end()) {
      throw FlagError(fmt::format("--noderesource-plugins: unknown plugin {:?}", p));
    }
  }
  if (!o.sync_period.empty() && !parseGoDuration(o.sync_period)) {
    throw FlagError(fmt::format("--sync-period: {:?} is not a duration", o.sync_period));
  }
  if (o.rest_config_qps <= 0 || o.rest_config_burst <= 0) {
    throw FlagError("--rest-config-qps and --rest-config-burst must be positive");
  }
  if (!o.webhook_client_cn.empty() && o.webhook_client_ca_file.empty()) {
    throw FlagError(
        "--webhook-client-cn needs --webhook-client-ca-file: without a client CA no client "
        "certificate is asked for, so there is no name to check");
  }
  if (o.leader_elect_resource_lock != "leases") {
    throw FlagError(fmt::format("--leader-elect-resource-lock={:?}: only \"leases\" is supported",
                                o.leader_elect_resource_lock));
  }
}

}  // namespace koord::roles::manager
