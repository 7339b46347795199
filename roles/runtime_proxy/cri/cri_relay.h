// kubelet's CRI connections relayed to the runtime's socket frame by frame: HTTP/2 passes
// through as kubelet and containerd wrote it, except header blocks and hooked calls' messages.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <unordered_set>

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace koord::roles::runtime_proxy {

class CallInterceptor;
class RelayConnection;
struct HookWake;

/// What every relayed connection shares; lives as long as the relay's io_context and is only
/// touched on its thread, but for `active_calls`, which shutdown reads from another.
struct RelayShared {
  boost::asio::io_context& io;
  /// The runtime's and the image service's socket paths (often the same).
  std::string runtime_socket;
  std::string image_socket;
  /// May be null (plain forwarding); must outlive the relay.
  CallInterceptor* interceptor = nullptr;
  /// Calls kubelet started that have not ended, over all connections.
  std::atomic<std::size_t> active_calls{0};
  std::unordered_set<RelayConnection*> connections;
  /// How a hook's answer, given on the hook client's thread, comes back to the relay's.
  std::shared_ptr<HookWake> wake;

  RelayShared(boost::asio::io_context& io, std::string runtime_socket, std::string image_socket,
              CallInterceptor* interceptor);
  ~RelayShared();
  /// From then on hook answers that arrive are dropped (the io_context is going away).
  void detachWake();
};

/// Starts relaying an accepted kubelet connection (a connected unix socket's descriptor, taken
/// over). io thread only.
void relayKubeletConnection(RelayShared& shared, int fd);

/// Closes every relayed connection, in-flight calls included. io thread only.
void closeRelayConnections(RelayShared& shared);

}  // namespace koord::roles::runtime_proxy
