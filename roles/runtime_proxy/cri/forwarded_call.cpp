#include "cri/forwarded_call.h"

#include <grpcpp/alarm.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/status.h>

#include <any>
#include <memory>
#include <string_view>
#include <utility>

#include "cri/call_interceptor.h"
#include "cri/cri_backend.h"
#include "cri/cri_method.h"

namespace koord::roles::runtime_proxy {

namespace {

// kubelet's deadline and metadata travel on; gRPC's own headers are set by the channel.
void prepareBackendContext(const grpc::GenericServerContext& from, grpc::ClientContext& to) {
  to.set_deadline(from.deadline());
  for (const auto& [key, value] : from.client_metadata()) {
    const std::string_view k(key.data(), key.size());
    if (k.starts_with("grpc-") || k.starts_with(":") || k == "user-agent" || k == "te" ||
        k == "content-type" || k == "authority")
      continue;
    to.AddMetadata(std::string(k), std::string(value.data(), value.size()));
  }
}

// One call from acceptance to its last event. Only the queue's thread touches it (an
// interceptor's `done` sets hook_status_ and the alarm, then nothing else), so there are no
// locks; `pending_` counts the operations whose tags have not come back, and the call deletes
// itself when the last one does.
class ForwardedCall {
 public:
  explicit ForwardedCall(ForwardingContext& shared) : shared_(shared) {
    shared_.live.fetch_add(1);
    // Armed before the call is requested; it comes back only for a call that was accepted.
    server_context_.AsyncNotifyWhenDone(&done_tag_);
    shared_.service.RequestCall(&server_context_, &server_stream_, &shared_.queue, &shared_.queue,
                                arm(accept_tag_));
  }
  ~ForwardedCall() { shared_.live.fetch_sub(1); }
  ForwardedCall(const ForwardedCall&) = delete;
  ForwardedCall& operator=(const ForwardedCall&) = delete;

 private:
  using Handler = void (ForwardedCall::*)(bool);

  class Tag final : public CompletionTag {
   public:
    Tag(ForwardedCall* call, Handler handler) : call_(call), handler_(handler) {}
    void complete(bool ok) override { call_->run(handler_, ok); }

   private:
    ForwardedCall* call_;
    Handler handler_;
  };

  void* arm(Tag& tag) {
    ++pending_;
    return &tag;
  }

  void run(Handler handler, bool ok) {
    --pending_;
    (this->*handler)(ok);
    if (pending_ == 0)
      delete this;
  }

  // -- every call ----------------------------------------------------------------------------

  void accepted(bool ok) {
    if (!ok)
      return;    // the server is shutting down; no done notification comes for this one
    ++pending_;  // the done notification, now that the call exists
    new ForwardedCall(shared_);
    method_ = classifyCriMethod(server_context_.method());
    stub_ = &shared_.backend.stubFor(method_.service);
    if (method_.unary)
      startUnary();
    else
      startStream();
  }

  // kubelet cancelled, its deadline passed, or the server is stopping.
  void callDone(bool) {
    if (server_context_.IsCancelled())
      backend_context_.TryCancel();
  }

  void finish(const grpc::Status& status) { server_stream_.Finish(status, arm(finish_tag_)); }

  void finished(bool) {}

  // -- unary: kubelet's request, the hooks when the call is hooked, the runtime's answer ------

  void startUnary() {
    if (method_.hooked != HookedCall::kNone)
      interceptor_ = shared_.interceptor;
    server_stream_.Read(&up_, arm(read_tag_));
  }

  void requestRead(bool ok) {
    if (!ok) {
      finish(grpc::Status(grpc::StatusCode::CANCELLED, "the call ended before its request"));
      return;
    }
    if (interceptor_ == nullptr) {
      forwardUnary();
      return;
    }
    void* wake = arm(hooks_tag_);
    interceptor_->before(method_, up_, state_, [this, wake](const grpc::Status& s) {
      hook_status_ = s;
      hooks_alarm_.Set(&shared_.queue, gpr_now(GPR_CLOCK_MONOTONIC), wake);
    });
  }

  void hooksDone(bool) {
    if (hook_status_.ok())
      forwardUnary();
    else
      finish(hook_status_);
  }

  void forwardUnary() {
    prepareBackendContext(server_context_, backend_context_);
    unary_ =
        stub_->PrepareUnaryCall(&backend_context_, server_context_.method(), up_, &shared_.queue);
    unary_->StartCall();
    unary_->Finish(&down_, &backend_status_, arm(answer_tag_));
  }

