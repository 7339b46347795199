#include "hooks/hook_interceptor.h"

#include <fmt/format.h>
#include <grpcpp/support/status.h>

#include <any>
#include <memory>
#include <optional>

#include "cri/runtime/v1/api.pb.h"
#include "cri/runtime/v1alpha2/api.pb.h"
#include "hooks/cri_hook_translation.h"
#include "hooks/hook_dispatcher.h"
#include "hooks/runtime_object_cache.h"
#include "koord/core/log.h"

namespace koord::roles::runtime_proxy {

namespace {

// What one pre hook does to one kind of request: the hook request it builds, the labels that
// may skip it, how the answer merges, and a name for logs.
struct PodSandboxHook {
  using Answer = hookapi::PodSandboxHookResponse;
  template <typename Request>
  static auto build(const Request& r) {
    return podSandboxHookRequest(r);
  }
  template <typename Request>
  static const auto& labels(const Request& r) {
    return r.config().labels();
  }
  template <typename Request>
  static const auto& pod(const Request& r) {
    return r.config().metadata();
  }
  template <typename Request, typename Answer>
  static void merge(const Answer& a, Request& r) {
    mergePodSandboxHookResponse(a, r);
  }
  template <typename Request>
  static std::string key(const Request& r) {
    return r.config().metadata().namespace_() + "/" + r.config().metadata().name();
  }
};

struct ContainerHook {
  using Answer = hookapi::ContainerResourceHookResponse;
  template <typename Request>
  static auto build(const Request& r) {
    return containerHookRequest(r);
  }
  template <typename Request>
  static const auto& labels(const Request& r) {
    return r.sandbox_config().labels();
  }
  template <typename Request>
  static const auto& pod(const Request& r) {
    return r.sandbox_config().metadata();
  }
  template <typename Request, typename Answer>
  static void merge(const Answer& a, Request& r) {
    mergeContainerHookResponse(a, r);
  }
  template <typename Request>
  static std::string key(const Request& r) {
    return r.sandbox_config().metadata().namespace_() + "/" + r.sandbox_config().metadata().name() +
           "/" + r.config().metadata().name();
  }
};

// A hook call's outcome under its server's failure policy: true when the CRI call goes on
// with the answer; otherwise `done` has been given what kubelet gets (the hook's error under
// Fail, the unchanged request under Ignore).
bool hookSucceeded(RuntimeHookType type, const std::string& key, const std::string& endpoint,
                   FailurePolicy policy, const grpc::Status& status,
                   const std::function<void(const grpc::Status&)>& done) {
  if (status.ok())
    return true;
  if (policy == FailurePolicy::kFail) {
    KOORD_LOG_ERROR("runtime-proxy: {} {}: hook server {} failed: {}", toString(type), key,
                    endpoint, status.error_message());
    done(grpc::Status(grpc::StatusCode::UNKNOWN,
                      fmt::format("hook server err: {}", status.error_message())));
    return false;
  }
  KOORD_LOG_WARNING(
      "runtime-proxy: {} {}: hook server {} failed ({}); going on without it (failure-policy "
      "Ignore)",
      toString(type), key, endpoint, status.error_message());
  done(grpc::Status::OK);
  return false;
}

template <typename Request, typename Hook>
void runPreHook(HookDispatcher& dispatcher, RuntimeHookType type, const HookServer& server,
                const std::string& bytes, std::string& request, SkipLabelPolicy& skip,
                std::function<void(const grpc::Status&)> done) {
  auto parsed = std::make_shared<Request>();
  if (!parsed->ParseFromString(bytes)) {
    // Not ours to judge: the runtime answers a malformed request as it would without us.
    KOORD_LOG_ERROR("runtime-proxy: {}: the request does not parse; forwarded without hooks",
                    toString(type));
    done(grpc::Status::OK);
    return;
  }
  if (skip.skips(Hook::labels(*parsed), Hook::pod(*parsed))) {
    KOORD_VLOG(4, "runtime-proxy: {} {}: skipped by label {}={}", toString(type),
               Hook::key(*parsed), skip.key(), skip.value());
    done(grpc::Status::OK);
    return;
  }
  const std::string endpoint = server.config.remote_endpoint;
  const FailurePolicy policy = server.config.failure_policy;
  dispatcher.call(type, server, Hook::build(*parsed),
                  [type, parsed, endpoint, policy, &request, done = std::move(done)](
                      const grpc::Status& status, const typename Hook::Answer& answer) {
                    if (!hookSucceeded(type, Hook::key(*parsed), endpoint, policy, status, done))
                      return;
                    Hook::merge(answer, *parsed);
                    request = parsed->SerializeAsString();
                    done(grpc::Status::OK);
                  });
}

// Parses `bytes` as the method's version of V1 / V1alpha2 and hands it to `f`; a request that
// does not parse is logged and left alone.
template <typename V1, typename V1alpha2, typename F>
void withParsed(const CriMethod& method, const std::string& bytes, F&& f) {
  auto parse = [&](auto message) {
    if (!message.ParseFromString(bytes)) {
      KOORD_LOG_ERROR("runtime-proxy: a {} message does not parse; its hooks are skipped",
                      hookedCallName(method.hooked));
      return;
    }
    f(message);
  };
  if (method.version == CriVersion::kV1)
    parse(V1());
  else
    parse(V1alpha2());
}

std::string containerKey(const hookapi::ContainerResourceHookRequest& r) {
  return r.pod_meta().namespace_() + "/" + r.pod_meta().name() + "/" + r.container_meta().name();
}

}  // namespace

HookInterceptor::HookInterceptor(HookDispatcher& dispatcher, RuntimeObjectCache& cache,
                                 SkipLabelPolicy& skip)
    : dispatcher_(dispatcher), cache_(cache), skip_(skip) {}

void HookInterceptor::attach(boost::asio::io_context* io) {
  dispatcher_.runOn(io);
}

void HookInterceptor::before(const CriMethod& method, std::string& request, std::any& state,
                             std::function<void(const grpc::Status&)> done) {
  if (method.hooked == HookedCall::kStartContainer || method.hooked == HookedCall::kStopContainer ||
      method.hooked == HookedCall::kStopPodSandbox)
    keepForPostHook(method, request, state);
  RuntimeHookType type;
  switch (method.hooked) {
    case HookedCall::kRunPodSandbox:
      type = RuntimeHookType::kPreRunPodSandbox;
      break;
    case HookedCall::kCreateContainer:
      type = RuntimeHookType::kPreCreateContainer;
      break;
    case HookedCall::kStartContainer:
      type = RuntimeHookType::kPreStartContainer;
      break;
    case HookedCall::kUpdateContainerResources:
      type = RuntimeHookType::kPreUpdateContainerResources;
      break;
    default:
      done(grpc::Status::OK);
      return;
  }
  const auto server = dispatcher_.serverFor(type);
  if (!server) {
    done(grpc::Status::OK);
    return;
  }
  // Parsed before the hook call starts, so that `request` may then be replaced by the answer.
  const std::string& bytes = request;
  const bool v1 = method.version == CriVersion::kV1;
  switch (type) {
    case RuntimeHookType::kPreRunPodSandbox:
      if (v1)
        runPreHook<::runtime::v1::RunPodSandboxRequest, PodSandboxHook>(
            dispatcher_, type, *server, bytes, request, skip_, std::move(done));
      else
        runPreHook<::runtime::v1alpha2::RunPodSandboxRequest, PodSandboxHook>(
            dispatcher_, type, *server, bytes, request, skip_, std::move(done));
      return;
    case RuntimeHookType::kPreCreateContainer:
      if (v1)
        runPreHook<::runtime::v1::CreateContainerRequest, ContainerHook>(
            dispatcher_, type, *server, bytes, request, skip_, std::move(done));
      else
        runPreHook<::runtime::v1alpha2::CreateContainerRequest, ContainerHook>(
            dispatcher_, type, *server, bytes, request, skip_, std::move(done));
      return;
    default:
      containerPreHook(method, type, *server, bytes, request, std::move(done));
      return;
  }
}

// StartContainer and UpdateContainerResources name only the container: the hook is told what
// CreateContainer's was, with the id (and, for an update, the new resources); an update's
// answer is merged into the request's resources.
void HookInterceptor::containerPreHook(const CriMethod& method, RuntimeHookType type,
                                       const HookServer& server, const std::string& bytes,
                                       std::string& request,
                                       std::function<void(const grpc::Status&)> done) {
  bool handled = false;
  auto go = [&](auto parsed_value) {
    handled = true;
    using Request = decltype(parsed_value);
    auto parsed = std::make_shared<Request>(std::move(parsed_value));
    auto cached = cache_.container(parsed->container_id());
    if (!cached) {
      // Created before this proxy started: nothing to tell the hook about it.
      KOORD_VLOG(4, "runtime-proxy: {} {}: container not seen created; no hook", toString(type),
                 parsed->container_id());
      done(grpc::Status::OK);
      return;
    }
    if (skip_.skips(cached->pod_labels(), cached->pod_meta())) {
      done(grpc::Status::OK);
      return;
    }
    hookapi::ContainerResourceHookRequest hook_request = std::move(*cached);
    constexpr bool kUpdate = requires {
      parsed->linux();
    };
    if constexpr (kUpdate) {
      if (parsed->has_linux())
        *hook_request.mutable_container_resources() = hookResources(parsed->linux());
    }
    dispatcher_.call(
        type, server, hook_request,
        [type, key = containerKey(hook_request), parsed, endpoint = server.config.remote_endpoint,
         policy = server.config.failure_policy, &request,
         done](const grpc::Status& status, const hookapi::ContainerResourceHookResponse& answer) {
          if (!hookSucceeded(type, key, endpoint, policy, status, done))
            return;
          if constexpr (kUpdate) {
            if (answer.has_container_resources()) {
              applyHookResources(answer.container_resources(), *parsed->mutable_linux());
              request = parsed->SerializeAsString();
            }
          }
          done(grpc::Status::OK);
        });
  };
  if (type == RuntimeHookType::kPreStartContainer)
    withParsed<::runtime::v1::StartContainerRequest, ::runtime::v1alpha2::StartContainerRequest>(
        method, bytes, go);
  else
    withParsed<::runtime::v1::UpdateContainerResourcesRequest,
               ::runtime::v1alpha2::UpdateContainerResourcesRequest>(method, bytes, go);
  if (!handled)
    done(grpc::Status::OK);
}

void HookInterceptor::after(const CriMethod& method, const std::string& request,
                            const std::string& response, std::any& state) {
  postHook(method, request, response, state);
}

void HookInterceptor::keepForPostHook(const CriMethod& method, const std::string& req,
                                      std::any& state) {
  if (method.hooked == HookedCall::kStopPodSandbox) {
    ::runtime::v1::StopPodSandboxRequest id;  // the id is field 1 in both versions
    if (!id.ParseFromString(req))
      return;
    if (auto cached = cache_.sandbox(id.pod_sandbox_id());
        cached && !skip_.skips(cached->labels(), cached->pod_meta()))
      state = std::move(*cached);
    return;
  }
  // Start and Stop requests carry the container id as field 1, in both versions.
  ::runtime::v1::StartContainerRequest id;
  if (!id.ParseFromString(req))
    return;
  if (auto cached = cache_.container(id.container_id());
      cached && !skip_.skips(cached->pod_labels(), cached->pod_meta()))
    state = std::move(*cached);
}

// Bookkeeping for later calls, then the post hooks (their answers change nothing; a failure is
// logged).
void HookInterceptor::postHook(const CriMethod& method, const std::string& req,
                               const std::string& resp, std::any& state) {
  auto post = [&](RuntimeHookType type, const auto& hook_request, std::string key) {
    const auto server = dispatcher_.serverFor(type);
    if (!server)
      return;
    dispatcher_.call(type, *server, hook_request,
                     [type, key = std::move(key)](const grpc::Status& status, const auto&) {
                       if (!status.ok())
                         KOORD_LOG_WARNING("runtime-proxy: {} {}: {}", toString(type), key,
                                           status.error_message());
                     });
  };
  switch (method.hooked) {
    case HookedCall::kRunPodSandbox:
      withParsed<::runtime::v1::RunPodSandboxRequest, ::runtime::v1alpha2::RunPodSandboxRequest>(
          method, req, [&](const auto& run) {
            ::runtime::v1::RunPodSandboxResponse answer;  // the same wire form in both versions
            if (answer.ParseFromString(resp) && !answer.pod_sandbox_id().empty())
              cache_.putSandbox(answer.pod_sandbox_id(), podSandboxHookRequest(run));
          });
      return;
    case HookedCall::kCreateContainer:
      withParsed<::runtime::v1::CreateContainerRequest,
                 ::runtime::v1alpha2::CreateContainerRequest>(method, req, [&](const auto& create) {
        ::runtime::v1::CreateContainerResponse answer;
        if (!answer.ParseFromString(resp) || answer.container_id().empty())
          return;
        auto hook_request = containerHookRequest(create);
        hook_request.mutable_container_meta()->set_id(answer.container_id());
        cache_.putContainer(answer.container_id(), std::move(hook_request));
      });
      return;
    case HookedCall::kStartContainer:
    case HookedCall::kStopContainer: {
      const RuntimeHookType type = method.hooked == HookedCall::kStartContainer
                                       ? RuntimeHookType::kPostStartContainer
                                       : RuntimeHookType::kPostStopContainer;
      if (const auto* kept = std::any_cast<hookapi::ContainerResourceHookRequest>(&state))
        post(type, *kept, containerKey(*kept));
      return;
    }
    case HookedCall::kStopPodSandbox: {
      if (const auto* kept = std::any_cast<hookapi::PodSandboxHookRequest>(&state))
        post(RuntimeHookType::kPostStopPodSandbox, *kept,
             kept->pod_meta().namespace_() + "/" + kept->pod_meta().name());
      return;
    }
    case HookedCall::kRemoveContainer: {
      ::runtime::v1::RemoveContainerRequest id;
      if (id.ParseFromString(req))
        cache_.eraseContainer(id.container_id());
      return;
    }
    case HookedCall::kRemovePodSandbox: {
      ::runtime::v1::RemovePodSandboxRequest id;
      if (id.ParseFromString(req))
        cache_.eraseSandbox(id.pod_sandbox_id());
      return;
    }
    default:
      return;
  }
}

}  // namespace koord::roles::runtime_proxy
