// GPUEnvInject: NVIDIA_VISIBLE_DEVICES from the pod's GPU minors, HAMi-core's limits for a shared
// GPU, and what the hook server answers runtime-proxy at PreCreateContainer.
#include "runtimehooks/gpu/gpu_env.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "koord/apis/features.h"
#include "koord/core/feature_gate.h"
#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "runtimehooks/hook_table.h"
#include "runtimehooks/hookserver/runtime_hook_service.h"

using namespace koord::roles::koordlet;

namespace {

constexpr std::string_view kAllocated = "scheduling.koordinator.sh/device-allocated";

constexpr std::string_view kTwoGPUs =
    R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":"100","koordinator.sh/gpu-memory":"80Gi","koordinator.sh/gpu-memory-ratio":"100"}},)"
    R"({"minor":1,"resources":{"koordinator.sh/gpu-core":"100","koordinator.sh/gpu-memory":"80Gi","koordinator.sh/gpu-memory-ratio":"100"}}]})";
constexpr std::string_view kHalfGPU =
    R"({"gpu":[{"minor":3,"resources":{"koordinator.sh/gpu-core":"50","koordinator.sh/gpu-memory":"8Gi","koordinator.sh/gpu-memory-ratio":"50"}}]})";

using Envs = std::vector<std::pair<std::string, std::string>>;

koord::kube::Annotations allocated(std::string_view value) {
  return {{std::string(kAllocated), std::string(value)}};
}

const koord::kube::Labels kHAMi = {{"koordinator.sh/gpu-isolation-provider", "HAMi-core"}};

hookapi::ContainerResourceHookRequest request(std::optional<std::string_view> annotation,
                                              const koord::kube::Labels& labels = {}) {
  hookapi::ContainerResourceHookRequest req;
  req.mutable_pod_meta()->set_name("train");
  req.mutable_pod_meta()->set_namespace_("default");
  req.mutable_pod_meta()->set_uid("uid-1");
  req.mutable_container_meta()->set_name("main");
  (*req.mutable_container_envs())["FROM_KUBELET"] = "1";
  if (annotation)
    (*req.mutable_pod_annotations())[std::string(kAllocated)] = std::string(*annotation);
  for (const auto& [k, v] : labels)
    (*req.mutable_pod_labels())[k] = v;
  return req;
}

hookapi::ContainerResourceHookResponse answer(const hookapi::ContainerResourceHookRequest& req,
                                              bool gate = true) {
  koord::FeatureGate gates(koord::apis::koordletFeatures());
  gates.set({{"GPUEnvInject", gate}});
  const auto registry = enabledHooks(koordletRuntimeHooks(), gates);
  return containerHookAnswer(HookStage::kPreCreateContainer, req, registry, nullptr);
}

}  // namespace

