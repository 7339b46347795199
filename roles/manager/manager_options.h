// koord-manager's command line and environment, with Koordinator's flag names and defaults
// (cmd/koord-manager/options and pkg/webhook/util), parsed and checked before anything starts.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "koord/app/role_app.h"

namespace koord::roles::manager {

struct ManagerOptions {
  app::CommonOptions common;
  std::string kubeconfig;
  int rest_config_qps = 30;
  int rest_config_burst = 50;
  std::string metrics_addr = ":8080";
  std::string health_probe_addr = ":8000";
  bool enable_leader_election = true;
  std::string leader_election_namespace = "koordinator-system";
  std::string leader_elect_resource_lock = "leases";
  std::string namespace_;
  std::string sync_period;  // a Go duration or "" (Koordinator declares it as a string)
  std::vector<std::string> controllers;
  std::vector<std::string> noderesource_plugins;
  std::string slo_config_name = "slo-controller-config";
  std::string config_namespace = "koordinator-system";
  std::string node_strategy_name_need_check = "false";
  bool colocation_profile_reconcile_by_default = false;
  std::chrono::milliseconds colocation_profile_reconcile_interval{30000};
  double colocation_profile_update_pod_qps = 10;
  int colocation_profile_update_pod_qps_burst = 100;
  /// koord's own: who may write the scheduler-owned pod annotations. Empty: koord-scheduler's
  /// service account in POD_NAMESPACE (schedulerUsernames()).
  std::vector<std::string> scheduler_usernames;
  /// koord's own: the koordlets' identities, whose writes to nodes, NodeMetrics and Devices must
  /// be for their own node. Empty: the koordlet service account in POD_NAMESPACE.
  std::vector<std::string> koordlet_usernames;
  /// koord's own: the CA the apiserver's webhook client certificate must chain to (empty: no
  /// client certificate asked for), and the CNs it may carry (empty: any).
  std::string webhook_client_ca_file;
  std::vector<std::string> webhook_client_cn;

  // Environment (pkg/webhook/util/util.go).
  int webhook_port = 9876;
  std::string webhook_cert_dir = "/tmp/koordinator-webhook-certs";
  std::string webhook_host;
  /// WEBHOOK_CONFIGURATION_FAILURE_POLICY_PODS (Fail or Ignore; empty: as the template says).
  std::string webhook_failure_policy_pods;
  std::string pod_namespace = "koordinator-system";
  std::string secret_name = "koordinator-webhook-certs";
  std::string service_name = "koordinator-webhook-service";
  std::string mutating_webhook_name = "koordinator-mutating-webhook-configuration";
  std::string validating_webhook_name = "koordinator-validating-webhook-configuration";
};

/// The controllers `--controllers=*` means, sorted as Koordinator prints them.
const std::vector<std::string>& knownControllers();
const std::vector<std::string>& knownNodeResourcePlugins();

void registerFlags(FlagSet& flags, ManagerOptions& o, const FeatureGate& gates);

/// Reads WEBHOOK_PORT and friends through `getenv`; a malformed value is a ConfigError.
void readEnvironment(ManagerOptions& o, const char* (*getenv)(const char*));

/// Checks values flags alone cannot (controller names, durations); throws FlagError.
void validate(const ManagerOptions& o);

/// --scheduler-usernames, or system:serviceaccount:<POD_NAMESPACE>:koord-scheduler when unset.
std::vector<std::string> schedulerUsernames(const ManagerOptions& o);
/// --koordlet-usernames, or system:serviceaccount:<POD_NAMESPACE>:koordlet when unset.
std::vector<std::string> koordletUsernames(const ManagerOptions& o);

/// Resolves --controllers ("*", "name", "-name") to the enabled controller set.
std::vector<std::string> enabledControllers(const std::vector<std::string>& spec);

}  // namespace koord::roles::manager
