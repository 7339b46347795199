// `koord scheduler --config` as a child process of a cluster test: its ops port, a SIGKILL for
// crash cases, and, when a REQUIRE fails while it runs, the tail of its stderr on the test's.
#pragma once

#include <signal.h>

#include <chrono>
#include <cstddef>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "subprocess.h"

namespace koord::testing {

/// The start of a cluster test scheduler's KubeSchedulerConfiguration (`version`, v1 unless
/// told): the test cluster's kubeconfig, client limits no test reaches, and a short lease in
/// `lease_ns` so that a killed leader's successor takes over within seconds. The caller adds
/// `profiles:`.
inline std::string schedulerConfigHeader(const std::string& lease_ns,
                                         const std::string& version = "v1") {
  const auto env = readClusterEnv();
  return "apiVersion: kubescheduler.config.k8s.io/" + version +
         "\n"
         "kind: KubeSchedulerConfiguration\n"
         "clientConnection:\n"
         "  kubeconfig: " +
         needEnv(env, "KOORD_KUBECONFIG") +
         "\n"
         "  qps: 500\n"
         "  burst: 1000\n"
         "leaderElection:\n"
         "  leaderElect: true\n"
         "  leaseDuration: 8s\n"
         "  renewDeadline: 6s\n"
         "  retryPeriod: 2s\n"
         "  resourceName: koord-scheduler\n"
         "  resourceNamespace: " +
         lease_ns + "\n";
}

/// The holder of the koord-scheduler Lease in `ns`; "" while there is none.
inline std::string schedulerLeaseHolder(kube::RestClient& api, const std::string& ns) {
  auto l = api.getSync(named(resources::kLeases, "koord-scheduler", ns));
  return l ? str(*l, {"spec", "holderIdentity"}) : "";
}

struct SchedulerProcess {
  int port = freeLoopbackPort();
  std::unique_ptr<Subprocess> process;

  explicit SchedulerProcess(const std::string& config_path) {
    process = std::make_unique<Subprocess>(std::vector<std::string>{
        koordBinary(), "scheduler", "--config=" + config_path, "--address=127.0.0.1",
        "--port=" + std::to_string(port), "--secure-port=0", "-v=4"});
  }
  SchedulerProcess(const SchedulerProcess&) = delete;
  SchedulerProcess& operator=(const SchedulerProcess&) = delete;

  /// SIGKILL: no lease released, no write finished, as a crashed or evicted scheduler leaves it.
  void kill() {
    process->signal(SIGKILL);
    (void)process->wait(std::chrono::seconds(10));
  }

  // A failed REQUIRE unwinds through here: what the scheduler logged is what explains it (an
  // INFO would hold only what it had written when the test began).
  ~SchedulerProcess() {
    if (std::uncaught_exceptions() == 0)
      return;
    const bool alive = process->running();
    std::string err = process->stderrSoFar();
    constexpr std::size_t kTail = 48 * 1024;
    if (err.size() > kTail)
      err = "...\n" + err.substr(err.size() - kTail);
    std::cerr << "scheduler on port " << port << (alive ? " still running" : " exited")
              << "; its stderr:\n"
              << err << "\n";
  }
};

}  // namespace koord::testing
