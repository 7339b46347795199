#include "runtimehooks/hookserver/runtime_hook_service.h"

#include <string>

#include "koord/apis/extended_resource_spec.h"
#include "koord/apis/extension.h"
#include "koord/core/log.h"
#include "runtimehooks/batchresource/batch_resource.h"

namespace koord::roles::koordlet {

namespace {

using ProtoMap = google::protobuf::Map<std::string, std::string>;

// The pod as far as BatchResource needs it: its labels and the containers' batch resources.
std::optional<BatchResourcePlan> planFor(const hookapi::PodSandboxMetadata& meta,
                                         const ProtoMap& labels, const ProtoMap& annotations,
                                         PodMeta& pod) {
  pod.namespace_ = meta.namespace_();
  pod.name = meta.name();
  pod.uid = meta.uid();
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

}  // namespace

hookapi::PodSandboxHookResponse podSandboxHookAnswer(const hookapi::PodSandboxHookRequest& req) {
  hookapi::PodSandboxHookResponse out;
  PodMeta pod;
  if (auto plan = planFor(req.pod_meta(), req.labels(), req.annotations(), pod))
    setValues(plan->pod, *out.mutable_resources());
  return out;
}

hookapi::ContainerResourceHookResponse containerHookAnswer(
    const hookapi::ContainerResourceHookRequest& req) {
  hookapi::ContainerResourceHookResponse out;
  PodMeta pod;
  auto plan = planFor(req.pod_meta(), req.pod_labels(), req.pod_annotations(), pod);
  if (!plan)
    return out;
  for (std::size_t i = 0; i < pod.containers.size(); ++i) {
    if (pod.containers[i].name == req.container_meta().name()) {
      setValues(plan->containers[i], *out.mutable_container_resources());
      KOORD_VLOG(4, "runtime hook BatchResource: {}/{}: cpu.shares {} cfs_quota {} memory {}",
                 pod.key(), req.container_meta().name(), plan->containers[i].cpu_shares,
                 plan->containers[i].cfs_quota, plan->containers[i].memory_limit);
      break;
    }
  }
  return out;
}

grpc::Status RuntimeHookService::PreRunPodSandboxHook(grpc::ServerContext*,
                                                      const hookapi::PodSandboxHookRequest* req,
                                                      hookapi::PodSandboxHookResponse* resp) {
  *resp = podSandboxHookAnswer(*req);
  return grpc::Status::OK;
}

grpc::Status RuntimeHookService::PostStopPodSandboxHook(grpc::ServerContext*,
                                                        const hookapi::PodSandboxHookRequest*,
                                                        hookapi::PodSandboxHookResponse*) {
  return grpc::Status::OK;
}

grpc::Status RuntimeHookService::PreCreateContainerHook(
    grpc::ServerContext*, const hookapi::ContainerResourceHookRequest* req,
    hookapi::ContainerResourceHookResponse* resp) {
  *resp = containerHookAnswer(*req);
  return grpc::Status::OK;
}

grpc::Status RuntimeHookService::PreStartContainerHook(grpc::ServerContext*,
                                                       const hookapi::ContainerResourceHookRequest*,
                                                       hookapi::ContainerResourceHookResponse*) {
  return grpc::Status::OK;
}

grpc::Status RuntimeHookService::PostStartContainerHook(
    grpc::ServerContext*, const hookapi::ContainerResourceHookRequest*,
    hookapi::ContainerResourceHookResponse*) {
  return grpc::Status::OK;
}

grpc::Status RuntimeHookService::PostStopContainerHook(grpc::ServerContext*,
                                                       const hookapi::ContainerResourceHookRequest*,
                                                       hookapi::ContainerResourceHookResponse*) {
  return grpc::Status::OK;
}

grpc::Status RuntimeHookService::PreUpdateContainerResourcesHook(
    grpc::ServerContext*, const hookapi::ContainerResourceHookRequest* req,
    hookapi::ContainerResourceHookResponse* resp) {
  *resp = containerHookAnswer(*req);
  return grpc::Status::OK;
}

}  // namespace koord::roles::koordlet
