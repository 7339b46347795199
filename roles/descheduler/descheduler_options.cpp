#include "descheduler_options.h"

#include <fmt/format.h>

namespace koord::roles::descheduler {

void registerFlags(FlagSet& flags, DeschedulerOptions& o, const FeatureGate& gates) {
  app::addLoggingFlags(flags, o.common);
  app::addFeatureGatesFlag(flags, o.common, gates);
  app::addLeaderElectionFlags(flags, o.leader_election, "koord-descheduler", "koordinator-system");
  flags.addString("config", &o.config, "",
                  "The path to the DeschedulerConfiguration file (its clientConnection names the "
                  "kubeconfig; in-cluster config otherwise).");
  flags.addString("write-config-to", &o.write_config_to, "",
                  "If set, write the configuration values to this file and exit.");
  flags.addString("address", &o.address, "0.0.0.0",
                  "The IP address on which to serve /healthz and /metrics (insecure).");
  flags.addInt("port", &o.port, 10251,
               "The port on which to serve /healthz and /metrics (insecure); 0 disables it.");
  app::addSecureServingFlags(flags, o.secure_serving, kDefaultSecurePort);
}

void validate(const DeschedulerOptions& o) {
  app::validateLeaderElection(o.leader_election);
  if (o.port < 0 || o.port > 65535)
    throw FlagError(fmt::format("--port={}: out of range", o.port));
  app::validateSecureServing(o.secure_serving);
}

}  // namespace koord::roles::descheduler
