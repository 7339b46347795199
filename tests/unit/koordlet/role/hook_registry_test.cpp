// Runtime hooks register by name and stage: a name is taken once, a stage is answered only by
// the hooks registered for it (in the hook server too), and the koordlet's table registers each
// hook where its gate is on, with the stages and reconcilers it declares.
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/features.h"
#include "koord/core/feature_gate.h"
#include "koordinator/runtime/v1alpha1/api.grpc.pb.h"
#include "runtimehooks/hook_table.h"
#include "runtimehooks/hooks/hook_registry.h"
#include "runtimehooks/hookserver/hook_server.h"
#include "runtimehooks/hookserver/runtime_hook_service.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;

namespace {

void setOOMScoreAdj(const ContainerHookContext&, hookapi::ContainerResourceHookResponse& out) {
  out.mutable_container_resources()->set_oom_score_adj(7);
}
void setCPUShares(const ContainerHookContext&, hookapi::ContainerResourceHookResponse& out) {
  out.mutable_container_resources()->set_cpu_shares(99);
}
void setPodShares(const PodHookContext&, hookapi::PodSandboxHookResponse& out) {
  out.mutable_resources()->set_cpu_shares(42);
}

const RuntimeHook kAtCreate{.name = "AtCreate",
                            .gate = "FakeOn",
                            .stages = {HookStage::kPreCreateContainer},
                            .container_hook = setOOMScoreAdj};
const RuntimeHook kAtStart{.name = "AtStart",
                           .gate = "FakeOn",
                           .stages = {HookStage::kPreStartContainer},
                           .container_hook = setCPUShares};
const RuntimeHook kAtSandbox{.name = "AtSandbox",
                             .gate = "FakeOn",
                             .stages = {HookStage::kPreRunPodSandbox},
                             .pod_hook = setPodShares};

std::vector<std::string_view> names(std::span<const RuntimeHook* const> hooks) {
  std::vector<std::string_view> out;
  for (const auto* h : hooks)
    out.push_back(h->name);
  return out;
}

std::vector<std::string_view> names(const HookRegistry& registry) {
  std::vector<std::string_view> out;
  for (const auto& h : registry.hooks())
    out.push_back(h.name);
  return out;
}

HookRegistry koordletHooks(const std::map<std::string, bool>& gate_values) {
  koord::FeatureGate gates(koord::apis::koordletFeatures());
  gates.set(gate_values);
  return enabledHooks(koordletRuntimeHooks(), gates);
}

}  // namespace

TEST_CASE("hook registry: a name is registered once", "[koordlet][runtimehooks]") {
  HookRegistry registry;
  REQUIRE(registry.add(kAtCreate).has_value());
  auto again = registry.add(RuntimeHook{.name = "AtCreate",
                                        .gate = "FakeOn",
                                        .stages = {HookStage::kPreStartContainer},
                                        .container_hook = setCPUShares});
  REQUIRE_FALSE(again.has_value());
  CHECK_THAT(again.error().message, Catch::Contains("AtCreate is registered already"));
  // The refused registration left nothing behind at its stage.
  CHECK(registry.at(HookStage::kPreStartContainer).empty());
  CHECK(names(registry) == std::vector<std::string_view>{"AtCreate"});

  // A table that repeats a name is a koord bug: the koordlet does not start with it.
  koord::FeatureGate gates({{"FakeOn", true}});
  const RuntimeHook twice[] = {kAtCreate, kAtCreate};
  CHECK_THROWS_AS(enabledHooks(twice, gates), std::logic_error);
}

TEST_CASE("hook registry: a stage needs the hook's function for it", "[koordlet][runtimehooks]") {
  HookRegistry registry;
  auto no_pod_hook = registry.add(RuntimeHook{
      .name = "Half", .stages = {HookStage::kPreRunPodSandbox}, .container_hook = setCPUShares});
  REQUIRE_FALSE(no_pod_hook.has_value());
  CHECK_THAT(no_pod_hook.error().message, Catch::Contains("PreRunPodSandbox"));
  CHECK_FALSE(
      registry
          .add(RuntimeHook{
              .name = "Half", .stages = {HookStage::kPostStopContainer}, .pod_hook = setPodShares})
          .has_value());
  CHECK(registry.hooks().empty());
}

