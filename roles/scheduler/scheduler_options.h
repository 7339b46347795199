// koord-scheduler's command line: kube-scheduler's flags that matter here (--config,
// --kubeconfig, --leader-elect*) plus Koordinator's insecure --address/--port (10251).
#pragma once

#include <string>

#include "koord/app/leader_election_flags.h"
#include "koord/app/role_app.h"

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
};

void registerFlags(FlagSet& flags, SchedulerOptions& o, const FeatureGate& gates);
void validate(const SchedulerOptions& o);

}  // namespace koord::roles::scheduler
