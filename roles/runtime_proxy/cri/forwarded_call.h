// The proxied calls as state machines on the proxy's one completion queue: unary calls are read
// whole, passed through the hooks when hooked, and forwarded; anything else is pumped both ways.
#pragma once

#include <atomic>

namespace grpc {
class AsyncGenericService;
class ServerCompletionQueue;
}  // namespace grpc

namespace koord::roles::runtime_proxy {

class CallInterceptor;
class CriBackend;

/// What every tag on the proxy's completion queue is: the thread draining the queue calls
/// complete() with the event's `ok`.
class CompletionTag {
 public:
  virtual void complete(bool ok) = 0;

 protected:
  ~CompletionTag() = default;
};

/// What the calls share; outlives them all. `live` counts calls not yet deleted (including the
/// one waiting to be accepted), so that shutdown can wait for the last one before it closes the
/// queue: an operation started on a closed queue aborts the process.
struct ForwardingContext {
  grpc::AsyncGenericService& service;
  grpc::ServerCompletionQueue& queue;
  CriBackend& backend;
  CallInterceptor* interceptor;  // may be null; consulted only for hooked unary calls
  std::atomic<int> live{0};
};

/// Waits for the next call kubelet makes; each call, once accepted, waits for the one after it.
/// Everything runs on the thread draining `context.queue`, except an interceptor's `done`,
/// which only wakes the call on the queue.
void acceptNextCall(ForwardingContext& context);

}  // namespace koord::roles::runtime_proxy
