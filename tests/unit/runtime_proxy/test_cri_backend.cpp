#include "test_cri_backend.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/server_context.h>

#include <chrono>
#include <stdexcept>

#include "cri/runtime/v1/api.grpc.pb.h"
#include "cri/runtime/v1alpha2/api.grpc.pb.h"

namespace proxy_test {

namespace {

// What the runtime saw, as the test reads it back: "x-test" metadata and the deadline left.
std::string seen(const grpc::ServerContext& ctx) {
  std::string out;
  for (const auto& [k, v] : ctx.client_metadata()) {
    if (k == "x-test")
      out += "x-test=" + std::string(v.data(), v.size()) + ";";
  }
  const auto left = ctx.deadline() - std::chrono::system_clock::now();
  if (ctx.deadline() != std::chrono::system_clock::time_point::max())
    out += "deadline-ms=" +
           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(left).count());
  return out;
}

// What the runtime saw of a CreateContainer, as the test reads it back from the container id.
template <typename Request>
std::string describe(const Request& req) {
  std::string env;
  for (const auto& kv : req.config().envs())
    env += kv.key() + "=" + kv.value() + ",";
  const auto& ann = req.config().annotations();
  auto hooked = ann.find("hooked");
  return "shares=" + std::to_string(req.config().linux().resources().cpu_shares()) +
         ";cgroup=" + req.sandbox_config().linux().cgroup_parent() + ";env=" + env +
         ";hooked=" + (hooked == ann.end() ? "" : hooked->second);
}

class RuntimeV1 final : public runtime::v1::RuntimeService::Service {
 public:
  std::atomic<int>& calls;
  std::atomic<long> updated_shares{-1};
  explicit RuntimeV1(std::atomic<int>& c) : calls(c) {}

  grpc::Status StartContainer(grpc::ServerContext*, const runtime::v1::StartContainerRequest*,
                              runtime::v1::StartContainerResponse*) override {
    ++calls;
    return grpc::Status::OK;
  }
  grpc::Status StopContainer(grpc::ServerContext*, const runtime::v1::StopContainerRequest*,
                             runtime::v1::StopContainerResponse*) override {
    ++calls;
    return grpc::Status::OK;
  }
  grpc::Status RemoveContainer(grpc::ServerContext*, const runtime::v1::RemoveContainerRequest*,
                               runtime::v1::RemoveContainerResponse*) override {
    ++calls;
    return grpc::Status::OK;
  }
  grpc::Status UpdateContainerResources(grpc::ServerContext*,
                                        const runtime::v1::UpdateContainerResourcesRequest* req,
                                        runtime::v1::UpdateContainerResourcesResponse*) override {
    ++calls;
    updated_shares = req->linux().cpu_shares();
    return grpc::Status::OK;
  }

