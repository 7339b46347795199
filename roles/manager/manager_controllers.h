// The leader's controllers (nodemetric, nodeslo, noderesource, quotaprofile) over the shared
// informers, and the informer handlers that feed their queues.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "noderesource/device_resource.h"

namespace koord::kube {
class RestClient;
}
namespace koord::metrics {
class Registry;
}

namespace koord::roles::manager {

struct ManagerInformers;
class SloConfigSource;
class Controller;

class ManagerControllers {
 public:
  /// `enabled` holds the names --controllers resolved to; unknown ones are ignored here (the
  /// flag check refused them already). `resource_plugins`: the noderesource device plugins that
  /// --noderesource-plugins turns on.
  ManagerControllers(kube::RestClient& client, ManagerInformers& informers, SloConfigSource& config,
                     const std::vector<std::string>& enabled, metrics::Registry& registry,
                     noderesource::NodeResourcePlugins resource_plugins = {});
  ~ManagerControllers();
  ManagerControllers(const ManagerControllers&) = delete;
  ManagerControllers& operator=(const ManagerControllers&) = delete;

  /// Registers the informer handlers; call before the informers start. Keys queue up until
  /// start().
  void watch();
  /// Starts the workers and queues every node once (a new leader trusts nothing it did not see).
  void start();
  void stop();
  /// Names of the controllers that run.
  std::vector<std::string> names() const;

 private:
  void enqueueAllNodes();

  kube::RestClient& client_;
  ManagerInformers& informers_;
  SloConfigSource& config_;
  std::vector<std::unique_ptr<Controller>> controllers_;
  Controller* nodemetric_ = nullptr;
  Controller* nodeslo_ = nullptr;
  Controller* noderesource_ = nullptr;
  Controller* quotaprofile_ = nullptr;
};

}  // namespace koord::roles::manager
