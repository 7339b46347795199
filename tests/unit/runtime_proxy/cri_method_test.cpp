// Which backend, version and hook a method name maps to, and how endpoint flags are read.
#include <catch2/catch.hpp>

#include "cri/cri_backend.h"
#include "cri/cri_method.h"
#include "koord/app/role_app.h"

using namespace koord::roles::runtime_proxy;

TEST_CASE("cri method: service and version and hook and unary-ness", "[runtime-proxy]") {
  struct Row {
    const char* method;
    CriService service;
    CriVersion version;
    HookedCall hooked;
    bool unary;
  };
  const Row rows[] = {
      {"/runtime.v1.RuntimeService/Version", CriService::kRuntime, CriVersion::kV1,
       HookedCall::kNone, true},
      {"/runtime.v1alpha2.RuntimeService/Version", CriService::kRuntime, CriVersion::kV1alpha2,
       HookedCall::kNone, true},
      {"/runtime.v1.RuntimeService/RunPodSandbox", CriService::kRuntime, CriVersion::kV1,
       HookedCall::kRunPodSandbox, true},
      {"/runtime.v1alpha2.RuntimeService/StopPodSandbox", CriService::kRuntime,
       CriVersion::kV1alpha2, HookedCall::kStopPodSandbox, true},
      {"/runtime.v1.RuntimeService/CreateContainer", CriService::kRuntime, CriVersion::kV1,
       HookedCall::kCreateContainer, true},
      {"/runtime.v1.RuntimeService/StartContainer", CriService::kRuntime, CriVersion::kV1,
       HookedCall::kStartContainer, true},
      {"/runtime.v1.RuntimeService/StopContainer", CriService::kRuntime, CriVersion::kV1,
       HookedCall::kStopContainer, true},
      {"/runtime.v1alpha2.RuntimeService/UpdateContainerResources", CriService::kRuntime,
       CriVersion::kV1alpha2, HookedCall::kUpdateContainerResources, true},
      {"/runtime.v1.RuntimeService/RemoveContainer", CriService::kRuntime, CriVersion::kV1,
       HookedCall::kRemoveContainer, true},
      {"/runtime.v1alpha2.RuntimeService/RemovePodSandbox", CriService::kRuntime,
       CriVersion::kV1alpha2, HookedCall::kRemovePodSandbox, true},
      {"/runtime.v1.RuntimeService/ListContainers", CriService::kRuntime, CriVersion::kV1,
       HookedCall::kNone, true},
      // Server streaming: pumped, not read whole.
      {"/runtime.v1.RuntimeService/GetContainerEvents", CriService::kRuntime, CriVersion::kV1,
       HookedCall::kNone, false},
      {"/runtime.v1.RuntimeService/StreamContainers", CriService::kRuntime, CriVersion::kV1,
       HookedCall::kNone, false},
      // A method newer than the table is still the runtime's, as a stream.
      {"/runtime.v1.RuntimeService/SomethingNew", CriService::kRuntime, CriVersion::kV1,
       HookedCall::kNone, false},
      {"/runtime.v1.ImageService/PullImage", CriService::kImage, CriVersion::kV1, HookedCall::kNone,
       true},
      {"/runtime.v1alpha2.ImageService/ListImages", CriService::kImage, CriVersion::kV1alpha2,
       HookedCall::kNone, true},
      // Not CRI: forwarded to the runtime socket as a stream, never hooked.
      {"/grpc.health.v1.Health/Check", CriService::kOther, CriVersion::kOther, HookedCall::kNone,
       false},
      {"/runtime.v1.Other/Version", CriService::kOther, CriVersion::kOther, HookedCall::kNone,
       false},
      {"runtime.v1.RuntimeService/Version", CriService::kOther, CriVersion::kOther,
       HookedCall::kNone, false},
      {"", CriService::kOther, CriVersion::kOther, HookedCall::kNone, false},
  };
  for (const auto& row : rows) {
    INFO(row.method);
    const CriMethod m = classifyCriMethod(row.method);
    CHECK(m.service == row.service);
    CHECK(m.version == row.version);
    CHECK(m.hooked == row.hooked);
    CHECK(m.unary == row.unary);
  }
}

TEST_CASE("cri endpoints: paths and unix URLs and nothing else", "[runtime-proxy]") {
  CHECK(unixTarget("/run/containerd/containerd.sock", "f") ==
        "unix:/run/containerd/containerd.sock");
  CHECK(unixTarget("unix:///run/c.sock", "f") == "unix:/run/c.sock");
  CHECK(unixTarget("unix:/run/c.sock", "f") == "unix:/run/c.sock");
  CHECK_THROWS_WITH(
      unixTarget("tcp://127.0.0.1:1234", "remote-runtime-service-endpoint"),
      Catch::Contains("--remote-runtime-service-endpoint") && Catch::Contains("only unix sockets"));
  CHECK_THROWS_WITH(unixTarget("run/c.sock", "f"), Catch::Contains("absolute"));
  CHECK_THROWS_AS(unixTarget("", "f"), koord::app::ConfigError);
}
