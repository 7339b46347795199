#include "scheduler_options.h"

#include <fmt/format.h>

namespace koord::roles::scheduler {

void registerFlags(FlagSet& flags, SchedulerOptions& o, const FeatureGate& gates) {
  app::addLoggingFlags(flags, o.common);
  app::addFeatureGatesFlag(flags, o.common, gates);
  app::addLeaderElectionFlags(flags, o.leader_election, "kube-scheduler", "kube-system");
  flags.addString("config", &o.config, "", "The path to the configuration file.");
  flags.addString("kubeconfig", &o.kubeconfig, "",
                  "Path to kubeconfig file with authorization and master location information "
                  "(ignored when --config sets clientConnection.kubeconfig).");
  flags.addString("master", &o.master, "",
                  "The address of the Kubernetes API server (overrides any value in kubeconfig).");
  flags.addDouble("kube-api-qps", &o.kube_api_qps, 50,
                  "QPS to use while talking with the API server.");
  flags.addInt("kube-api-burst", &o.kube_api_burst, 100,
               "Burst to use while talking with the API server.");
  flags.addString("address", &o.address, "0.0.0.0",
                  "The IP address on which to serve /healthz and /metrics (insecure).");
  flags.addInt("port", &o.port, 10251,
               "The port on which to serve /healthz and /metrics (insecure); 0 disables it.");
}

void validate(const SchedulerOptions& o) {
  app::validateLeaderElection(o.leader_election);
  if (o.port < 0 || o.port > 65535)
    throw FlagError(fmt::format("--port={}: out of range", o.port));
  if (o.kube_api_qps <= 0 || o.kube_api_burst <= 0) {
    throw FlagError("--kube-api-qps and --kube-api-burst must be positive");
  }
}

}  // namespace koord::roles::scheduler
