// The koordlet daemon (Koordinator's daemon): owns the states informer, metric cache, metrics
// advisor, reporters, QoS manager and runtime hooks, and starts and stops them in order.
#pragma once

#include <memory>

#include "koord/cgroup/cpu_topology.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/kube/kubeconfig.h"

namespace koord {
class FeatureGate;
class FlagSet;
}  // namespace koord
namespace koord::app {
class RoleApp;
}

namespace koord::roles::koordlet {

struct KoordletOptions;

/// Where the koordlet runs, resolved before its modules are built (koordlet_startup.h).
struct KoordletEnvironment {
  cgroup::CgroupRoot cgroup_root;
  cgroup::CpuTopology topology;
  kube::RestConfig api_server;
};

class Koordlet {
 public:
  /// Builds every module on `role`'s reactor and starts the runtime hook server; nothing else
  /// runs before start(). `options`, `gates` and `flags` are read here only.
  Koordlet(app::RoleApp& role, const KoordletOptions& options, const FeatureGate& gates,
           const FlagSet& flags, KoordletEnvironment environment);
  ~Koordlet();
  Koordlet(const Koordlet&) = delete;
  Koordlet& operator=(const Koordlet&) = delete;

  /// States informer, metrics advisor, metric cache gc, reporters, QoS strategies, runtime hook
  /// reconcilers, readiness: in that order.
  void start();
  /// Readiness first, then the loops in start()'s order, the states informer and the evictor;
  /// idle connections to the API server are closed last.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace koord::roles::koordlet
