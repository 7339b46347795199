#include "scheduler_options.h"

#include <array>
#include <string_view>

#include <fmt/format.h>

#include "koord/core/log.h"

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
  app::addSecureServingFlags(flags, o.secure_serving, kDefaultSecurePort);
  flags.addString("authentication-kubeconfig", &o.authentication_kubeconfig, "",
                  "Accepted for kube-scheduler's manifests; no effect in koord.");
  flags.addString("authorization-kubeconfig", &o.authorization_kubeconfig, "",
                  "Accepted for kube-scheduler's manifests; no effect in koord.");
  flags.addBool("authentication-skip-lookup", &o.authentication_skip_lookup, false,
                "Accepted for kube-scheduler's manifests; no effect in koord.");
  flags.addBool("authentication-tolerate-lookup-failure", &o.authentication_tolerate_lookup_failure,
                true, "Accepted for kube-scheduler's manifests; no effect in koord.");
  flags.addStringList("authorization-always-allow-paths", &o.authorization_always_allow_paths,
                      {"/healthz", "/readyz", "/livez"},
                      "Accepted for kube-scheduler's manifests; no effect in koord.");
  flags.addString("client-ca-file", &o.client_ca_file, "",
                  "Accepted for kube-scheduler's manifests; no effect in koord.");
  flags.addBool("profiling", &o.profiling, true,
                "Accepted for kube-scheduler's manifests; no effect in koord (no pprof).");
  flags.addBool("contention-profiling", &o.contention_profiling, true,
                "Accepted for kube-scheduler's manifests; no effect in koord (no pprof).");
}

void warnFlagsWithoutEffect(const FlagSet& flags) {
  static constexpr std::array<std::string_view, 8> kWithoutEffect = {
      "authentication-kubeconfig",
      "authorization-kubeconfig",
      "authentication-skip-lookup",
      "authentication-tolerate-lookup-failure",
      "authorization-always-allow-paths",
      "client-ca-file",
      "profiling",
      "contention-profiling",
  };
  for (std::string_view name : kWithoutEffect) {
    if (flags.changed(name))
      KOORD_LOG_WARNING("scheduler: flag --{} has no effect in koord", name);
  }
  app::warnSecureServingWithoutEffect(flags, "scheduler");
}

void validate(const SchedulerOptions& o) {
  app::validateLeaderElection(o.leader_election);
  if (o.port < 0 || o.port > 65535)
    throw FlagError(fmt::format("--port={}: out of range", o.port));
  if (o.kube_api_qps <= 0 || o.kube_api_burst <= 0) {
    throw FlagError("--kube-api-qps and --kube-api-burst must be positive");
  }
  app::validateSecureServing(o.secure_serving);
}

}  // namespace koord::roles::scheduler
