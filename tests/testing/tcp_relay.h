// A loopback TCP relay a test puts between a client and a real server, to cut the network path
// on demand (connections dropped, new ones refused) and restore it, without stopping the server.
#pragma once

#include <atomic>
#include <memory>
#include <string>

namespace koord::testing {

/// Forwards 127.0.0.1:port() to `target_host`:`target_port` byte for byte (TLS passes through).
/// Its own thread; the destructor stops it and closes everything.
class TcpRelay {
 public:
  TcpRelay(std::string target_host, int target_port);
  ~TcpRelay();
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  int port() const;
  /// Closes every relayed connection (done when it returns) and closes new ones as soon as they
  /// are accepted.
  void cut();
  void restore();
  /// Connections accepted and relayed so far.
  int connectionsRelayed() const;
  /// Connections accepted and closed at once, because the path was cut (or the target refused):
  /// how often a client tried to get through.
  int connectionsRefused() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace koord::testing