TEST_CASE("GPUEnvInject: the environment from the pod's GPU allocation", "[koordlet][gpu]") {
  struct Case {
    const char* name;
    koord::kube::Annotations annotations;
    koord::kube::Labels labels;
    Envs envs;
    std::vector<HostBindMount> mounts;
  };
  const Case cases[] = {
      {"no annotation", {}, {}, {}, {}},
      {"GPU minors 0 and 1", allocated(kTwoGPUs), {}, {{"NVIDIA_VISIBLE_DEVICES", "0,1"}}, {}},
      {"the annotation's order is kept",
       allocated(R"({"gpu":[{"minor":7,"resources":{}},{"minor":2,"resources":{}}]})"),
       {},
       {{"NVIDIA_VISIBLE_DEVICES", "7,2"}},
       {}},
      {"RDMA only: no GPU",
       allocated(R"({"rdma":[{"minor":0,"resources":{"koordinator.sh/rdma":"100"}}]})"),
       {},
       {},
       {}},
      {"an empty gpu list", allocated(R"({"gpu":[]})"), {}, {}, {}},
      {"half a GPU without HAMi-core: only the GPU's minor",
       allocated(kHalfGPU),
       {},
       {{"NVIDIA_VISIBLE_DEVICES", "3"}},
       {}},
      {"half a GPU under HAMi-core: its limits and the library",
       allocated(kHalfGPU),
       kHAMi,
       {{"NVIDIA_VISIBLE_DEVICES", "3"},
        {"CUDA_DEVICE_MEMORY_LIMIT", "8589934592"},
        {"CUDA_DEVICE_SM_LIMIT", "50"},
        {"LD_PRELOAD", "/usr/local/vgpu/libvgpu.so"}},
       {{"/usr/local/vgpu/libvgpu.so"}, {"/tmp/vgpulock"}}},
      {"HAMi-core without gpu-core: no SM limit",
       allocated(
           R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-memory":"4Gi","koordinator.sh/gpu-memory-ratio":"25"}}]})"),
       kHAMi,
       {{"NVIDIA_VISIBLE_DEVICES", "0"},
        {"CUDA_DEVICE_MEMORY_LIMIT", "4294967296"},
        {"LD_PRELOAD", "/usr/local/vgpu/libvgpu.so"}},
       {{"/usr/local/vgpu/libvgpu.so"}, {"/tmp/vgpulock"}}},
      {"whole GPUs under HAMi-core: nothing to limit",
       allocated(kTwoGPUs),
       kHAMi,
       {{"NVIDIA_VISIBLE_DEVICES", "0,1"}},
       {}},
      {"another isolation provider",
       allocated(kHalfGPU),
       {{"koordinator.sh/gpu-isolation-provider", "other"}},
       {{"NVIDIA_VISIBLE_DEVICES", "3"}},
       {}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto env = gpuContainerEnv(c.annotations, c.labels);
    REQUIRE(env.has_value());
    CHECK(env->envs == c.envs);
    CHECK(env->mounts == c.mounts);
  }
}

TEST_CASE("GPUEnvInject: bad input is an error that names it", "[koordlet][gpu]") {
  struct Case {
    const char* name;
    koord::kube::Annotations annotations;
    koord::kube::Labels labels;
    const char* error;
  };
  const Case cases[] = {
      {"not JSON", allocated("{gpu"), {}, "scheduling.koordinator.sh/device-allocated"},
      {"a minor that is no number", allocated(R"({"gpu":[{"minor":"zero"}]})"), {}, "gpu[0].minor"},
      {"empty", allocated(""), {}, "scheduling.koordinator.sh/device-allocated"},
      {"HAMi-core without gpu-memory-ratio",
       allocated(R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-core":"50"}}]})"), kHAMi,
       "koordinator.sh/gpu-memory-ratio"},
      {"shared under HAMi-core without gpu-memory",
       allocated(R"({"gpu":[{"minor":0,"resources":{"koordinator.sh/gpu-memory-ratio":"50"}}]})"),
       kHAMi, "koordinator.sh/gpu-memory"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto env = gpuContainerEnv(c.annotations, c.labels);
    REQUIRE_FALSE(env.has_value());
    CHECK_THAT(env.error().message, Catch::Contains(c.error));
  }
}

TEST_CASE("GPUEnvInject: the hook server's answer at PreCreateContainer", "[koordlet][gpu]") {
  auto two = answer(request(kTwoGPUs));
  CHECK(two.container_envs().size() == 1);
  CHECK(two.container_envs().at("NVIDIA_VISIBLE_DEVICES") == "0,1");
  CHECK(two.container_mounts().empty());

  auto shared = answer(request(kHalfGPU, kHAMi));
  CHECK(shared.container_envs().at("CUDA_DEVICE_MEMORY_LIMIT") == "8589934592");
  CHECK(shared.container_envs().at("CUDA_DEVICE_SM_LIMIT") == "50");
  CHECK(shared.container_envs().at("LD_PRELOAD") == "/usr/local/vgpu/libvgpu.so");
  REQUIRE(shared.container_mounts().size() == 2);
  CHECK(shared.container_mounts(0).host_path() == "/usr/local/vgpu/libvgpu.so");
  CHECK(shared.container_mounts(0).container_path() == "/usr/local/vgpu/libvgpu.so");
  CHECK(shared.container_mounts(1).host_path() == "/tmp/vgpulock");

  // Unchanged: a malformed annotation (logged), a pod without one, the gate off (its default).
  for (const auto& resp : {answer(request(R"({"gpu":[{"minor":)", kHAMi)),
                           answer(request(std::nullopt)), answer(request(kTwoGPUs), false)}) {
    CHECK(resp.container_envs().empty());
    CHECK(resp.container_mounts().empty());
    CHECK_FALSE(resp.has_container_resources());
  }
  koord::FeatureGate defaults(koord::apis::koordletFeatures());
  CHECK_FALSE(defaults.enabled("GPUEnvInject"));
}
