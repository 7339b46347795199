// A gRPC server for unary methods on a unix socket, one thread: each method a function from the
// request's bytes to the response's, answered on the thread that read the request.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "koord/h2/grpc_wire.h"

namespace koord::h2 {

class GrpcUnaryServer {
 public:
  /// Fills `response` (a serialized message) and returns OK, or returns the call's error.
  /// Runs on the server's thread: it must not block.
  using Handler = std::function<GrpcStatus(std::string_view request, std::string& response)>;

  GrpcUnaryServer();
  ~GrpcUnaryServer();
  GrpcUnaryServer(const GrpcUnaryServer&) = delete;
  GrpcUnaryServer& operator=(const GrpcUnaryServer&) = delete;

  /// `path` as gRPC spells it: "/package.Service/Method". Before start() only.
  void addMethod(std::string path, Handler handler);

  /// Listens on `socket_path` (the caller has made its directory and checked that nobody
  /// serves a socket there, which is then replaced), created with `mode` whatever the umask:
  /// 0600 by default, as a hook server is dialled by root's runtime-proxy only. Serves from a
  /// thread of its own. Throws std::system_error when it cannot listen.
  void start(const std::string& socket_path, unsigned mode = 0600);
  /// Stops listening, closes every connection and joins the thread. Safe to call twice.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace koord::h2
