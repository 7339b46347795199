// Koordinator's hooks on CRI calls: the pre hook's answer merged into the request before the
// runtime sees it, with the registration's failure policy deciding what a failed hook does.
#pragma once

#include <string>

#include "cri/call_interceptor.h"

namespace koord::roles::runtime_proxy {

class HookDispatcher;

class HookInterceptor final : public CallInterceptor {
 public:
  /// Pods labelled `skip_key`=`skip_value` (--runtime-hook-server-key/val) get no hooks.
  HookInterceptor(HookDispatcher& dispatcher, std::string skip_key, std::string skip_value);

  void before(const CriMethod& method, grpc::ByteBuffer& request,
              std::function<void(const grpc::Status&)> done) override;
  void after(const CriMethod& method, const grpc::ByteBuffer& request,
             const grpc::ByteBuffer& response) override;

 private:
  HookDispatcher& dispatcher_;
  std::string skip_key_;
  std::string skip_value_;
};

}  // namespace koord::roles::runtime_proxy
