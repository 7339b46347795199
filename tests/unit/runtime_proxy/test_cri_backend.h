// A small CRI server for the proxy's tests, on real unix sockets: answers that show what it
// received (method, metadata, deadline), an error, a server stream, and a separate image socket.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/server.h>

#include <atomic>
#include <memory>
#include <string>

#include "cri/cri_proxy_server.h"
#include "grpc_callback_hold.h"
#include "temp_tree.h"

namespace proxy_test {

/// The sockets of one test: the runtime's, the image service's, and the proxy's (in a
/// directory of its own, which the proxy creates).
struct Sockets {
  Sockets() { koord::testing::holdCallbackMachinery(); }
  koord::testing::TempTree dir{"koord-proxy"};
  std::string runtime = dir.path("containerd.sock").string();
  std::string image = dir.path("image.sock").string();
  std::string proxy = dir.path("proxy/runtimeproxy.sock").string();

  koord::roles::runtime_proxy::CriProxyConfig config() const { return {proxy, runtime, image}; }
};

/// A client channel to `socket` taking 64 MiB answers. gRPC C++ shares one connection between
/// channels to the same target unless `own_connection`.
std::shared_ptr<grpc::Channel> dial(const std::string& socket, bool own_connection = false);

class TestCriBackend {
 public:
  /// Serves runtime.v1 and runtime.v1alpha2 RuntimeService on `runtime_socket` and both
  /// ImageServices on `image_socket`.
  TestCriBackend(const std::string& runtime_socket, const std::string& image_socket);
  ~TestCriBackend();

  /// Calls the runtime socket has answered.
  int runtimeCalls() const;
  /// cpu_shares of the last UpdateContainerResources the runtime got (v1), -1 before any.
  long lastUpdatedShares() const;

 private:
  struct Services;
  std::unique_ptr<Services> services_;
  std::unique_ptr<grpc::Server> runtime_;
  std::unique_ptr<grpc::Server> image_;
};

}  // namespace proxy_test
