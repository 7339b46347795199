// Koordinator's hooks on CRI calls: the pre hook's answer merged into the request before the
// runtime sees it, with the registration's failure policy deciding what a failed hook does.
#pragma once

#include <functional>
#include <string>

#include "hooks/hook_server_registry.h"
#include "hooks/skip_label_policy.h"

#include "cri/call_interceptor.h"

namespace koord::roles::runtime_proxy {

class HookDispatcher;
class RuntimeObjectCache;

class HookInterceptor final : public CallInterceptor {
 public:
  /// Pods `skip` lets past get no hooks. `cache` keeps, per pod and container the proxy saw
  /// created, what their later calls' hooks are told (those calls name only an id). Both must
  /// outlive the interceptor.
  HookInterceptor(HookDispatcher& dispatcher, RuntimeObjectCache& cache, SkipLabelPolicy& skip);

  void attach(boost::asio::io_context* io) override;
  void before(const CriMethod& method, std::string& request, std::any& state,
              std::function<void(const grpc::Status&)> done) override;
  void after(const CriMethod& method, const std::string& request, const std::string& response,
             std::any& state) override;

 private:
  void containerPreHook(const CriMethod& method, RuntimeHookType type, const HookServer& server,
                        const std::string& bytes, std::string& request,
                        std::function<void(const grpc::Status&)> done);
  /// What a Start/Stop call's post hook will be told, taken from the cache as the call begins.
  void keepForPostHook(const CriMethod& method, const std::string& request, std::any& state);
  void postHook(const CriMethod& method, const std::string& request, const std::string& response,
                std::any& state);

  HookDispatcher& dispatcher_;
  RuntimeObjectCache& cache_;
  SkipLabelPolicy& skip_;
};

}  // namespace koord::roles::runtime_proxy