  void answered(bool) {
    if (!backend_status_.ok()) {
      finish(backend_status_);
      return;
    }
    // Before kubelet has the answer, so that its next call (a start right after a create)
    // finds what this one left; post hooks are only started.
    if (interceptor_ != nullptr)
      interceptor_->after(method_, up_, down_, state_);
    server_stream_.WriteAndFinish(down_, grpc::WriteOptions(), grpc::Status::OK, arm(finish_tag_));
  }

  // -- any other call: messages pumped one at a time each way ---------------------------------
  // kubelet -> runtime is "up", runtime -> kubelet is "down". Each direction has at most one
  // read or write in flight; the runtime's status ends the call whether or not kubelet has
  // half-closed.

  void startStream() {
    prepareBackendContext(server_context_, backend_context_);
    stream_ = stub_->PrepareCall(&backend_context_, server_context_.method(), &shared_.queue);
    stream_->StartCall(arm(started_tag_));
    server_stream_.Read(&up_, arm(up_read_tag_));
  }

  void backendStarted(bool ok) {
    backend_started_ = true;
    if (!ok) {
      endBackend();
      return;
    }
    stream_->Read(&down_, arm(down_read_tag_));
    if (up_waiting_ != UpWaiting::kNothing)
      sendUp();
  }

  // The backend's first write may only start once its start (which is a write of its
  // metadata) is over.
  void upRead(bool ok) {
    up_waiting_ = ok ? UpWaiting::kMessage : UpWaiting::kHalfClose;
    if (backend_started_)
      sendUp();
  }

  void sendUp() {
    const UpWaiting what = std::exchange(up_waiting_, UpWaiting::kNothing);
    if (backend_ending_)
      return;
    if (what == UpWaiting::kMessage)
      stream_->Write(up_, arm(up_written_tag_));
    else
      stream_->WritesDone(arm(writes_done_tag_));
  }

  void upWritten(bool ok) {
    if (ok && !backend_ending_)
      server_stream_.Read(&up_, arm(up_read_tag_));
    // Not ok: the runtime's side is over; its status comes through the down direction.
  }

  void writesDone(bool) {}

  void downRead(bool ok) {
    if (ok)
      server_stream_.Write(down_, arm(down_written_tag_));
    else
      endBackend();
  }

  void downWritten(bool ok) {
    if (!ok)
      backend_context_.TryCancel();  // kubelet is gone; the read below then fails
    stream_->Read(&down_, arm(down_read_tag_));
  }

  void endBackend() {
    backend_ending_ = true;
    stream_->Finish(&backend_status_, arm(backend_finished_tag_));
  }

  void backendFinished(bool) { finish(backend_status_); }

  ForwardingContext& shared_;
  int pending_ = 0;
  grpc::GenericServerContext server_context_;
  grpc::GenericServerAsyncReaderWriter server_stream_{&server_context_};
  CriMethod method_{};
  grpc::GenericStub* stub_ = nullptr;
  grpc::ClientContext backend_context_;
  grpc::Status backend_status_;
  grpc::ByteBuffer up_;
  grpc::ByteBuffer down_;

  CallInterceptor* interceptor_ = nullptr;
  std::any state_;
  grpc::Status hook_status_;
  grpc::Alarm hooks_alarm_;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> unary_;

  enum class UpWaiting { kNothing, kMessage, kHalfClose };
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> stream_;
  bool backend_started_ = false;
  bool backend_ending_ = false;
  UpWaiting up_waiting_ = UpWaiting::kNothing;

  Tag accept_tag_{this, &ForwardedCall::accepted};
  Tag done_tag_{this, &ForwardedCall::callDone};
  Tag finish_tag_{this, &ForwardedCall::finished};
  Tag read_tag_{this, &ForwardedCall::requestRead};
  Tag hooks_tag_{this, &ForwardedCall::hooksDone};
  Tag answer_tag_{this, &ForwardedCall::answered};
  Tag started_tag_{this, &ForwardedCall::backendStarted};
  Tag up_read_tag_{this, &ForwardedCall::upRead};
  Tag up_written_tag_{this, &ForwardedCall::upWritten};
  Tag writes_done_tag_{this, &ForwardedCall::writesDone};
  Tag down_read_tag_{this, &ForwardedCall::downRead};
  Tag down_written_tag_{this, &ForwardedCall::downWritten};
  Tag backend_finished_tag_{this, &ForwardedCall::backendFinished};
};

}  // namespace

void acceptNextCall(ForwardingContext& context) {
  new ForwardedCall(context);
}

}  // namespace koord::roles::runtime_proxy
