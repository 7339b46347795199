// hookserver.d files: Koordinator's format read strictly, every mistake named.
#include <catch2/catch.hpp>

#include "hooks/hook_server_config.h"

using namespace koord::roles::runtime_proxy;

TEST_CASE("hook server config: koordlet's registration", "[runtime-proxy]") {
  auto c = parseHookServerConfig(R"({
      "remote-endpoint": "/var/run/koordlet/koordlet.sock",
      "failure-policy": "Ignore",
      "runtime-hooks": ["PreRunPodSandbox", "PreCreateContainer", "PreStartContainer",
                        "PostStartContainer", "PreUpdateContainerResources",
                        "PostStopContainer", "PostStopPodSandbox"]})");
  REQUIRE(c.has_value());
  CHECK(c->remote_endpoint == "/var/run/koordlet/koordlet.sock");
  CHECK(c->failure_policy == FailurePolicy::kIgnore);
  REQUIRE(c->hooks.size() == 7);
  CHECK(c->hooks[0] == RuntimeHookType::kPreRunPodSandbox);
  CHECK(c->hooks[6] == RuntimeHookType::kPostStopPodSandbox);
}

TEST_CASE("hook server config: policy defaults and unix URLs", "[runtime-proxy]") {
  auto c = parseHookServerConfig(R"({"remote-endpoint": "unix:///run/h.sock"})");
  REQUIRE(c.has_value());
  CHECK(c->remote_endpoint == "/run/h.sock");
  CHECK(c->failure_policy == FailurePolicy::kIgnore);
  CHECK(c->hooks.empty());
  auto f = parseHookServerConfig(R"({"remote-endpoint": "/run/h.sock", "failure-policy": "Fail"})");
  REQUIRE(f.has_value());
  CHECK(f->failure_policy == FailurePolicy::kFail);
}

TEST_CASE("hook server config: mistakes are named", "[runtime-proxy]") {
  struct Row {
    const char* json;
    const char* error;
  };
  const Row rows[] = {
      {"{", "not JSON"},
      {"[]", "want a JSON object"},
      {R"({"failure-policy": "Fail"})", "remote-endpoint: required"},
      {R"({"remote-endpoint": "koordlet.sock"})", "not an absolute unix socket path"},
      {R"({"remote-endpoint": "tcp://1.2.3.4:5"})", "not an absolute unix socket path"},
      {R"({"remote-endpoint": 5})", "remote-endpoint: want a string"},
      {R"({"remote-endpoint": "/s", "failure-policy": "fail"})",
       R"(failure-policy: "fail": want Fail or Ignore)"},
      {R"({"remote-endpoint": "/s", "runtime-hooks": ["PreCreateContainers"]})",
       R"(runtime-hooks: unknown hook type "PreCreateContainers")"},
      {R"({"remote-endpoint": "/s", "runtime-hooks": "PreCreateContainer"})",
       "runtime-hooks: want a list"},
      {R"({"remote-endpoint": "/s", "remoteEndpoint": "/t"})", R"(unknown field "remoteEndpoint")"},
  };
  for (const auto& row : rows) {
    INFO(row.json);
    auto c = parseHookServerConfig(row.json);
    REQUIRE_FALSE(c.has_value());
    CHECK_THAT(c.error().message, Catch::Contains(row.error));
  }
}

TEST_CASE("hook types: stage and the call they run on", "[runtime-proxy]") {
  CHECK(isPreHook(RuntimeHookType::kPreCreateContainer));
  CHECK_FALSE(isPreHook(RuntimeHookType::kPostStartContainer));
  CHECK(hookedCallOf(RuntimeHookType::kPreStartContainer) == HookedCall::kStartContainer);
  CHECK(hookedCallOf(RuntimeHookType::kPostStartContainer) == HookedCall::kStartContainer);
  CHECK(hookedCallOf(RuntimeHookType::kPostStopPodSandbox) == HookedCall::kStopPodSandbox);
  CHECK(hookedCallOf(RuntimeHookType::kPreRemoveRunPodSandbox) == HookedCall::kNone);
  CHECK(toString(RuntimeHookType::kPreUpdateContainerResources) == "PreUpdateContainerResources");
}
