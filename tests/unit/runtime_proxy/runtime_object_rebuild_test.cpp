// After a restart the proxy learns the pods and containers kubelet created through its
// previous process from the runtime itself (a real gRPC CRI server on a unix socket): what the
// list and status calls say, no orphans, and nothing a create told it overwritten.
#include <catch2/catch.hpp>
#include <chrono>

#include "hooks/runtime_object_cache.h"
#include "hooks/runtime_object_rebuild.h"
#include "test_cri_backend.h"

using namespace koord::roles::runtime_proxy;
using namespace std::chrono_literals;
using koord::testing::TempTree;
using proxy_test::TestCriBackend;

TEST_CASE("runtime-proxy rebuild: the runtime's sandboxes and containers become cache entries",
          "[runtime-proxy]") {
  TempTree dir{"koord-proxy"};
  const std::string runtime = dir.path("containerd.sock").string();
  TestCriBackend backend(runtime, dir.path("image.sock").string());
  RuntimeObjectCache cache;
  // Created through this process while the rebuild ran: a create's entry knows the
  // environment, which the runtime cannot tell.
  hookapi::ContainerResourceHookRequest from_create;
  from_create.mutable_container_meta()->set_id("web-sidecar");
  (*from_create.mutable_container_envs())["FROM_CREATE"] = std::string("1");
  cache.putContainer("web-sidecar", from_create);

  const RebuildResult r = rebuildRuntimeObjects("unix:" + runtime, cache, 5s);
  REQUIRE(r.error.empty());
  CHECK(r.sandboxes == 2);
  CHECK(r.containers == 1);  // web-main; the sidecar was known, the orphan's sandbox is gone

  const auto web = cache.sandbox("sandbox-web");
  REQUIRE(web);
  CHECK(web->pod_meta().name() == "web");
  CHECK(web->pod_meta().namespace_() == "default");
  CHECK(web->pod_meta().uid() == "uid-web");
  CHECK(web->labels().at("koordinator.sh/qosClass") == "BE");
  CHECK(web->annotations().at("note") == "from the runtime");
  CHECK(web->cgroup_parent() == "/kubepods/besteffort/poduid-web");
  const auto stopped = cache.sandbox("sandbox-stopped");
  REQUIRE(stopped);
  CHECK(stopped->cgroup_parent().empty());  // not ready: its status is not asked for

  const auto main = cache.container("web-main");
  REQUIRE(main);
  CHECK(main->container_meta().id() == "web-main");
  CHECK(main->container_meta().name() == "main");
  CHECK(main->pod_meta().name() == "web");
  CHECK(main->pod_labels().at("koordinator.sh/qosClass") == "BE");
  CHECK(main->pod_cgroup_parent() == "/kubepods/besteffort/poduid-web");
  CHECK(main->container_annotations().at("io.kubernetes.container.hash") == "abc");
  const auto sidecar = cache.container("web-sidecar");
  REQUIRE(sidecar);
  CHECK(sidecar->container_envs().at("FROM_CREATE") == "1");
  CHECK_FALSE(cache.container("orphan"));
}

TEST_CASE("runtime-proxy rebuild: a runtime that is not up yet is waited for", "[runtime-proxy]") {
  TempTree dir{"koord-proxy"};
  const std::string runtime = dir.path("containerd.sock").string();
  RuntimeObjectCache cache;
  const RebuildResult down = rebuildRuntimeObjects("unix:" + runtime, cache, 500ms);
  CHECK_FALSE(down.error.empty());
  CHECK(cache.size() == 0);

  RuntimeObjectRebuilder rebuilder("unix:" + runtime, cache);
  CHECK_FALSE(rebuilder.waitDone(300ms));
  TestCriBackend backend(runtime, dir.path("image.sock").string());
  CHECK(rebuilder.waitDone(20s));
  CHECK(cache.container("web-main"));
}