  grpc::Status Version(grpc::ServerContext* ctx, const runtime::v1::VersionRequest* req,
                       runtime::v1::VersionResponse* resp) override {
    ++calls;
    resp->set_version(req->version());
    resp->set_runtime_name("test-runtime v1");
    resp->set_runtime_version(seen(*ctx));
    resp->set_runtime_api_version("v1");
    return grpc::Status::OK;
  }
  grpc::Status ListContainers(grpc::ServerContext*, const runtime::v1::ListContainersRequest* req,
                              runtime::v1::ListContainersResponse* resp) override {
    ++calls;
    // As many containers as the filter's label selector asks for, each with a big label: a
    // response of several megabytes.
    if (!req->has_filter()) {
      // What a node that ran pods before the proxy started has: two containers of the pod
      // ListPodSandbox shows, one of a sandbox that is gone.
      for (const char* id : {"web-main", "web-sidecar"}) {
        auto* c = resp->add_containers();
        c->set_id(id);
        c->set_pod_sandbox_id("sandbox-web");
        c->mutable_metadata()->set_name(std::string(id).substr(4));
        (*c->mutable_annotations())["io.kubernetes.container.hash"] = std::string("abc");
      }
      auto* orphan = resp->add_containers();
      orphan->set_id("orphan");
      orphan->set_pod_sandbox_id("sandbox-gone");
      return grpc::Status::OK;
    }
    int n = 0;
    {
      auto it = req->filter().label_selector().find("count");
      if (it != req->filter().label_selector().end())
        n = std::stoi(it->second);
    }
    for (int i = 0; i < n; ++i) {
      auto* c = resp->add_containers();
      c->set_id("c" + std::to_string(i));
      (*c->mutable_labels())["blob"] = std::string(1024, 'x');
    }
    return grpc::Status::OK;
  }
  grpc::Status ListPodSandbox(grpc::ServerContext*, const runtime::v1::ListPodSandboxRequest*,
                              runtime::v1::ListPodSandboxResponse* resp) override {
    ++calls;
    auto* web = resp->add_items();
    web->set_id("sandbox-web");
    web->set_state(runtime::v1::SANDBOX_READY);
    web->mutable_metadata()->set_name("web");
    web->mutable_metadata()->set_namespace_("default");
    web->mutable_metadata()->set_uid("uid-web");
    (*web->mutable_labels())["koordinator.sh/qosClass"] = std::string("BE");
    (*web->mutable_annotations())["note"] = std::string("from the runtime");
    auto* stopped = resp->add_items();
    stopped->set_id("sandbox-stopped");
    stopped->set_state(runtime::v1::SANDBOX_NOTREADY);
    stopped->mutable_metadata()->set_name("done");
    return grpc::Status::OK;
  }
  grpc::Status PodSandboxStatus(grpc::ServerContext*,
                                const runtime::v1::PodSandboxStatusRequest* req,
                                runtime::v1::PodSandboxStatusResponse* resp) override {
    ++calls;
    if (req->pod_sandbox_id() != "sandbox-web" || !req->verbose())
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such sandbox");
    // containerd's verbose form: the sandbox's config, as JSON, under "info".
    (*resp->mutable_info())["info"] =
        std::string(R"({"pid":42,"config":{"metadata":{"name":"web"},"linux":)"
                    R"({"cgroup_parent":"/kubepods/besteffort/poduid-web"}}})");
    return grpc::Status::OK;
  }
  grpc::Status RunPodSandbox(grpc::ServerContext*, const runtime::v1::RunPodSandboxRequest* req,
                             runtime::v1::RunPodSandboxResponse* resp) override {
    ++calls;
    resp->set_pod_sandbox_id(req->config().metadata().name() + "|" +
                             req->config().linux().cgroup_parent());
    return grpc::Status::OK;
  }
  grpc::Status CreateContainer(grpc::ServerContext*, const runtime::v1::CreateContainerRequest* req,
                               runtime::v1::CreateContainerResponse* resp) override {
    ++calls;
    resp->set_container_id(describe(*req));
    return grpc::Status::OK;
  }
  grpc::Status ContainerStatus(grpc::ServerContext*, const runtime::v1::ContainerStatusRequest* req,
                               runtime::v1::ContainerStatusResponse*) override {
    ++calls;
    return grpc::Status(
        grpc::StatusCode::NOT_FOUND,
        "an error occurred when try to find container \"" + req->container_id() + "\": not found");
  }
  grpc::Status GetContainerEvents(
      grpc::ServerContext*, const runtime::v1::GetEventsRequest*,
      grpc::ServerWriter<runtime::v1::ContainerEventResponse>* writer) override {
    ++calls;
    for (int i = 0; i < 3; ++i) {
      runtime::v1::ContainerEventResponse e;
      e.set_container_id("c" + std::to_string(i));
      e.set_created_at(i);
      writer->Write(e);
    }
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "three is all");
  }
};

class RuntimeV1alpha2 final : public runtime::v1alpha2::RuntimeService::Service {
 public:
  std::atomic<int>& calls;
  explicit RuntimeV1alpha2(std::atomic<int>& c) : calls(c) {}