TEST_CASE("hook registry: a stage is answered only by the hooks registered for it",
          "[koordlet][runtimehooks]") {
  koord::FeatureGate gates({{"FakeOn", true}, {"FakeOff", false}});
  RuntimeHook off = kAtCreate;
  off.name = "GatedOff";
  off.gate = "FakeOff";
  off.container_hook = setCPUShares;
  const RuntimeHook table[] = {kAtCreate, kAtStart, kAtSandbox, off};
  const auto registry = enabledHooks(table, gates);
  CHECK(names(registry) == std::vector<std::string_view>{"AtCreate", "AtStart", "AtSandbox"});
  CHECK(names(registry.at(HookStage::kPreCreateContainer)) ==
        std::vector<std::string_view>{"AtCreate"});

  hookapi::ContainerResourceHookRequest container;
  container.mutable_container_meta()->set_name("main");
  auto create = containerHookAnswer(HookStage::kPreCreateContainer, container, registry, nullptr);
  CHECK(create.container_resources().oom_score_adj() == 7);
  CHECK(create.container_resources().cpu_shares() == 0);  // the gated-off hook never ran
  auto start = containerHookAnswer(HookStage::kPreStartContainer, container, registry, nullptr);
  CHECK(start.container_resources().cpu_shares() == 99);
  CHECK(start.container_resources().oom_score_adj() == 0);
  for (auto stage : {HookStage::kPreUpdateContainerResources, HookStage::kPostStartContainer,
                     HookStage::kPostStopContainer}) {
    INFO(hookStageName(stage));
    CHECK_FALSE(containerHookAnswer(stage, container, registry, nullptr).has_container_resources());
  }
  hookapi::PodSandboxHookRequest pod;
  CHECK(podSandboxHookAnswer(HookStage::kPreRunPodSandbox, pod, registry, nullptr)
            .resources()
            .cpu_shares() == 42);
  CHECK_FALSE(
      podSandboxHookAnswer(HookStage::kPostStopPodSandbox, pod, registry, nullptr).has_resources());

  // The hook server maps each method to its stage.
  koord::testing::TempTree t("koordlet-hook-registry");
  std::filesystem::create_directories(t.root() / "run");
  HookServerOptions o;
  o.addr = (t.root() / "run/koordlet.sock").string();
  o.host_endpoint = "/var/run/koordlet/koordlet.sock";
  o.config_path = (t.root() / "hookserver.d").string();
  o.hooks = &registry;
  HookServer server(o);
  server.start();
  auto stub = hookapi::RuntimeHookService::NewStub(
      grpc::CreateChannel("unix:" + o.addr, grpc::InsecureChannelCredentials()));
  using Response = hookapi::ContainerResourceHookResponse;
  auto call = [&](auto method) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    Response resp;
    REQUIRE(method(&ctx, &resp).ok());
    return resp;
  };
  CHECK(call([&](grpc::ClientContext* ctx, Response* resp) {
          return stub->PreCreateContainerHook(ctx, container, resp);
        })
            .container_resources()
            .oom_score_adj() == 7);
  CHECK(call([&](grpc::ClientContext* ctx, Response* resp) {
          return stub->PreStartContainerHook(ctx, container, resp);
        })
            .container_resources()
            .cpu_shares() == 99);
  CHECK_FALSE(call([&](grpc::ClientContext* ctx, Response* resp) {
                return stub->PreUpdateContainerResourcesHook(ctx, container, resp);
              }).has_container_resources());
  server.stop();
}

TEST_CASE("hook registry: the koordlet's hooks, their stages and reconcilers",
          "[koordlet][runtimehooks]") {
  // Koordinator's defaults: GroupIdentity, BatchResource and CPUSetAllocator on, OOMScoreAdj and
  // CoreSched off.
  const auto defaults = koordletHooks({});
  CHECK(names(defaults) ==
        std::vector<std::string_view>{"GroupIdentity", "BatchResource", "CPUSetAllocator"});
  CHECK(names(defaults.at(HookStage::kPreRunPodSandbox)) ==
        std::vector<std::string_view>{"GroupIdentity", "BatchResource", "CPUSetAllocator"});
  // BatchResource first: CPUSetAllocator's unlimited quota wins over its quota.
  for (auto stage : {HookStage::kPreCreateContainer, HookStage::kPreUpdateContainerResources}) {
    INFO(hookStageName(stage));
    CHECK(names(defaults.at(stage)) ==
          std::vector<std::string_view>{"BatchResource", "CPUSetAllocator"});
  }
  for (auto stage : {HookStage::kPostStopPodSandbox, HookStage::kPreStartContainer,
                     HookStage::kPostStartContainer, HookStage::kPostStopContainer}) {
    INFO(hookStageName(stage));
    CHECK(defaults.at(stage).empty());
  }
  CHECK(defaults.servesAnyStage());
  REQUIRE(defaults.hooks().front().reconcile);
  CHECK(defaults.hooks().front().reconcile->level == ReconcileLevel::kPod);
  REQUIRE(defaults.hooks().back().reconcile);
  CHECK(defaults.hooks().back().reconcile->task_name == "cpuset");

  const auto all = koordletHooks({{"OOMScoreAdj", true}, {"CoreSched", true}});
  CHECK(names(all) == std::vector<std::string_view>{"GroupIdentity", "BatchResource",
                                                    "CPUSetAllocator", "OOMScoreAdj", "CoreSched"});
  CHECK(names(all.at(HookStage::kPreCreateContainer)) ==
        std::vector<std::string_view>{"BatchResource", "CPUSetAllocator", "OOMScoreAdj"});

  // CoreSched only reconciles the QoS tiers: with it alone there is nothing to serve.
  const auto core_sched = koordletHooks({{"GroupIdentity", false},
                                         {"BatchResource", false},
                                         {"CPUSetAllocator", false},
                                         {"CoreSched", true}});
  CHECK(names(core_sched) == std::vector<std::string_view>{"CoreSched"});
  CHECK_FALSE(core_sched.servesAnyStage());
  REQUIRE(core_sched.hooks().front().reconcile);
  CHECK(core_sched.hooks().front().reconcile->level == ReconcileLevel::kKubeQOS);
  CHECK(core_sched.hooks().front().reconcile->task_name == "core sched cpu.idle");
}

TEST_CASE("hook registry: the registration lists every stage in Koordinator's order",
          "[koordlet][runtimehooks]") {
  CHECK(koordletHookTypes() ==
        std::vector<std::string>{"PreRunPodSandbox", "PostStopPodSandbox", "PreCreateContainer",
                                 "PreStartContainer", "PostStartContainer",
                                 "PreUpdateContainerResources", "PostStopContainer"});
}
