// A gRPC client for unary calls over one HTTP/2 connection to a unix socket, run on the caller's
// io_context thread: no threads of its own, so an answer costs the caller one wake-up.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "koord/h2/grpc_wire.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace koord::h2 {

/// Every member and every `done` runs on `io`'s thread. The connection is made on the first call
/// and again on the first call after it broke (a restarted server is reached at once; there is
/// no backoff: a unix socket that is not there fails in microseconds).
class GrpcUnaryClient {
 public:
  GrpcUnaryClient(boost::asio::io_context& io, std::string socket_path);
  ~GrpcUnaryClient();
  GrpcUnaryClient(const GrpcUnaryClient&) = delete;
  GrpcUnaryClient& operator=(const GrpcUnaryClient&) = delete;

  /// `done` is called exactly once, never from inside call(): with OK and the response message,
  /// or with the server's status, DEADLINE_EXCEEDED once `timeout` passed (the stream is then
  /// reset), or UNAVAILABLE when the connection could not be made or broke.
  using Done = std::function<void(const GrpcStatus&, std::string response)>;
  void call(std::string_view method_path, std::string_view request,
            std::chrono::milliseconds timeout, Done done);

  /// Ends the connection; calls in flight get UNAVAILABLE. Later calls connect again.
  void close();

  const std::string& socketPath() const { return socket_path_; }

 private:
  class Connection;
  boost::asio::io_context& io_;
  std::string socket_path_;
  std::shared_ptr<Connection> connection_;
};

}  // namespace koord::h2
