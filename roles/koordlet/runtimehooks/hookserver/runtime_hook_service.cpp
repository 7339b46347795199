#include "runtimehooks/hookserver/runtime_hook_service.h"

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "koord/h2/grpc_unary_server.h"

namespace koord::roles::koordlet {

hookapi::PodSandboxHookResponse podSandboxHookAnswer(HookStage stage,
                                                     const hookapi::PodSandboxHookRequest& req,
                                                     const HookRegistry& hooks,
                                                     const cgroup::ResourceExecutor* cgroups) {
  hookapi::PodSandboxHookResponse out;
  const PodHookContext ctx{req, cgroups};
  for (const RuntimeHook* hook : hooks.at(stage))
    hook->pod_hook(ctx, out);
  return out;
}

hookapi::ContainerResourceHookResponse containerHookAnswer(
    HookStage stage, const hookapi::ContainerResourceHookRequest& req, const HookRegistry& hooks,
    const cgroup::ResourceExecutor* cgroups) {
  hookapi::ContainerResourceHookResponse out;
  const ContainerHookContext ctx(req, cgroups);
  for (const RuntimeHook* hook : hooks.at(stage))
    hook->container_hook(ctx, out);
  return out;
}

namespace {

// A stage's method: its request parsed, answered by the stage's hooks, the response serialized.
template <typename Request, typename Answer>
h2::GrpcUnaryServer::Handler handler(Answer answer) {
  return [answer](std::string_view bytes, std::string& out) -> h2::GrpcStatus {
    Request request;
    if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return {h2::GrpcCode::kInvalidArgument, "the request does not parse"};
    out = answer(request).SerializeAsString();
    return {};
  };
}

}  // namespace

void addRuntimeHookService(h2::GrpcUnaryServer& server, const HookRegistry& hooks,
                           const cgroup::ResourceExecutor* cgroups) {
  for (std::size_t i = 0; i < kHookStageCount; ++i) {
    const auto stage = static_cast<HookStage>(i);
    const auto method =
        fmt::format("/runtime.v1alpha1.RuntimeHookService/{}Hook", hookStageName(stage));
    if (isPodStage(stage)) {
      server.addMethod(
          method, handler<hookapi::PodSandboxHookRequest>([stage, &hooks, cgroups](const auto& r) {
            return podSandboxHookAnswer(stage, r, hooks, cgroups);
          }));
    } else {
      server.addMethod(method, handler<hookapi::ContainerResourceHookRequest>(
                                   [stage, &hooks, cgroups](const auto& r) {
                                     return containerHookAnswer(stage, r, hooks, cgroups);
                                   }));
    }
  }
}

}  // namespace koord::roles::koordlet
