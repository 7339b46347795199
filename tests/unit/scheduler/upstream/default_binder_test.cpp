#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fixtures.h"
#include "framework/framework_handle.h"
#include "plugins/upstream/defaultbinder/default_binder.h"
#include "scheduler/fake_handle.h"

namespace koord::roles::scheduler::upstream {
namespace {

// Records the bindings asked for and answers them from `bind_error`.
using RecordingCluster = testkit::FakeCluster;
using Handle = testkit::FakeHandle;

std::optional<Status> bindOnce(DefaultBinder& binder, const std::string& node) {
  auto pod = std::make_shared<PodInfo>();
  pod->namespace_ = "shop";
  pod->name = "web-1";
  std::optional<Status> answer;
  binder.bind(std::make_shared<CycleState>(), pod, node, [&](Status s) { answer = std::move(s); });
  return answer;
}

TEST_CASE("DefaultBinder binds through the cluster view and passes its answer on",
          "[scheduler][upstream]") {
  RecordingCluster cluster;
  Handle handle(cluster);
  DefaultBinder binder(handle);
  CHECK(binder.name() == "DefaultBinder");

  auto ok = bindOnce(binder, "node-a");
  REQUIRE(ok.has_value());
  CHECK(ok->ok());
  REQUIRE(cluster.bound.size() == 1);
  CHECK(cluster.bound[0] == std::make_pair(std::string("shop/web-1"), std::string("node-a")));

  cluster.bind_error = "pods \"web-1\" is already assigned to node \"node-b\"";
  auto conflict = bindOnce(binder, "node-a");
  REQUIRE(conflict.has_value());
  CHECK(conflict->code() == Code::kError);
  CHECK(conflict->message() == cluster.bind_error);
}

TEST_CASE("DefaultBinder without an API client answers an error instead of binding",
          "[scheduler][upstream]") {
  const ClusterView cluster{};  // the defaults: no API client
  Handle handle(cluster);
  DefaultBinder binder(handle);
  auto answer = bindOnce(binder, "node-a");
  REQUIRE(answer.has_value());
  CHECK(answer->code() == Code::kError);
  CHECK_THAT(answer->message(), Catch::Contains("no API client"));
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
