#include "hooks/hook_dispatcher.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <algorithm>

namespace koord::roles::runtime_proxy {

namespace {

// One hook call in flight: what gRPC reads and writes until the answer comes.
template <typename Request, typename Response>
struct HookCall {
  grpc::ClientContext context;
  Request request;
  Response response;
  std::function<void(const grpc::Status&, const Response&)> done;
};

template <typename Request, typename Response, typename Start>
void startCall(const Request& request, std::chrono::milliseconds timeout,
               std::function<void(const grpc::Status&, const Response&)> done, Start&& start) {
  auto* call = new HookCall<Request, Response>;
  call->request = request;
  call->done = std::move(done);
  call->context.set_deadline(std::chrono::system_clock::now() + timeout);
  start(&call->context, &call->request, &call->response, [call](grpc::Status status) {
    call->done(status, call->response);
    delete call;
  });
}

}  // namespace

HookDispatcher::HookDispatcher(const HookServerRegistry& registry,
                               std::chrono::milliseconds timeout)
    : registry_(registry), timeout_(timeout) {}

HookDispatcher::~HookDispatcher() = default;

std::optional<HookServer> HookDispatcher::serverFor(RuntimeHookType type) const {
  const auto servers = registry_.servers();
  for (const auto& s : *servers) {
    if (std::find(s.config.hooks.begin(), s.config.hooks.end(), type) != s.config.hooks.end())
      return s;
  }
  return std::nullopt;
}

hookapi::RuntimeHookService::Stub& HookDispatcher::stubFor(const std::string& endpoint) {
  std::lock_guard lock(mu_);
  auto& stub = stubs_[endpoint];
  if (!stub) {
    grpc::ChannelArguments args;
    // A koordlet that restarts is back within a second; the proxy should notice as soon.
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    stub = hookapi::RuntimeHookService::NewStub(
        grpc::CreateCustomChannel("unix:" + endpoint, grpc::InsecureChannelCredentials(), args));
  }
  return *stub;
}

void HookDispatcher::call(RuntimeHookType type, const HookServer& server,
                          const hookapi::PodSandboxHookRequest& request, PodDone done) {
  auto* async = stubFor(server.config.remote_endpoint).async();
  startCall<hookapi::PodSandboxHookRequest, hookapi::PodSandboxHookResponse>(
      request, timeout_, std::move(done), [&](auto* ctx, auto* req, auto* resp, auto cb) {
        if (type == RuntimeHookType::kPreRunPodSandbox)
          async->PreRunPodSandboxHook(ctx, req, resp, std::move(cb));
        else
          async->PostStopPodSandboxHook(ctx, req, resp, std::move(cb));
      });
}

void HookDispatcher::call(RuntimeHookType type, const HookServer& server,
                          const hookapi::ContainerResourceHookRequest& request,
                          ContainerDone done) {
  auto* async = stubFor(server.config.remote_endpoint).async();
  startCall<hookapi::ContainerResourceHookRequest, hookapi::ContainerResourceHookResponse>(
      request, timeout_, std::move(done), [&](auto* ctx, auto* req, auto* resp, auto cb) {
        switch (type) {
          case RuntimeHookType::kPreCreateContainer:
            async->PreCreateContainerHook(ctx, req, resp, std::move(cb));
            break;
          case RuntimeHookType::kPreStartContainer:
            async->PreStartContainerHook(ctx, req, resp, std::move(cb));
            break;
          case RuntimeHookType::kPostStartContainer:
            async->PostStartContainerHook(ctx, req, resp, std::move(cb));
            break;
          case RuntimeHookType::kPostStopContainer:
            async->PostStopContainerHook(ctx, req, resp, std::move(cb));
            break;
          default:
            async->PreUpdateContainerResourcesHook(ctx, req, resp, std::move(cb));
            break;
        }
      });
}

}  // namespace koord::roles::runtime_proxy
