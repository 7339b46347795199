// Calls a hook server's RuntimeHookService for one hook type, asynchronously and with a short
// deadline, so that a dead or hung server costs a CRI call at most that long.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "hooks/cri_hook_translation.h"
#include "hooks/hook_server_registry.h"
#include "koordinator/runtime/v1alpha1/api.pb.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace grpc {
class Status;
}  // namespace grpc

namespace koord::h2 {
class GrpcUnaryClient;
}  // namespace koord::h2

namespace koord::roles::runtime_proxy {

/// The hook calls are made on the relay's thread, over koord's own gRPC client (no gRPC threads
/// in between): a hook's answer wakes the relay directly, which is what keeps a hooked call's
/// added time near one round trip to the hook server.
class HookDispatcher {
 public:
  HookDispatcher(const HookServerRegistry& registry, std::chrono::milliseconds timeout);
  ~HookDispatcher();

  /// The io_context whose thread makes every call() and runs every `done` (the relay's). Null:
  /// the connections to hook servers are closed (calls in flight fail UNAVAILABLE) and later
  /// calls fail at once. Called before that thread starts, or on it.
  void runOn(boost::asio::io_context* io);

  /// The server a hook of `type` goes to: the first registration, in file-name order, that
  /// declares it (Koordinator's rule); nullopt when none does.
  std::optional<HookServer> serverFor(RuntimeHookType type) const;

  /// `done` runs once, on the io_context's thread (possibly before call() returns when no call
  /// can be made), with the call's status and (when OK) the answer.
  using PodDone = std::function<void(const grpc::Status&, const hookapi::PodSandboxHookResponse&)>;
  using ContainerDone =
      std::function<void(const grpc::Status&, const hookapi::ContainerResourceHookResponse&)>;
  void call(RuntimeHookType type, const HookServer& server,
            const hookapi::PodSandboxHookRequest& request, PodDone done);
  void call(RuntimeHookType type, const HookServer& server,
            const hookapi::ContainerResourceHookRequest& request, ContainerDone done);

  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  template <typename Response, typename Done>
  void callMethod(RuntimeHookType type, const HookServer& server,
                  const google::protobuf::MessageLite& request, Done done);

  const HookServerRegistry& registry_;
  std::chrono::milliseconds timeout_;
  boost::asio::io_context* io_ = nullptr;
  std::map<std::string, std::unique_ptr<h2::GrpcUnaryClient>> clients_;
};

}  // namespace koord::roles::runtime_proxy
