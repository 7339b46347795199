// What a koordlet QoS strategy is built from, for tests that build one from its table line and
// drive it with hand-made snapshots: cgroups on a temp tree, the API server a closed port.
#pragma once

#include <boost/asio/io_context.hpp>

#include <filesystem>
#include <memory>
#include <vector>

#include "koord/cgroup/cpu_topology.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/metrics.h"
#include "koord/kube/event_recorder.h"
#include "koord/kube/rest_client.h"
#include "koordlet_options.h"
#include "metriccache/metric_cache.h"
#include "qosmanager/evict/pod_evictor.h"
#include "qosmanager/framework/strategy.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::testing {

struct StrategyModules {
  explicit StrategyModules(const std::filesystem::path& cgroup_root)
      : cgroups({cgroup_root, cgroup::CgroupVersion::kV1, cgroup::CgroupDriver::kCgroupfs}) {}

  boost::asio::io_context io;
  cgroup::ResourceExecutor cgroups;
  cgroup::CpuTopology topology;
  metriccache::MetricCache cache;
  metrics::Registry registry;
  kube::RestClient client{io, [] {
                            kube::RestConfig config;
                            config.host = "https://127.0.0.1:1";
                            return config;
                          }()};
  kube::EventRecorder recorder{client, io, {"koordlet", "node-a"}};
  qosmanager::PodEvictor evictor{client, recorder, registry, "node-a"};
  KoordletOptions options;

  qosmanager::StrategyContext context() {
    return {.cache = cache,
            .cgroups = cgroups,
            .topology = topology,
            .evictor = evictor,
            .options = options,
            .metrics = registry};
  }
};

/// A synced snapshot of node-a with an empty NodeSLO (strategies fill in theirs) and no pods.
inline StatesSnapshot syncedSnapshot(std::shared_ptr<NodeSLOInfo> slo) {
  StatesSnapshot s;
  s.synced = true;
  s.node = std::make_shared<const NodeInfo>();
  slo->name = "node-a";
  s.node_slo = std::move(slo);
  s.pods = std::make_shared<const std::vector<PodMeta>>();
  return s;
}

}  // namespace koord::roles::koordlet::testing
