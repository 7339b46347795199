// The noderesource controller's reconcile: the BatchResource calculation over the informers'
// node, pods and NodeMetric, written to node.status when Koordinator's sync rules say so.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "controller/controller.h"
#include "koord/core/metrics.h"

namespace koord::kube {
class RestClient;
}

namespace koord::roles::manager {

struct ManagerInformers;
class SloConfigSource;

class NodeResourceReconciler {
 public:
  NodeResourceReconciler(kube::RestClient& client, ManagerInformers& informers,
                         SloConfigSource& config, metrics::Registry& registry);

  ReconcileResult reconcile(const std::string& node_name);

 private:
  kube::RestClient& client_;
  ManagerInformers& informers_;
  SloConfigSource& config_;
  metrics::CounterFamily& writes_;
  std::mutex mu_;
  // When this process last wrote each node: updateTimeThresholdSeconds counts from there, and
  // a new leader (empty map) writes every node once, as Koordinator's does.
  std::map<std::string, std::chrono::system_clock::time_point> last_write_;
};

}  // namespace koord::roles::manager
