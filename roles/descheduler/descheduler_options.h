// koord-descheduler's command line (cmd/koord-descheduler): --config and --write-config-to,
// leader election with the koord-descheduler Lease in koordinator-system, and the insecure
// --address/--port (10251).
#pragma once

#include <string>

#include "koord/app/leader_election_flags.h"
#include "koord/app/role_app.h"

namespace koord::roles::descheduler {

struct DeschedulerOptions {
  app::CommonOptions common;
  app::LeaderElectionOptions leader_election;
  std::string config;
  std::string write_config_to;
  std::string address = "0.0.0.0";
  int port = 10251;
};

void registerFlags(FlagSet& flags, DeschedulerOptions& o, const FeatureGate& gates);
void validate(const DeschedulerOptions& o);

}  // namespace koord::roles::descheduler
