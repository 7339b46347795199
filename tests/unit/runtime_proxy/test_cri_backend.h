// A small CRI server for the proxy's tests, on real unix sockets: answers that show what it
// received (method, metadata, deadline), an error, a server stream, and a separate image socket.
#pragma once

#include <grpcpp/server.h>

#include <atomic>
#include <memory>
#include <string>

namespace proxy_test {

/// A fresh directory under the temp dir, removed with the object.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Keeps gRPC's callback machinery (the completion queue and threads that run callback-API
/// reactions) alive for the whole test process, as a long-running proxy does. Without it each
/// test starts and stops it; gRPC 1.51 then sometimes frees its queue twice (ASan double-free
/// in grpc_cq_internal_unref on its polling threads, about 1 run in 50).
void holdCallbackMachinery();

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
