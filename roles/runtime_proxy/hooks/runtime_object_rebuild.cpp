#include "hooks/runtime_object_rebuild.h"

#include <fmt/format.h>
#include <grpcpp/channel.h>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "cri/cri_backend.h"
#include "cri/runtime/v1/api.grpc.pb.h"
#include "cri/runtime/v1alpha2/api.grpc.pb.h"
#include "hooks/runtime_object_cache.h"
#include "koord/core/log.h"

namespace koord::roles::runtime_proxy {

namespace {

template <typename Map>
void copyMap(const Map& from, google::protobuf::Map<std::string, std::string>& to) {
  for (const auto& [k, v] : from)
    to[k] = v;
}

// containerd's verbose sandbox status carries the sandbox's config as JSON under "info"; the
// cgroup parent is the one thing in it that the list calls lack. Anything unexpected: none.
std::string cgroupParentFromInfo(const google::protobuf::Map<std::string, std::string>& info) {
  auto it = info.find("info");
  if (it == info.end())
    return {};
  boost::system::error_code ec;
  const boost::json::value doc = boost::json::parse(it->second, ec);
  if (ec || !doc.is_object())
    return {};
  const auto* config = doc.as_object().if_contains("config");
  if (config == nullptr || !config->is_object())
    return {};
  const auto* linux_config = config->as_object().if_contains("linux");
  if (linux_config == nullptr || !linux_config->is_object())
    return {};
  for (const char* key : {"cgroup_parent", "cgroupParent"}) {
    const auto* parent = linux_config->as_object().if_contains(key);
    if (parent != nullptr && parent->is_string())
      return std::string(parent->as_string());
  }
  return {};
}

// The calls the rebuild makes, per CRI version (the messages match field for field).
#define KOORD_CRI_REBUILD_API(Name, ns)                            \
  struct Name {                                                    \
    using RuntimeService = ns::RuntimeService;                     \
    using ListPodSandboxResponse = ns::ListPodSandboxResponse;     \
    using ListContainersResponse = ns::ListContainersResponse;     \
    using PodSandboxStatusRequest = ns::PodSandboxStatusRequest;   \
    using PodSandboxStatusResponse = ns::PodSandboxStatusResponse; \
    static constexpr auto kSandboxReady = ns::SANDBOX_READY;       \
  };
KOORD_CRI_REBUILD_API(CriV1, ::runtime::v1)
KOORD_CRI_REBUILD_API(CriV1alpha2, ::runtime::v1alpha2)
#undef KOORD_CRI_REBUILD_API

template <typename Api>
std::optional<RebuildResult> rebuildWith(const std::shared_ptr<grpc::Channel>& channel,
                                         RuntimeObjectCache& cache,
                                         std::chrono::milliseconds timeout) {
  auto stub = Api::RuntimeService::NewStub(channel);
  auto deadline = [&](grpc::ClientContext& ctx) {
    ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  };
  RebuildResult result;
  typename Api::ListPodSandboxResponse pods;
  {
    grpc::ClientContext ctx;
    deadline(ctx);
    const grpc::Status s = stub->ListPodSandbox(&ctx, {}, &pods);
    if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED)
      return std::nullopt;  // the other CRI version
    if (!s.ok()) {
      result.error = fmt::format("ListPodSandbox: {}", s.error_message());
      return result;
    }
  }
  typename Api::ListContainersResponse containers;
  {
    grpc::ClientContext ctx;
    deadline(ctx);
    const grpc::Status s = stub->ListContainers(&ctx, {}, &containers);
    if (!s.ok()) {
      result.error = fmt::format("ListContainers: {}", s.error_message());
      return result;
    }
  }
  for (const auto& pod : pods.items()) {
    hookapi::PodSandboxHookRequest request;
    auto& meta = *request.mutable_pod_meta();
    meta.set_name(pod.metadata().name());
    meta.set_namespace_(pod.metadata().namespace_());
    meta.set_uid(pod.metadata().uid());
    meta.set_attempt(pod.metadata().attempt());
    request.set_runtime_handler(pod.runtime_handler());
    copyMap(pod.labels(), *request.mutable_labels());
    copyMap(pod.annotations(), *request.mutable_annotations());
    if (pod.state() == Api::kSandboxReady) {
      typename Api::PodSandboxStatusRequest status_request;
      status_request.set_pod_sandbox_id(pod.id());
      status_request.set_verbose(true);
      typename Api::PodSandboxStatusResponse status;
      grpc::ClientContext ctx;
      deadline(ctx);
      if (stub->PodSandboxStatus(&ctx, status_request, &status).ok())
        request.set_cgroup_parent(cgroupParentFromInfo(status.info()));
    }
    if (cache.putSandboxIfAbsent(pod.id(), std::move(request)))
      ++result.sandboxes;
  }
  for (const auto& c : containers.containers()) {
    const auto pod = cache.sandbox(c.pod_sandbox_id());
    if (!pod)
      continue;  // its sandbox is gone: kubelet will only remove it
    hookapi::ContainerResourceHookRequest request;
    *request.mutable_pod_meta() = pod->pod_meta();
    request.mutable_container_meta()->set_name(c.metadata().name());
    request.mutable_container_meta()->set_attempt(c.metadata().attempt());
    request.mutable_container_meta()->set_id(c.id());
    copyMap(c.annotations(), *request.mutable_container_annotations());
    *request.mutable_pod_annotations() = pod->annotations();
    *request.mutable_pod_labels() = pod->labels();
    request.set_pod_cgroup_parent(pod->cgroup_parent());
    if (pod->has_resources())
      *request.mutable_pod_resources() = pod->resources();
    if (cache.putContainerIfAbsent(c.id(), std::move(request)))
      ++result.containers;
  }
  return result;
}

}  // namespace

