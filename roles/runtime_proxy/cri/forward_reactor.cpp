#include "cri/forward_reactor.h"

#include <grpcpp/client_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/client_callback.h>
#include <grpcpp/support/status.h>
#include <grpcpp/support/stub_options.h>

#include <any>
#include <atomic>
#include <mutex>
#include <string_view>

namespace koord::roles::runtime_proxy {

namespace {

// kubelet's deadline and metadata travel on; gRPC's own headers are set by the channel.
void prepareBackendContext(const grpc::GenericCallbackServerContext& from,
                           grpc::ClientContext& to) {
  to.set_deadline(from.deadline());
  for (const auto& [key, value] : from.client_metadata()) {
    const std::string_view k(key.data(), key.size());
    if (k.starts_with("grpc-") || k.starts_with(":") || k == "user-agent" || k == "te" ||
        k == "content-type" || k == "authority")
      continue;
    to.AddMetadata(std::string(k), std::string(value.data(), value.size()));
  }
}

// One unary call: kubelet's request, the hooks when the call is hooked, the runtime's answer.
class UnaryForward final : public grpc::ServerGenericBidiReactor {
 public:
  UnaryForward(grpc::GenericCallbackServerContext* context, const CriMethod& method,
               CriBackend& backend, CallInterceptor* interceptor)
      : context_(context),
        method_(method),
        stub_(backend.stubFor(method.service)),
        interceptor_(method.hooked != HookedCall::kNone ? interceptor : nullptr) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the call ended before its request"));
      return;
    }
    if (interceptor_ == nullptr) {
      forward();
      return;
    }
    interceptor_->before(method_, request_, state_, [this](const grpc::Status& s) {
      if (s.ok())
        forward();
      else
        Finish(s);
    });
  }

  void OnCancel() override { backend_context_.TryCancel(); }

  void OnDone() override { delete this; }

 private:
  void forward() {
    prepareBackendContext(*context_, backend_context_);
    stub_.UnaryCall(&backend_context_, context_->method(), grpc::StubOptions(), &request_,
                    &response_, [this](const grpc::Status& s) {
                      if (!s.ok()) {
                        Finish(s);
                        return;
                      }
                      // Before kubelet has the answer, so that its next call (a start right
                      // after a create) finds what this one left; post hooks are only started.
                      if (interceptor_ != nullptr)
                        interceptor_->after(method_, request_, response_, state_);
                      StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
                    });
  }

  grpc::GenericCallbackServerContext* context_;
  CriMethod method_;
  grpc::GenericStub& stub_;
  CallInterceptor* interceptor_;
  grpc::ClientContext backend_context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  std::any state_;
};

// Any other call: messages pumped one at a time each way, kubelet -> runtime ("up") and
// runtime -> kubelet ("down"). The backend call carries one hold per direction, so that it
// cannot end (and forbid new operations) while a direction may still start one; when the
// runtime ends its stream the up direction ends with it, so that the runtime's status reaches
// kubelet even if kubelet never half-closes.
class StreamForward final : public grpc::ServerGenericBidiReactor {
 public:
  StreamForward(grpc::GenericCallbackServerContext* context, const CriMethod& method,
                CriBackend& backend)
      : context_(context) {
    backend_.owner = this;
    prepareBackendContext(*context_, backend_context_);
    backend.stubFor(method.service)
        .PrepareBidiStreamingCall(&backend_context_, context_->method(), grpc::StubOptions(),
                                  &backend_);
    backend_.AddMultipleHolds(2);
    backend_.StartRead(&down_);
    backend_.StartCall();
    StartRead(&up_);
  }

  // kubelet -> proxy
  void OnReadDone(bool ok) override {
    std::lock_guard lock(mu_);
    if (up_closed_)
      return;
    if (ok) {
      up_writing_ = true;
      backend_.StartWrite(&up_);
      return;
    }
    up_closed_ = true;
    backend_.StartWritesDone();
    releaseUp();
  }

  // proxy -> kubelet
  void OnWriteDone(bool ok) override {
    std::lock_guard lock(mu_);
    if (ok) {
      backend_.StartRead(&down_);
      return;
    }
    backend_context_.TryCancel();  // kubelet is gone
    releaseDown();
  }

  void OnCancel() override { backend_context_.TryCancel(); }

  void OnDone() override { doneOnce(); }

 private:
  struct Backend final : grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
    StreamForward* owner = nullptr;
    void OnWriteDone(bool ok) override { owner->backendWriteDone(ok); }
    void OnReadDone(bool ok) override { owner->backendReadDone(ok); }
    void OnDone(const grpc::Status& s) override { owner->backendDone(s); }
  };

  void backendWriteDone(bool ok) {
    std::lock_guard lock(mu_);
    up_writing_ = false;
    if (!ok || up_closed_) {
      up_closed_ = true;
      releaseUp();
      return;
    }
    StartRead(&up_);
  }

  void backendReadDone(bool ok) {
    if (ok) {
      StartWrite(&down_);
      return;
    }
    std::lock_guard lock(mu_);
    releaseDown();
    up_closed_ = true;
    if (!up_writing_)
      releaseUp();
  }

  void backendDone(const grpc::Status& s) {
    Finish(s);
    doneOnce();
  }

  // Under mu_.
  void releaseUp() {
    if (up_held_) {
      up_held_ = false;
      backend_.RemoveHold();
    }
  }
  void releaseDown() {
    if (down_held_) {
      down_held_ = false;
      backend_.RemoveHold();
    }
  }

  // Both sides' OnDone have run: the server side's may come while the backend's is finishing.
  void doneOnce() {
    if (dones_.fetch_add(1) == 1)
      delete this;
  }

  grpc::GenericCallbackServerContext* context_;
  grpc::ClientContext backend_context_;
  Backend backend_;
  grpc::ByteBuffer up_;
  grpc::ByteBuffer down_;
  std::mutex mu_;
  bool up_closed_ = false;
  bool up_writing_ = false;
  bool up_held_ = true;
  bool down_held_ = true;
  std::atomic<int> dones_{0};
};

}  // namespace

grpc::ServerGenericBidiReactor* newForwardReactor(grpc::GenericCallbackServerContext* context,
                                                  const CriMethod& method, CriBackend& backend,
                                                  CallInterceptor* interceptor) {
  if (method.unary)
    return new UnaryForward(context, method, backend, interceptor);
  return new StreamForward(context, method, backend);
}

}  // namespace koord::roles::runtime_proxy
