// The seam between forwarding and Koordinator's hooks: a hooked CRI call's request may be
// rewritten before it reaches the runtime, and its outcome is reported before kubelet has it.
#pragma once

#include <any>
#include <functional>
#include <string>

#include "cri/cri_method.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace grpc {
class Status;
}  // namespace grpc

namespace koord::roles::runtime_proxy {

class CallInterceptor {
 public:
  virtual ~CallInterceptor() = default;
  /// The relay's io_context, on whose thread before() and after() are called and `done` may be
  /// called too: given before the first call, and null (on that thread) once the relay stops.
  virtual void attach(boost::asio::io_context* io) { (void)io; }
  /// Runs the call's pre hooks. `request` (the serialized CRI request) may be replaced; `done`
  /// is called exactly once, on any thread: OK forwards `request`, anything else is kubelet's
  /// answer and nothing is forwarded. `state` is the call's own, handed to after(): what the
  /// post hooks need is taken when the call begins, since another call's after() (a removal's)
  /// may run before this one's.
  virtual void before(const CriMethod& method, std::string& request, std::any& state,
                      std::function<void(const grpc::Status&)> done) = 0;
  /// Once the runtime answered OK, just before kubelet gets the answer: bookkeeping for later
  /// calls, and post hooks started (not waited for). `request` is what was forwarded.
  virtual void after(const CriMethod& method, const std::string& request,
                     const std::string& response, std::any& state) = 0;
};

}  // namespace koord::roles::runtime_proxy
