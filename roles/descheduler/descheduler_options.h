// koord-descheduler's command line (cmd/koord-descheduler): --config and --write-config-to,
// leader election with the koord-descheduler Lease in koordinator-system, secure serving
// (--bind-address/--secure-port 10258) and the insecure --address/--port (10251).
#pragma once

#include <string>

#include "koord/app/leader_election_flags.h"
#include "koord/app/role_app.h"
#include "koord/app/secure_serving.h"

namespace koord::roles::descheduler {

struct DeschedulerOptions {
  app::CommonOptions common;
  app::LeaderElectionOptions leader_election;
  std::string config;
  std::string write_config_to;
  std::string address = "0.0.0.0";
  int port = 10251;
  app::SecureServingOptions secure_serving;
};

/// Koordinator's DefaultDeschedulerPort: its secure port.
inline constexpr int kDefaultSecurePort = 10258;

void registerFlags(FlagSet& flags, DeschedulerOptions& o, const FeatureGate& gates);
void validate(const DeschedulerOptions& o);

}  // namespace koord::roles::descheduler
