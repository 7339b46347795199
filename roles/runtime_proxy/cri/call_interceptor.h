// The seam between forwarding and Koordinator's hooks: a hooked CRI call's request may be
// rewritten before it reaches the runtime, and its outcome is reported after kubelet has it.
#pragma once

#include <functional>

#include "cri/cri_method.h"

namespace grpc {
class ByteBuffer;
class Status;
}  // namespace grpc

namespace koord::roles::runtime_proxy {

class CallInterceptor {
 public:
  virtual ~CallInterceptor() = default;
  /// Runs the call's pre hooks. `request` (the serialized CRI request) may be replaced; `done`
  /// is called exactly once, on any thread: OK forwards `request`, anything else is kubelet's
  /// answer and nothing is forwarded.
  virtual void before(const CriMethod& method, grpc::ByteBuffer& request,
                      std::function<void(const grpc::Status&)> done) = 0;
  /// Runs the call's post hooks once the runtime answered OK and kubelet has the answer;
  /// `request` is what was forwarded.
  virtual void after(const CriMethod& method, const grpc::ByteBuffer& request,
                     const grpc::ByteBuffer& response) = 0;
};

}  // namespace koord::roles::runtime_proxy
