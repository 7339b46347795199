// Publishes the node's Device object from the device-daemon's reports (-xpu-device-infos-dir) and
// the GPU vendor/model labels on the Node, every -node-topology-sync-interval (the Accelerators
// gate).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "koord/core/metrics.h"
#include "statesinformer/node_device.h"

namespace boost::asio {
class io_context;
}
namespace koord::kube {
class RestClient;
}

namespace koord::roles::koordlet {

class StatesInformer;

struct NodeDeviceReporterOptions {
  std::string node_name;
  std::filesystem::path device_infos_dir;
  std::chrono::milliseconds sync_interval{3000};
  NodeDeviceOptions devices;
};

class NodeDeviceReporter {
 public:
  NodeDeviceReporter(kube::RestClient& client, boost::asio::io_context& io, StatesInformer& states,
                     NodeDeviceReporterOptions options, metrics::Registry& registry);
  ~NodeDeviceReporter();
  NodeDeviceReporter(const NodeDeviceReporter&) = delete;
  NodeDeviceReporter& operator=(const NodeDeviceReporter&) = delete;

  void start();
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace koord::roles::koordlet
