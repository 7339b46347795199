#include "hooks/hook_interceptor.h"

#include <fmt/format.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/status.h>

#include <memory>
#include <optional>

#include "cri/runtime/v1/api.pb.h"
#include "cri/runtime/v1alpha2/api.pb.h"
#include "hooks/cri_hook_translation.h"
#include "hooks/hook_dispatcher.h"
#include "koord/core/log.h"

namespace koord::roles::runtime_proxy {

namespace {

std::optional<std::string> flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok())
    return std::nullopt;
  std::string out;
  out.reserve(buffer.Length());
  for (const auto& s : slices)
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

grpc::ByteBuffer bufferOf(const google::protobuf::MessageLite& message) {
  const std::string bytes = message.SerializeAsString();
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

template <typename Labels>
bool skipped(const Labels& labels, const std::string& key, const std::string& value) {
  auto it = labels.find(key);
  return it != labels.end() && it->second == value;
}

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

template <typename Request, typename Hook>
void runPreHook(HookDispatcher& dispatcher, RuntimeHookType type, const HookServer& server,
                const std::string& bytes, grpc::ByteBuffer& request, const std::string& skip_key,
                const std::string& skip_value, std::function<void(const grpc::Status&)> done) {
  auto parsed = std::make_shared<Request>();
  if (!parsed->ParseFromString(bytes)) {
    // Not ours to judge: the runtime answers a malformed request as it would without us.
    KOORD_LOG_ERROR("runtime-proxy: {}: the request does not parse; forwarded without hooks",
                    toString(type));
    done(grpc::Status::OK);
    return;
  }
  if (skipped(Hook::labels(*parsed), skip_key, skip_value)) {
    KOORD_VLOG(4, "runtime-proxy: {} {}: skipped by label {}={}", toString(type),
               Hook::key(*parsed), skip_key, skip_value);
    done(grpc::Status::OK);
    return;
  }
  const std::string endpoint = server.config.remote_endpoint;
  const FailurePolicy policy = server.config.failure_policy;
  dispatcher.call(
      type, server, Hook::build(*parsed),
      [type, parsed, endpoint, policy, &request, done = std::move(done)](
          const grpc::Status& status, const typename Hook::Answer& answer) {
        if (!status.ok()) {
          const std::string key = Hook::key(*parsed);
          if (policy == FailurePolicy::kFail) {
            KOORD_LOG_ERROR("runtime-proxy: {} {}: hook server {} failed: {}", toString(type), key,
                            endpoint, status.error_message());
            done(grpc::Status(grpc::StatusCode::UNKNOWN,
                              fmt::format("hook server err: {}", status.error_message())));
            return;
          }
          KOORD_LOG_WARNING(
              "runtime-proxy: {} {}: hook server {} failed ({}); going on without "
              "it (failure-policy Ignore)",
              toString(type), key, endpoint, status.error_message());
          done(grpc::Status::OK);
          return;
        }
        Hook::merge(answer, *parsed);
        request = bufferOf(*parsed);
        done(grpc::Status::OK);
      });
}

}  // namespace

HookInterceptor::HookInterceptor(HookDispatcher& dispatcher, std::string skip_key,
                                 std::string skip_value)
    : dispatcher_(dispatcher), skip_key_(std::move(skip_key)), skip_value_(std::move(skip_value)) {}

void HookInterceptor::before(const CriMethod& method, grpc::ByteBuffer& request,
                             std::function<void(const grpc::Status&)> done) {
  RuntimeHookType type;
  switch (method.hooked) {
    case HookedCall::kRunPodSandbox:
      type = RuntimeHookType::kPreRunPodSandbox;
      break;
    case HookedCall::kCreateContainer:
      type = RuntimeHookType::kPreCreateContainer;
      break;
    default:
      // StartContainer and UpdateContainerResources name only a container id: their hooks
      // need the pod's metadata, which the proxy does not keep yet.
      done(grpc::Status::OK);
      return;
  }
  const auto server = dispatcher_.serverFor(type);
  if (!server) {
    done(grpc::Status::OK);
    return;
  }
  const auto bytes = flatten(request);
  if (!bytes) {
    done(grpc::Status::OK);
    return;
  }
  const bool v1 = method.version == CriVersion::kV1;
  if (type == RuntimeHookType::kPreRunPodSandbox) {
    if (v1)
      runPreHook<::runtime::v1::RunPodSandboxRequest, PodSandboxHook>(
          dispatcher_, type, *server, *bytes, request, skip_key_, skip_value_, std::move(done));
    else
      runPreHook<::runtime::v1alpha2::RunPodSandboxRequest, PodSandboxHook>(
          dispatcher_, type, *server, *bytes, request, skip_key_, skip_value_, std::move(done));
    return;
  }
  if (v1)
    runPreHook<::runtime::v1::CreateContainerRequest, ContainerHook>(
        dispatcher_, type, *server, *bytes, request, skip_key_, skip_value_, std::move(done));
  else
    runPreHook<::runtime::v1alpha2::CreateContainerRequest, ContainerHook>(
        dispatcher_, type, *server, *bytes, request, skip_key_, skip_value_, std::move(done));
}

void HookInterceptor::after(const CriMethod&, const grpc::ByteBuffer&, const grpc::ByteBuffer&) {
  // Post hooks (PostStartContainer, PostStopContainer, PostStopPodSandbox) need the pod's
  // metadata too; they come with the metadata cache.
}

}  // namespace koord::roles::runtime_proxy
