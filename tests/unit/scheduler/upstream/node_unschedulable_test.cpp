#include <catch2/catch.hpp>

#include "fixtures.h"
#include "plugins/upstream/nodeunschedulable/node_unschedulable.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace testing;

TEST_CASE("NodeUnschedulable refuses cordoned nodes unless tolerated", "[scheduler][upstream]") {
  struct Case {
    std::string name;
    bool unschedulable;
    std::string tolerations;  // pod.spec.tolerations JSON
    Code want;
  };
  const std::vector<Case> cases = {
      {"schedulable node", false, "[]", Code::kSuccess},
      {"unschedulable node", true, "[]", Code::kUnschedulableAndUnresolvable},
      {"unschedulable node, pod tolerates the unschedulable taint", true,
       R"([{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}])", Code::kSuccess},
      {"unschedulable node, pod tolerates everything", true, R"([{"operator":"Exists"}])",
       Code::kSuccess},
      {"unschedulable node, toleration for another effect", true,
       R"([{"key":"node.kubernetes.io/unschedulable","effect":"NoExecute"}])",
       Code::kUnschedulableAndUnresolvable},
      {"unschedulable node, toleration with a value that does not match", true,
       R"([{"key":"node.kubernetes.io/unschedulable","value":"x","effect":"NoSchedule"}])",
       Code::kUnschedulableAndUnresolvable},
  };
  const NodeUnschedulable plugin;
  for (const auto& c : cases) {
    INFO(c.name);
    auto node = makeNode("n1");
    node->unschedulable = c.unschedulable;
    PodInfo pod;
    pod.tolerations = tolerations(c.tolerations);
    const Status st = plugin.filter(CycleState{}, pod, makeNodeInfo(node));
    CHECK(st.code() == c.want);
    if (c.want != Code::kSuccess)
      CHECK(st.reasons() == std::vector<std::string>{"node(s) were unschedulable"});
  }
}

TEST_CASE("NodeUnschedulable without a Node reports unknown conditions", "[scheduler][upstream]") {
  const Status st = NodeUnschedulable{}.filter(CycleState{}, PodInfo{}, NodeInfo{});
  CHECK(st.code() == Code::kUnschedulableAndUnresolvable);
  CHECK(st.message() == "node(s) had unknown conditions");
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
