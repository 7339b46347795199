// The koordlet's hook server for koord runtime-proxy: BatchResource answers from the
// extended-resource-spec annotation (the reconciler's policy), the koordlet.json registration,
// and the real gRPC server on a unix socket.
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <stdlib.h>

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "koord/apis/features.h"
#include "koord/app/role_app.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/feature_gate.h"
#include "koordinator/runtime/v1alpha1/api.grpc.pb.h"
#include "runtimehooks/hook_table.h"
#include "runtimehooks/hookserver/hook_server.h"
#include "runtimehooks/hookserver/runtime_hook_service.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;

namespace {

constexpr const char* kSpec =
    R"({"containers":{"main":{"limits":{"kubernetes.io/batch-cpu":"2k","kubernetes.io/batch-memory":"1Gi"},)"
    R"("requests":{"kubernetes.io/batch-cpu":"1k","kubernetes.io/batch-memory":"512Mi"}},)"
    R"("sidecar":{"requests":{"kubernetes.io/batch-cpu":"500"}}}})";

hookapi::ContainerResourceHookRequest containerRequest(const std::string& qos,
                                                       const std::string& container,
                                                       const std::string& spec = kSpec) {
  hookapi::ContainerResourceHookRequest req;
  req.mutable_pod_meta()->set_name("be-pod");
  req.mutable_pod_meta()->set_namespace_("default");
  req.mutable_pod_meta()->set_uid("uid-1");
  req.mutable_container_meta()->set_name(container);
  if (!qos.empty())
    (*req.mutable_pod_labels())["koordinator.sh/qosClass"] = qos;
  if (!spec.empty())
    (*req.mutable_pod_annotations())["node.koordinator.sh/extended-resource-spec"] = spec;
  return req;
}

// The koordlet's hook table with its gates at their defaults (BatchResource and CPUSetAllocator
// on, OOMScoreAdj off) and `changes` on top.
HookRegistry hooks(const std::map<std::string, bool>& changes = {}) {
  koord::FeatureGate gates(koord::apis::koordletFeatures());
  gates.set(changes);
  return enabledHooks(koordletRuntimeHooks(), gates);
}

const HookRegistry& defaultHooks() {
  static const HookRegistry registry = hooks();
  return registry;
}

// What runtime-proxy is told at PreCreateContainer.
hookapi::ContainerResourceHookResponse preCreateAnswer(
    const hookapi::ContainerResourceHookRequest& req, const HookRegistry& registry = defaultHooks(),
    const koord::cgroup::ResourceExecutor* cgroups = nullptr) {
  return containerHookAnswer(HookStage::kPreCreateContainer, req, registry, cgroups);
}

std::string tempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "koordlet-hooks-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
}

}  // namespace

TEST_CASE("runtime hook BatchResource: a BE container gets its batch cgroup values at creation",
          "[koordlet][runtimehooks]") {
  auto main = preCreateAnswer(containerRequest("BE", "main"));
  REQUIRE(main.has_container_resources());
  CHECK(main.container_resources().cpu_shares() == 1024);   // 1000m requested
  CHECK(main.container_resources().cpu_quota() == 200000);  // 2000m limit
  CHECK(main.container_resources().cpu_period() == 100000);
  CHECK(main.container_resources().memory_limit_in_bytes() == 1073741824);
  // No limits: unlimited quota (-1, which the proxy applies), memory left as kubelet set it.
  auto sidecar = preCreateAnswer(containerRequest("BE", "sidecar"));
  CHECK(sidecar.container_resources().cpu_shares() == 512);
  CHECK(sidecar.container_resources().cpu_quota() == -1);
  CHECK(sidecar.container_resources().memory_limit_in_bytes() == 0);

  // Not BE, a container the spec does not name, no spec, a broken spec: no change at all.
  CHECK_FALSE(preCreateAnswer(containerRequest("LS", "main")).has_container_resources());
  CHECK_FALSE(preCreateAnswer(containerRequest("", "main")).has_container_resources());
  CHECK_FALSE(preCreateAnswer(containerRequest("BE", "other")).has_container_resources());
  CHECK_FALSE(preCreateAnswer(containerRequest("BE", "main", "")).has_container_resources());
  CHECK_FALSE(preCreateAnswer(containerRequest("BE", "main", "{")).has_container_resources());

  // The pod: requests summed, a container without a limit makes it unlimited.
  hookapi::PodSandboxHookRequest pod;
  pod.mutable_pod_meta()->set_name("be-pod");
  (*pod.mutable_labels())["koordinator.sh/qosClass"] = "BE";
  (*pod.mutable_annotations())["node.koordinator.sh/extended-resource-spec"] = kSpec;
  auto answer = podSandboxHookAnswer(HookStage::kPreRunPodSandbox, pod, defaultHooks(), nullptr);
  CHECK(answer.resources().cpu_shares() == 1536);
  CHECK(answer.resources().cpu_quota() == -1);
}

