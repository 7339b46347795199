#include "grpc_callback_hold.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>

#include <chrono>
#include <future>
#include <string>

namespace koord::testing {

void holdCallbackMachinery() {
  static const bool held = [] {
    // A channel's first callback call takes its reference on the callback queue; the channel
    // (and so the reference) lives until exit. Nothing listens: the call fails, which is fine.
    static auto channel = grpc::CreateChannel("unix:/nonexistent/koord-test.sock",
                                              grpc::InsecureChannelCredentials());
    static grpc::GenericStub stub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(50));
    grpc::Slice empty(std::string{});
    grpc::ByteBuffer req(&empty, 1);
    grpc::ByteBuffer resp;
    std::promise<void> done;
    stub.UnaryCall(&ctx, "/koord.test/Hold", grpc::StubOptions(), &req, &resp,
                   [&](grpc::Status) { done.set_value(); });
    done.get_future().wait();
    return true;
  }();
  (void)held;
}

}  // namespace koord::testing
