// Keeps the node's NodeResourceTopology (node_topology.h) on the API server, created or patched,
// every -node-topology-sync-interval and when pods change (NodeTopologyReport gate).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "koord/apis/node_resource_topology.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/core/metrics.h"
#include "statesinformer/node_topology.h"
#include "statesinformer/states_snapshot.h"

namespace boost::asio {
class io_context;
}
namespace koord::kube {
class RestClient;
}

namespace koord::roles::koordlet {

struct NodeTopologyReporterOptions {
  std::string node_name;
  std::filesystem::path sys_root = "/sys";
  std::filesystem::path proc_root = "/proc";
  std::filesystem::path sys_fs_root = "/sys/fs";
  /// Where the kubelet keeps cpu_manager_state, read when kubelet_policy is static.
  std::filesystem::path var_lib_kubelet_dir = "/var/lib/kubelet";
  std::chrono::milliseconds sync_interval{3000};
  /// The HugePageReport gate: hugepages come out of the zones' memory.
  bool hugepages = false;
  /// The kubelet's CPU manager and topology policies where /configz is not queried
  /// (-disable-query-kubelet-config, or the read-only port); a queried /configz overrides both.
  apis::KubeletCPUManagerPolicy kubelet_policy;
  std::string topology_policy = std::string(apis::kTopologyPolicyNone);
  /// How long to wait before asking again whether the CRD is installed.
  std::chrono::milliseconds crd_retry{60000};
};

/// Created when missing, patched when what the koordlet computes differs from it; without the
/// CRD it says so once and asks again after crd_retry. Runs on the io_context's one thread.
class NodeTopologyReporter {
 public:
  /// `snapshot` gives the states informer's view; nothing is written before it is synced.
  /// `topology` must outlive the reporter.
  NodeTopologyReporter(kube::RestClient& client, boost::asio::io_context& io,
                       std::function<StatesSnapshot()> snapshot,
                       const cgroup::CpuTopology& topology, NodeTopologyReporterOptions options,
                       metrics::Registry& registry);
  ~NodeTopologyReporter();
  NodeTopologyReporter(const NodeTopologyReporter&) = delete;
  NodeTopologyReporter& operator=(const NodeTopologyReporter&) = delete;

  void start();
  void stop();

  /// For StatesInformer::onPodsChanged: a round as soon as the current one is done. Safe to call
  /// after the reporter is gone (it holds the reporter weakly).
  std::function<void()> podsChangedHandler() const;

  /// The status last written or found on the API server; null before that.
  std::shared_ptr<const NodeTopologyStatus> reported() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace koord::roles::koordlet
