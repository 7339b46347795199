// koord runtime-proxy's gRPC server: listens where kubelet's --container-runtime-endpoint
// points and forwards every call to the runtime, through the hooks for the hooked ones.
#pragma once

#include <chrono>
#include <memory>
#include <string>

namespace koord::roles::runtime_proxy {

class CallInterceptor;

struct CriProxyConfig {
  /// The socket kubelet dials (a path, or unix://path).
  std::string listen_endpoint;
  /// containerd's CRI socket(s); image empty: the runtime's.
  std::string runtime_endpoint;
  std::string image_endpoint;
};

class CriProxyServer {
 public:
  /// `interceptor` may be null (plain forwarding) and must outlive the server.
  CriProxyServer(CriProxyConfig config, CallInterceptor* interceptor);
  ~CriProxyServer();
  CriProxyServer(const CriProxyServer&) = delete;
  CriProxyServer& operator=(const CriProxyServer&) = delete;

  /// Listens: creates the socket's directory, replaces a stale socket file, refuses one that
  /// another process still serves. Throws app::ConfigError when it cannot listen.
  void start();
  /// Stops accepting calls and waits up to `grace` for those in flight, then cancels them.
  void shutdown(std::chrono::milliseconds grace);
  /// The socket's path.
  const std::string& socketPath() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace koord::roles::runtime_proxy