RebuildResult rebuildRuntimeObjects(const std::string& runtime_target, RuntimeObjectCache& cache,
                                    std::chrono::milliseconds call_timeout) {
  const auto channel = criChannel(runtime_target);
  if (auto r = rebuildWith<CriV1>(channel, cache, call_timeout))
    return *r;
  if (auto r = rebuildWith<CriV1alpha2>(channel, cache, call_timeout))
    return *r;
  return RebuildResult{.error = "the runtime serves neither CRI v1 nor v1alpha2"};
}

struct RuntimeObjectRebuilder::Impl {
  std::string target;
  RuntimeObjectCache& cache;
  mutable std::mutex mu;
  mutable std::condition_variable cv;
  bool stopping = false;
  bool succeeded = false;
  std::thread thread;

  Impl(std::string t, RuntimeObjectCache& c) : target(std::move(t)), cache(c) {}

  void loop() {
    bool reported = false;
    for (;;) {
      const RebuildResult r = rebuildRuntimeObjects(target, cache, std::chrono::seconds(10));
      std::unique_lock lock(mu);
      if (r.error.empty()) {
        succeeded = true;
        cv.notify_all();
        KOORD_LOG_INFO("runtime-proxy: {} sandbox(es) and {} container(s) known from the runtime",
                       r.sandboxes, r.containers);
        return;
      }
      if (!reported)
        KOORD_LOG_WARNING("runtime-proxy: cannot list the runtime's pods yet ({}); retrying",
                          r.error);
      reported = true;
      if (cv.wait_for(lock, std::chrono::seconds(1), [&] { return stopping; }))
        return;
    }
  }
};

RuntimeObjectRebuilder::RuntimeObjectRebuilder(std::string runtime_target,
                                               RuntimeObjectCache& cache)
    : impl_(std::make_unique<Impl>(std::move(runtime_target), cache)) {
  impl_->thread = std::thread([impl = impl_.get()] { impl->loop(); });
}

RuntimeObjectRebuilder::~RuntimeObjectRebuilder() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  impl_->thread.join();
}

bool RuntimeObjectRebuilder::waitDone(std::chrono::milliseconds wait) const {
  std::unique_lock lock(impl_->mu);
  return impl_->cv.wait_for(lock, wait, [&] { return impl_->succeeded; });
}

}  // namespace koord::roles::runtime_proxy
