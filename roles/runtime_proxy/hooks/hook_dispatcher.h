// Calls a hook server's RuntimeHookService for one hook type, asynchronously and with a short
// deadline, so that a dead or hung server costs a CRI call at most that long.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "hooks/cri_hook_translation.h"
#include "hooks/hook_server_registry.h"
#include "koordinator/runtime/v1alpha1/api.grpc.pb.h"

namespace koord::roles::runtime_proxy {

class HookDispatcher {
 public:
  HookDispatcher(const HookServerRegistry& registry, std::chrono::milliseconds timeout);
  ~HookDispatcher();

  /// The server a hook of `type` goes to: the first registration, in file-name order, that
  /// declares it (Koordinator's rule); nullopt when none does.
  std::optional<HookServer> serverFor(RuntimeHookType type) const;

  /// `done` runs once, on a gRPC thread, with the call's status and (when OK) the answer.
  using PodDone = std::function<void(const grpc::Status&, const hookapi::PodSandboxHookResponse&)>;
  using ContainerDone =
      std::function<void(const grpc::Status&, const hookapi::ContainerResourceHookResponse&)>;
  void call(RuntimeHookType type, const HookServer& server,
            const hookapi::PodSandboxHookRequest& request, PodDone done);
  void call(RuntimeHookType type, const HookServer& server,
            const hookapi::ContainerResourceHookRequest& request, ContainerDone done);

  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  hookapi::RuntimeHookService::Stub& stubFor(const std::string& endpoint);

  const HookServerRegistry& registry_;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<hookapi::RuntimeHookService::Stub>> stubs_;
};

}  // namespace koord::roles::runtime_proxy