TEST_CASE("runtime hook BatchResource: a container's quota stays within its pod cgroup's",
          "[koordlet][runtimehooks]") {
  // CPU suppression holds the pod below its own limit; cgroup v1 refuses a container quota above
  // the pod's, and runc would fail the container.
  koord::testing::TempTree t("koordlet-hook-quota");
  t.write("cpu/kubepods/besteffort/pod1234/cpu.cfs_quota_us", "28300\n");
  koord::cgroup::ResourceExecutor e(
      {t.root(), koord::cgroup::CgroupVersion::kV1, koord::cgroup::CgroupDriver::kCgroupfs});
  auto req = containerRequest("BE", "main");
  req.set_pod_cgroup_parent("/kubepods/besteffort/pod1234");
  CHECK(preCreateAnswer(req, defaultHooks(), &e).container_resources().cpu_quota() == 28300);
  t.write("cpu/kubepods/besteffort/pod1234/cpu.cfs_quota_us", "-1\n");
  CHECK(preCreateAnswer(req, defaultHooks(), &e).container_resources().cpu_quota() == 200000);
  // A parent that is not a cgroup directory is not read.
  req.set_pod_cgroup_parent("/kubepods/../../etc");
  CHECK(preCreateAnswer(req, defaultHooks(), &e).container_resources().cpu_quota() == 200000);
}

TEST_CASE("runtime hook CPUSetAllocator: a pod bound to CPUs gets its cpuset and no quota",
          "[koordlet][runtimehooks]") {
  auto req = containerRequest("LSR", "main", "");
  auto& annotations = *req.mutable_pod_annotations();
  annotations["scheduling.koordinator.sh/resource-status"] =
      std::string(R"({"cpuset":"3,0-2","numaNodeResources":[{"node":0}]})");
  auto answer = preCreateAnswer(req);
  CHECK(answer.container_resources().cpuset_cpus() == "0-3");
  CHECK(answer.container_resources().cpu_quota() == -1);
  // With the gate off, nothing.
  CHECK_FALSE(preCreateAnswer(req, hooks({{"CPUSetAllocator", false}})).has_container_resources());
  // No cpuset, an empty one, null: nothing. Malformed: nothing either (logged), never a failure.
  for (const char* text : {R"({"numaNodeResources":[]})", R"({"cpuset":""})", "null",
                           R"({"cpuset":"0-"})", R"({"cpuset":"a"})", R"({"cpuset":3})", "[1]", "{",
                           R"({"cpuset":"3-1"})", R"({"cpuset":"0,,1"})"}) {
    INFO(text);
    annotations["scheduling.koordinator.sh/resource-status"] = std::string(text);
    CHECK_FALSE(preCreateAnswer(req).has_container_resources());
  }
  // LSE is bound as LSR is.
  auto lse = containerRequest("LSE", "main", "");
  (*lse.mutable_pod_annotations())["scheduling.koordinator.sh/resource-status"] =
      std::string(R"({"cpuset":"4-5"})");
  CHECK(preCreateAnswer(lse).container_resources().cpuset_cpus() == "4-5");
}

TEST_CASE("runtime hook CPUSetAllocator: a cpuset on a pod that is not LSE or LSR is ignored",
          "[koordlet][runtimehooks]") {
  // Anyone who may create a pod may write resource-status: honoured for any QoS, it pinned a pod
  // onto another pod's exclusive CPUs and lifted its quota.
  for (const char* qos : {"LS", "BE", "SYSTEM", "", "lsr", "Guaranteed"}) {
    INFO(qos);
    auto req = containerRequest(qos, "main", "");
    (*req.mutable_pod_annotations())["scheduling.koordinator.sh/resource-status"] =
        std::string(R"({"cpuset":"2-3"})");
    CHECK_FALSE(preCreateAnswer(req).has_container_resources());
  }
  // A BE pod with a batch plan keeps the plan's quota and gets no cpuset.
  auto be = containerRequest("BE", "main");
  (*be.mutable_pod_annotations())["scheduling.koordinator.sh/resource-status"] =
      std::string(R"({"cpuset":"2-3"})");
  auto both = preCreateAnswer(be);
  CHECK(both.container_resources().cpu_shares() == 1024);
  CHECK(both.container_resources().cpuset_cpus().empty());
  CHECK(both.container_resources().cpu_quota() == 200000);
}

TEST_CASE("runtime hook CPUSetAllocator: oversized annotations and cpu lists are refused",
          "[koordlet][runtimehooks]") {
  auto req = containerRequest("LSR", "main", "");
  auto& annotations = *req.mutable_pod_annotations();
  // A cpuset that repeats "0-8191" to fill the annotation: refused, never expanded.
  std::string cpus = "0-8191";
  while (cpus.size() < 200 * 1024)
    cpus += ",0-8191";
  annotations["scheduling.koordinator.sh/resource-status"] = R"({"cpuset":")" + cpus + R"("})";
  CHECK_FALSE(preCreateAnswer(req).has_container_resources());
  // Past the API server's annotation limit: refused before it is parsed.
  annotations["scheduling.koordinator.sh/resource-status"] =
      R"({"cpuset":"0","pad":")" + std::string(256 * 1024, 'x') + R"("})";
  CHECK_FALSE(preCreateAnswer(req).has_container_resources());
}

