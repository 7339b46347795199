// koord-scheduler's command line: kube-scheduler's flags (--config, --kubeconfig,
// --leader-elect*, secure serving, the delegated-auth flags its manifests pass) plus
// Koordinator's insecure --address/--port (10251).
#pragma once

#include <string>
#include <vector>

#include "koord/app/leader_election_flags.h"
#include "koord/app/role_app.h"
#include "koord/app/secure_serving.h"

namespace koord::roles::scheduler {

struct SchedulerOptions {
  app::CommonOptions common;
  app::LeaderElectionOptions leader_election;
  std::string config;
  std::string kubeconfig;
  std::string master;
  double kube_api_qps = 50;
  int kube_api_burst = 100;
  std::string address = "0.0.0.0";
  int port = 10251;
  app::SecureServingOptions secure_serving;
  // Accepted as kube-scheduler takes them (its manifests pass them); each one set is named at
  // startup as having no effect: koord's ops endpoints do no delegated authentication.
  std::string authentication_kubeconfig;
  std::string authorization_kubeconfig;
  bool authentication_skip_lookup = false;
  bool authentication_tolerate_lookup_failure = true;
  std::vector<std::string> authorization_always_allow_paths;
  std::string client_ca_file;
  bool profiling = true;
  bool contention_profiling = true;
};

/// kube-scheduler's --secure-port default.
inline constexpr int kDefaultSecurePort = 10259;

/// One warning line for each accepted flag without effect that was set.
void warnFlagsWithoutEffect(const FlagSet& flags);

void registerFlags(FlagSet& flags, SchedulerOptions& o, const FeatureGate& gates);
void validate(const SchedulerOptions& o);

}  // namespace koord::roles::scheduler
