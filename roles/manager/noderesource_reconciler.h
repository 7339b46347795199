// The noderesource controller's reconcile: the BatchResource calculation over the informers'
// node, pods and NodeMetric, and the device plugins' resources and GPU labels from the node's
// Device, written to the node when Koordinator's sync rules say so.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "controller/controller.h"
#include "koord/core/metrics.h"
#include "noderesource/batch_resource.h"
#include "noderesource/device_resource.h"
#include "noderesource/mid_resource.h"

namespace koord::kube {
class RestClient;
}

namespace koord::roles::manager {

struct ManagerInformers;
class SloConfigSource;

class NodeResourceReconciler {
 public:
  NodeResourceReconciler(kube::RestClient& client, ManagerInformers& informers,
                         SloConfigSource& config, metrics::Registry& registry,
                         noderesource::NodeResourcePlugins resource_plugins = {});

  ReconcileResult reconcile(const std::string& node_name);

 private:
  /// Patches the node's status with the batch, mid (when the plugin is on) and device
  /// resources; the failure to return, or nullopt once written.
  std::optional<ReconcileResult> writeStatus(const std::string& name,
                                             const noderesource::BatchResult& result,
                                             const noderesource::MidResult* mid,
                                             const noderesource::DeviceResourceSync& devices,
                                             const std::string& reason,
                                             std::chrono::system_clock::time_point now);

  kube::RestClient& client_;
  ManagerInformers& informers_;
  SloConfigSource& config_;
  noderesource::NodeResourcePlugins resource_plugins_;
  metrics::CounterFamily& writes_;
  std::mutex mu_;
  // When this process last wrote each node: updateTimeThresholdSeconds counts from there, and
  // a new leader (empty map) writes every node once, as Koordinator's does.
  std::map<std::string, std::chrono::system_clock::time_point> last_write_;
};

}  // namespace koord::roles::manager