TEST_CASE("runtime hook OOMScoreAdj: per container, else per pod, only in range",
          "[koordlet][runtimehooks]") {
  const auto on = hooks({{"OOMScoreAdj", true}});
  auto req = containerRequest("LS", "main", "");
  auto& annotations = *req.mutable_pod_annotations();
  annotations["koordinator.sh/oom-score-adj"] = std::string("-500");
  CHECK(preCreateAnswer(req, on).container_resources().oom_score_adj() == -500);
  // Off by default, as the OOMScoreAdj gate is.
  CHECK_FALSE(preCreateAnswer(req).has_container_resources());
  annotations["koordinator.sh/oom-score-adj-spec"] =
      std::string(R"({"main": 300, "sidecar": -999})");
  CHECK(preCreateAnswer(req, on).container_resources().oom_score_adj() == 300);
  req.mutable_container_meta()->set_name("other");  // not in the spec: the pod's value
  CHECK(preCreateAnswer(req, on).container_resources().oom_score_adj() == -500);
  req.mutable_container_meta()->set_name("main");

  // Refused (logged, no change): out of range, not integers, a broken spec anywhere in it.
  for (const auto& [key, text] : std::vector<std::pair<std::string, std::string>>{
           {"koordinator.sh/oom-score-adj-spec", R"({"main": 1001})"},
           {"koordinator.sh/oom-score-adj-spec", R"({"main": 1.5})"},
           {"koordinator.sh/oom-score-adj-spec", R"({"main": "5"})"},
           {"koordinator.sh/oom-score-adj-spec", R"({"main": 5, "other": -2000})"},
           {"koordinator.sh/oom-score-adj-spec", "[5]"},
           {"koordinator.sh/oom-score-adj-spec", "{"},
       }) {
    INFO(text);
    auto bad = req;
    (*bad.mutable_pod_annotations())[key] = text;
    CHECK_FALSE(preCreateAnswer(bad, on).has_container_resources());
  }
  annotations.erase("koordinator.sh/oom-score-adj-spec");
  for (const char* text : {"1001", "-1001", "5x", "", "+-5", " 5", "0x10"}) {
    INFO(text);
    annotations["koordinator.sh/oom-score-adj"] = std::string(text);
    CHECK_FALSE(preCreateAnswer(req, on).has_container_resources());
  }
  annotations["koordinator.sh/oom-score-adj"] = std::string("+1000");
  CHECK(preCreateAnswer(req, on).container_resources().oom_score_adj() == 1000);
  // Longer than such a value can need: refused unread, though the number in it is in range.
  annotations["koordinator.sh/oom-score-adj"] = std::string(4096, '0') + "5";
  CHECK_FALSE(preCreateAnswer(req, on).has_container_resources());
}

TEST_CASE("runtime hook server: registration and answers over its unix socket",
          "[koordlet][runtimehooks]") {
  const std::string dir = tempDir();
  std::filesystem::create_directories(dir + "/run");
  HookServerOptions o;
  o.addr = dir + "/run/koordlet.sock";
  o.host_endpoint = "/var/run/koordlet/koordlet.sock";
  o.config_path = dir + "/hookserver.d";
  o.failure_policy = "Ignore";
  o.disable_stages = {"PostStopContainer"};
  o.hooks = &defaultHooks();
  {
    HookServer server(o);
    server.start();
    std::ifstream in(dir + "/hookserver.d/koordlet.json");
    std::stringstream text;
    text << in.rdbuf();
    const auto reg = boost::json::parse(text.str()).as_object();
    CHECK(reg.at("remote-endpoint") == "/var/run/koordlet/koordlet.sock");
    CHECK(reg.at("failure-policy") == "Ignore");
    const auto& hooks = reg.at("runtime-hooks").as_array();
    CHECK(hooks.size() == koordletHookTypes().size() - 1);
    CHECK(std::find(hooks.begin(), hooks.end(), boost::json::value("PostStopContainer")) ==
          hooks.end());
    CHECK(std::find(hooks.begin(), hooks.end(), boost::json::value("PreCreateContainer")) !=
          hooks.end());

    auto stub = hookapi::RuntimeHookService::NewStub(
        grpc::CreateChannel("unix:" + o.addr, grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    hookapi::ContainerResourceHookResponse resp;
    REQUIRE(stub->PreCreateContainerHook(&ctx, containerRequest("BE", "main"), &resp).ok());
    CHECK(resp.container_resources().cpu_shares() == 1024);

    // A second koordlet cannot take the socket from this one.
    HookServer second(o);
    CHECK_THROWS_WITH(second.start(), Catch::Contains("another process is serving"));
  }
  // Without its socket's directory (no host mount) the server does not start, and creates
  // nothing.
  o.addr = dir + "/missing/koordlet.sock";
  HookServer orphan(o);
  CHECK_THROWS_AS(orphan.start(), koord::app::ConfigError);
  CHECK_FALSE(std::filesystem::exists(dir + "/missing"));
  std::filesystem::remove_all(dir);
}
