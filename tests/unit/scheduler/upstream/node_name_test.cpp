#include <catch2/catch.hpp>

#include "fixtures.h"
#include "plugins/upstream/nodename/node_name.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace testing;

TEST_CASE("NodeName filters on spec.nodeName", "[scheduler][upstream]") {
  struct Case {
    std::string name;
    std::string pod_node_name;
    Code want;
  };
  const std::vector<Case> cases = {
      {"no host specified", "", Code::kSuccess},
      {"host matches", "foo", Code::kSuccess},
      {"host doesn't match", "bar", Code::kUnschedulableAndUnresolvable},
  };
  const NodeName plugin;
  const NodeInfo node = makeNodeInfo(makeNode("foo"));
  for (const auto& c : cases) {
    INFO(c.name);
    PodInfo pod;
    pod.node_name = c.pod_node_name;
    const Status st = plugin.filter(CycleState{}, pod, node);
    CHECK(st.code() == c.want);
    if (c.want != Code::kSuccess)
      CHECK(st.reasons() ==
            std::vector<std::string>{"node(s) didn't match the requested node name"});
  }
}

TEST_CASE("NodeName on a NodeInfo without its Node is an error", "[scheduler][upstream]") {
  PodInfo pod;
  pod.node_name = "foo";
  CHECK(NodeName{}.filter(CycleState{}, pod, NodeInfo{}).code() == Code::kError);
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
