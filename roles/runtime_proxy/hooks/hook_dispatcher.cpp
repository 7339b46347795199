#include "hooks/hook_dispatcher.h"

#include <grpcpp/support/status.h>

#include <algorithm>

#include "koord/h2/grpc_unary_client.h"

namespace koord::roles::runtime_proxy {

namespace {

// Koordinator's RuntimeHookService, as its methods are addressed on the wire.
std::string methodPath(RuntimeHookType type) {
  return "/runtime.v1alpha1.RuntimeHookService/" + std::string(toString(type)) + "Hook";
}

}  // namespace

HookDispatcher::HookDispatcher(const HookServerRegistry& registry,
                               std::chrono::milliseconds timeout)
    : registry_(registry), timeout_(timeout) {}

HookDispatcher::~HookDispatcher() = default;

void HookDispatcher::runOn(boost::asio::io_context* io) {
  // Closing fails the calls in flight, whose `done` may call again: the map is emptied first.
  auto clients = std::move(clients_);
  clients_.clear();
  io_ = io;
  for (auto& [endpoint, client] : clients)
    client->close();
}

std::optional<HookServer> HookDispatcher::serverFor(RuntimeHookType type) const {
  const auto servers = registry_.servers();
  for (const auto& s : *servers) {
    if (std::find(s.config.hooks.begin(), s.config.hooks.end(), type) != s.config.hooks.end())
      return s;
  }
  return std::nullopt;
}

template <typename Response, typename Done>
void HookDispatcher::callMethod(RuntimeHookType type, const HookServer& server,
                                const google::protobuf::MessageLite& request, Done done) {
  if (io_ == nullptr) {
    done(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the runtime-proxy is not serving"),
         Response());
    return;
  }
  auto& client = clients_[server.config.remote_endpoint];
  if (!client)
    client = std::make_unique<h2::GrpcUnaryClient>(*io_, server.config.remote_endpoint);
  client->call(
      methodPath(type), request.SerializeAsString(), timeout_,
      [done = std::move(done)](const h2::GrpcStatus& status, std::string bytes) {
        Response response;
        if (!status.ok()) {
          done(grpc::Status(static_cast<grpc::StatusCode>(status.code), status.message), response);
          return;
        }
        if (!response.ParseFromString(bytes)) {
          done(grpc::Status(grpc::StatusCode::INTERNAL, "the hook server's answer does not parse"),
               response);
          return;
        }
        done(grpc::Status::OK, response);
      });
}

void HookDispatcher::call(RuntimeHookType type, const HookServer& server,
                          const hookapi::PodSandboxHookRequest& request, PodDone done) {
  callMethod<hookapi::PodSandboxHookResponse>(type, server, request, std::move(done));
}

void HookDispatcher::call(RuntimeHookType type, const HookServer& server,
                          const hookapi::ContainerResourceHookRequest& request,
                          ContainerDone done) {
  callMethod<hookapi::ContainerResourceHookResponse>(type, server, request, std::move(done));
}

}  // namespace koord::roles::runtime_proxy
