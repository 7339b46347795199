// The koordlet's side of Koordinator's RuntimeHookService: what koord runtime-proxy is told to
// change in a pod's or container's CRI request before the runtime creates it.
#pragma once

#include "koordinator/runtime/v1alpha1/api.grpc.pb.h"

namespace koord::roles::koordlet {

namespace hookapi = ::runtime::v1alpha1;

/// BatchResource (the same policy as the reconciler): a BE pod's batch-cpu and batch-memory,
/// from its extended-resource-spec annotation, become its containers' cpu.shares, CFS quota
/// and memory limit at creation. Anything else is answered with no change. A hook never
/// fails a pod: an annotation that does not parse is logged (with the pod's key) and skipped.
class RuntimeHookService final : public hookapi::RuntimeHookService::Service {
 public:
  grpc::Status PreRunPodSandboxHook(grpc::ServerContext* context,
                                    const hookapi::PodSandboxHookRequest* request,
                                    hookapi::PodSandboxHookResponse* response) override;
  grpc::Status PostStopPodSandboxHook(grpc::ServerContext* context,
                                      const hookapi::PodSandboxHookRequest* request,
                                      hookapi::PodSandboxHookResponse* response) override;
  grpc::Status PreCreateContainerHook(grpc::ServerContext* context,
                                      const hookapi::ContainerResourceHookRequest* request,
                                      hookapi::ContainerResourceHookResponse* response) override;
  grpc::Status PreStartContainerHook(grpc::ServerContext* context,
                                     const hookapi::ContainerResourceHookRequest* request,
                                     hookapi::ContainerResourceHookResponse* response) override;
  grpc::Status PostStartContainerHook(grpc::ServerContext* context,
                                      const hookapi::ContainerResourceHookRequest* request,
                                      hookapi::ContainerResourceHookResponse* response) override;
  grpc::Status PostStopContainerHook(grpc::ServerContext* context,
                                     const hookapi::ContainerResourceHookRequest* request,
                                     hookapi::ContainerResourceHookResponse* response) override;
  grpc::Status PreUpdateContainerResourcesHook(
      grpc::ServerContext* context, const hookapi::ContainerResourceHookRequest* request,
      hookapi::ContainerResourceHookResponse* response) override;
};

/// The answers without gRPC, for tests.
hookapi::PodSandboxHookResponse podSandboxHookAnswer(const hookapi::PodSandboxHookRequest& req);
hookapi::ContainerResourceHookResponse containerHookAnswer(
    const hookapi::ContainerResourceHookRequest& req);

}  // namespace koord::roles::koordlet
