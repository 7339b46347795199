#include "runtimehooks/hookserver/runtime_hook_service.h"

#include <functional>
#include <string>
#include <string_view>

#include "koord/apis/extended_resource_spec.h"
#include "koord/apis/extension.h"
#include "koord/cgroup/cfs_quota_tree.h"
#include "koord/cgroup/cgroup_reader.h"
#include "koord/cgroup/cgroup_resource.h"
#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "koord/h2/grpc_unary_server.h"
#include "runtimehooks/batchresource/batch_resource.h"
#include "runtimehooks/cpuset/cpuset_allocator.h"
#include "runtimehooks/oomscoreadj/oom_score_adj.h"

namespace koord::roles::koordlet {

namespace {

using ProtoMap = google::protobuf::Map<std::string, std::string>;

// The pod's identity, for log lines and as the start of BatchResource's view of it.
PodMeta podIdentity(const hookapi::PodSandboxMetadata& meta) {
  PodMeta pod;
  pod.namespace_ = meta.namespace_();
  pod.name = meta.name();
  pod.uid = meta.uid();
  return pod;
}

// The pod as far as BatchResource needs it: its labels and the containers' batch resources.
std::optional<BatchResourcePlan> planFor(PodMeta& pod, const ProtoMap& labels,
                                         const ProtoMap& annotations) {
  for (const auto& [k, v] : labels)
    pod.labels[k] = v;
  if (apis::podQoSClassRaw(pod.labels) != apis::QoSClass::kBE)
    return std::nullopt;
  auto spec = annotations.find(std::string(apis::kAnnotationExtendedResourceSpec));
  if (spec == annotations.end())
    return std::nullopt;
  auto containers = apis::parseExtendedResourceSpec(spec->second);
  if (!containers) {
    KOORD_LOG_ERROR("runtime hook BatchResource: pod {}: {}: {}", pod.key(),
                    apis::kAnnotationExtendedResourceSpec, containers.error().message);
    return std::nullopt;
  }
  for (auto& [name, resources] : *containers) {
    ContainerMeta c;
    c.name = name;
    c.requests = std::move(resources.requests);
    c.limits = std::move(resources.limits);
    pod.containers.push_back(std::move(c));
  }
  return planBatchResource(pod);
}

void setValues(const CgroupValues& v, hookapi::LinuxContainerResources& out) {
  out.set_cpu_shares(v.cpu_shares);
  out.set_cpu_quota(v.cfs_quota);
  if (v.cfs_quota > 0)
    out.set_cpu_period(100000);
  if (v.memory_limit > 0)
    out.set_memory_limit_in_bytes(v.memory_limit);
}

// The container's quota within its pod cgroup's current one (see RuntimeHookPlugins::cgroups).
std::int64_t quotaWithinPod(const cgroup::ResourceExecutor* cgroups,
                            const hookapi::ContainerResourceHookRequest& req, std::int64_t quota) {
  if (cgroups == nullptr || quota <= 0)
    return quota;
  auto dir = cgroup::cgroupParentDir(cgroups->root().driver, req.pod_cgroup_parent());
  if (!dir)
    return quota;
  auto pod_quota = cgroup::readInt64(*cgroups, *dir, cgroup::Resource::kCpuCfsQuota);
  return pod_quota ? cgroup::quotaWithin(quota, *pod_quota) : quota;
}

void batchResource(const hookapi::ContainerResourceHookRequest& req, PodMeta pod,
                   const RuntimeHookPlugins& plugins, hookapi::ContainerResourceHookResponse& out) {
  auto plan = planFor(pod, req.pod_labels(), req.pod_annotations());
  if (!plan)
    return;
  for (std::size_t i = 0; i < pod.containers.size(); ++i) {
    if (pod.containers[i].name == req.container_meta().name()) {
      auto& values = plan->containers[i];
      values.cfs_quota = quotaWithinPod(plugins.cgroups, req, values.cfs_quota);
      setValues(values, *out.mutable_container_resources());
      KOORD_VLOG(4, "runtime hook BatchResource: {}/{}: cpu.shares {} cfs_quota {} memory {}",
                 pod.key(), req.container_meta().name(), plan->containers[i].cpu_shares,
                 plan->containers[i].cfs_quota, plan->containers[i].memory_limit);
      break;
    }
  }
}

}  // namespace

hookapi::PodSandboxHookResponse podSandboxHookAnswer(const hookapi::PodSandboxHookRequest& req,
                                                     const RuntimeHookPlugins& plugins) {
  hookapi::PodSandboxHookResponse out;
  if (!plugins.batch_resource)
    return out;
  PodMeta pod = podIdentity(req.pod_meta());
  if (auto plan = planFor(pod, req.labels(), req.annotations()))
    setValues(plan->pod, *out.mutable_resources());
  return out;
}

hookapi::ContainerResourceHookResponse containerHookAnswer(
    const hookapi::ContainerResourceHookRequest& req, const RuntimeHookPlugins& plugins) {
  hookapi::ContainerResourceHookResponse out;
  const PodMeta pod = podIdentity(req.pod_meta());
  if (plugins.batch_resource)
    batchResource(req, pod, plugins, out);
  if (!plugins.cpuset && !plugins.oom_score_adj)
    return out;
  const kube::Annotations annotations(req.pod_annotations().begin(), req.pod_annotations().end());
  if (plugins.cpuset) {
    const kube::Labels labels(req.pod_labels().begin(), req.pod_labels().end());
    auto binding = podCPUSetBinding(labels, annotations);
    if (!binding) {
      KOORD_LOG_ERROR("runtime hook CPUSetAllocator: pod {}: {}: {}", pod.key(),
                      kAnnotationResourceStatus, binding.error().message);
    } else if (*binding) {
      auto& resources = *out.mutable_container_resources();
      resources.set_cpuset_cpus((*binding)->cpus);
      resources.set_cpu_quota(-1);  // wins over BatchResource's quota: bound CPUs, no throttle
      KOORD_VLOG(4, "runtime hook CPUSetAllocator: {}/{}: cpuset {}", pod.key(),
                 req.container_meta().name(), (*binding)->cpus);
    }
  }
  if (plugins.oom_score_adj) {
    auto adj = containerOOMScoreAdj(annotations, req.container_meta().name());
    if (!adj)
      KOORD_LOG_ERROR("runtime hook OOMScoreAdj: pod {}: {}", pod.key(), adj.error().message);
    else if (*adj)
      out.mutable_container_resources()->set_oom_score_adj(**adj);
  }
  return out;
}

namespace {

// A method answered by `answer` (request -> response), its request parsed and its response
// serialized here; a hook with nothing to change answers with an empty response.
template <typename Request, typename Response>
h2::GrpcUnaryServer::Handler handler(std::function<Response(const Request&)> answer) {
  return [answer = std::move(answer)](std::string_view bytes, std::string& out) -> h2::GrpcStatus {
    Request request;
    if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return {h2::GrpcCode::kInvalidArgument, "the request does not parse"};
    out = answer(request).SerializeAsString();
    return {};
  };
}

}  // namespace

void addRuntimeHookService(h2::GrpcUnaryServer& server, RuntimeHookPlugins plugins) {
  using PodRequest = hookapi::PodSandboxHookRequest;
  using PodResponse = hookapi::PodSandboxHookResponse;
  using ContainerRequest = hookapi::ContainerResourceHookRequest;
  using ContainerResponse = hookapi::ContainerResourceHookResponse;
  const std::string service = "/runtime.v1alpha1.RuntimeHookService/";
  auto pod = [plugins](const PodRequest& r) { return podSandboxHookAnswer(r, plugins); };
  auto container = [plugins](const ContainerRequest& r) { return containerHookAnswer(r, plugins); };
  auto podNothing = [](const PodRequest&) { return PodResponse(); };
  auto containerNothing = [](const ContainerRequest&) { return ContainerResponse(); };
  server.addMethod(service + "PreRunPodSandboxHook", handler<PodRequest, PodResponse>(pod));
  server.addMethod(service + "PostStopPodSandboxHook",
                   handler<PodRequest, PodResponse>(podNothing));
  server.addMethod(service + "PreCreateContainerHook",
                   handler<ContainerRequest, ContainerResponse>(container));
  server.addMethod(service + "PreStartContainerHook",
                   handler<ContainerRequest, ContainerResponse>(containerNothing));
  server.addMethod(service + "PostStartContainerHook",
                   handler<ContainerRequest, ContainerResponse>(containerNothing));
  server.addMethod(service + "PostStopContainerHook",
                   handler<ContainerRequest, ContainerResponse>(containerNothing));
  server.addMethod(service + "PreUpdateContainerResourcesHook",
                   handler<ContainerRequest, ContainerResponse>(container));
}

}  // namespace koord::roles::koordlet