  grpc::Status Version(grpc::ServerContext* ctx, const runtime::v1alpha2::VersionRequest* req,
                       runtime::v1alpha2::VersionResponse* resp) override {
    ++calls;
    resp->set_version(req->version());
    resp->set_runtime_name("test-runtime v1alpha2");
    resp->set_runtime_version(seen(*ctx));
    return grpc::Status::OK;
  }
  grpc::Status RunPodSandbox(grpc::ServerContext*,
                             const runtime::v1alpha2::RunPodSandboxRequest* req,
                             runtime::v1alpha2::RunPodSandboxResponse* resp) override {
    ++calls;
    auto hooked = req->config().annotations().find("hooked");
    resp->set_pod_sandbox_id(req->config().metadata().name() + "|" +
                             req->config().linux().cgroup_parent() + "|" +
                             (hooked == req->config().annotations().end() ? "" : hooked->second));
    return grpc::Status::OK;
  }
  grpc::Status CreateContainer(grpc::ServerContext*,
                               const runtime::v1alpha2::CreateContainerRequest* req,
                               runtime::v1alpha2::CreateContainerResponse* resp) override {
    ++calls;
    resp->set_container_id(describe(*req));
    return grpc::Status::OK;
  }
};

class ImageV1 final : public runtime::v1::ImageService::Service {
 public:
  grpc::Status ListImages(grpc::ServerContext*, const runtime::v1::ListImagesRequest*,
                          runtime::v1::ListImagesResponse* resp) override {
    resp->add_images()->set_id("sha256:from-the-image-socket");
    return grpc::Status::OK;
  }
};

class ImageV1alpha2 final : public runtime::v1alpha2::ImageService::Service {
 public:
  grpc::Status ListImages(grpc::ServerContext*, const runtime::v1alpha2::ListImagesRequest*,
                          runtime::v1alpha2::ListImagesResponse* resp) override {
    resp->add_images()->set_id("sha256:v1alpha2-from-the-image-socket");
    return grpc::Status::OK;
  }
};

std::unique_ptr<grpc::Server> serve(const std::string& socket,
                                    std::initializer_list<grpc::Service*> services) {
  grpc::ServerBuilder b;
  b.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
  b.SetMaxReceiveMessageSize(64 << 20);
  b.SetMaxSendMessageSize(64 << 20);
  for (auto* s : services)
    b.RegisterService(s);
  auto server = b.BuildAndStart();
  if (!server)
    throw std::runtime_error("test CRI backend: cannot listen on " + socket);
  return server;
}

}  // namespace

struct TestCriBackend::Services {
  std::atomic<int> calls{0};
  RuntimeV1 v1{calls};
  RuntimeV1alpha2 v1alpha2{calls};
  ImageV1 image_v1;
  ImageV1alpha2 image_v1alpha2;
};

TestCriBackend::TestCriBackend(const std::string& runtime_socket, const std::string& image_socket)
    : services_(std::make_unique<Services>()) {
  runtime_ = serve(runtime_socket, {&services_->v1, &services_->v1alpha2});
  image_ = serve(image_socket, {&services_->image_v1, &services_->image_v1alpha2});
}

TestCriBackend::~TestCriBackend() {
  // Calls the proxy still has open get a moment, then both servers are fully drained (their
  // polling threads joined) before the services they call into are destroyed.
  const auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(1);
  runtime_->Shutdown(deadline);
  image_->Shutdown(deadline);
  runtime_->Wait();
  image_->Wait();
}

int TestCriBackend::runtimeCalls() const {
  return services_->calls.load();
}

long TestCriBackend::lastUpdatedShares() const {
  return services_->v1.updated_shares.load();
}

std::shared_ptr<grpc::Channel> dial(const std::string& socket, bool own_connection) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  if (own_connection)
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
}

}  // namespace proxy_test
