// What the koordlet knows about its node: the Node, NodeSLO and NodeMetric from the API server,
// and the node's pods from the kubelet (the API server as fallback), as immutable snapshots.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "koord/apis/node_metric.h"
#include "statesinformer/kubelet_stub.h"
#include "statesinformer/node_info.h"
#include "statesinformer/pod_meta.h"
#include "statesinformer/states_snapshot.h"

namespace boost::asio {
class io_context;
}
namespace koord::kube {
class RestClient;
}

namespace koord::roles::koordlet {

struct StatesInformerOptions {
  std::string node_name;
  std::chrono::milliseconds kubelet_sync_interval{10000};
  std::chrono::milliseconds kubelet_sync_timeout{3000};
  /// false (Koordinator's default): HTTPS on the Node's kubeletEndpoint port with the API server
  /// credentials (bearer token, client certificate), the kubelet's certificate checked as
  /// kubelet_tls says. true: plain HTTP on kubelet_read_only_port, nothing checked.
  bool kubelet_insecure_tls = false;
  int kubelet_read_only_port = 10255;
  KubeletTls kubelet_tls;
  std::string kubelet_preferred_address_type = "InternalIP";
  /// Read the kubelet's /configz (Koordinator's -disable-query-kubelet-config=false), over the
  /// secure port only (the read-only port does not serve it).
  bool query_kubelet_config = true;
  /// How often it is read again once read.
  std::chrono::milliseconds kubelet_config_interval{60000};
};

/// Where the last pod list came from, for logs and metrics.
enum class PodSource { kNone, kKubelet, kApiServer };

class StatesInformer {
 public:
  StatesInformer(kube::RestClient& client, boost::asio::io_context& io,
                 StatesInformerOptions options);
  ~StatesInformer();
  StatesInformer(const StatesInformer&) = delete;
  StatesInformer& operator=(const StatesInformer&) = delete;

  void start();
  void stop();

  /// Node seen and pods listed at least once: before that nothing may act on the node.
  bool hasSynced() const;

  /// Snapshots; null until first seen (NodeSLO and NodeMetric stay null when absent).
  std::shared_ptr<const NodeInfo> node() const;
  std::shared_ptr<const NodeSLOInfo> nodeSLO() const;
  std::shared_ptr<const apis::NodeMetric> nodeMetric() const;
  /// The node's pods from the last successful sync; never a half-decoded list.
  std::shared_ptr<const std::vector<PodMeta>> pods() const;
  PodSource podSource() const;
  /// The kubelet's configuration from its /configz; null until read or when not queried.
  std::shared_ptr<const KubeletConfig> kubeletConfig() const;
  /// All of the above at once.
  StatesSnapshot snapshot() const;
  /// When pods() was last refreshed (steady clock).
  std::chrono::steady_clock::time_point podsUpdated() const;

  /// Called on the io thread after each pod sync that changed the set of pods or containers.
  void onPodsChanged(std::function<void()> fn);
  /// Asks for a pod sync now (a runtime hook saw a new pod, say), not waiting for the interval.
  void syncPodsSoon();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace koord::roles::koordlet
