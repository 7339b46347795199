#include <catch2/catch.hpp>

#include "fixtures.h"
#include "plugins/upstream/nodeports/node_ports.h"

namespace koord::roles::scheduler::upstream {
namespace {

using namespace testing;

// "PROTOCOL/IP/PORT", as upstream's table writes them.
std::vector<HostPort> ports(std::vector<std::string> specs) {
  std::vector<HostPort> out;
  for (const auto& s : specs) {
    const auto a = s.find('/');
    const auto b = s.find('/', a + 1);
    out.push_back(HostPort{.host_ip = s.substr(a + 1, b - a - 1),
                           .protocol = s.substr(0, a),
                           .port = std::stoi(s.substr(b + 1))});
  }
  return out;
}

TEST_CASE("NodePorts table (kube-scheduler 1.20)", "[scheduler][upstream]") {
  struct Case {
    std::string name;
    std::vector<std::string> pod;
    std::vector<std::string> existing;  // ports of one pod already on the node
    bool fits;
  };
  const std::vector<Case> cases = {
      {"nothing running", {}, {}, true},
      {"other port", {"UDP/127.0.0.1/8080"}, {"UDP/127.0.0.1/9090"}, true},
      {"same udp port", {"UDP/127.0.0.1/8080"}, {"UDP/127.0.0.1/8080"}, false},
      {"same tcp port", {"TCP/127.0.0.1/8080"}, {"TCP/127.0.0.1/8080"}, false},
      {"different host ip", {"TCP/127.0.0.1/8080"}, {"TCP/127.0.0.2/8080"}, true},
      {"different protocol", {"UDP/127.0.0.1/8080"}, {"TCP/127.0.0.1/8080"}, true},
      {"second udp port conflict",
       {"UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"},
       {"UDP/127.0.0.1/8080"},
       false},
      {"first tcp port conflict",
       {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"},
       {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"},
       false},
      {"first tcp port conflict due to 0.0.0.0 hostIP",
       {"TCP/0.0.0.0/8001"},
       {"TCP/127.0.0.1/8001"},
       false},
      {"TCP hostPort conflict due to 0.0.0.0 hostIP",
       {"TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"},
       {"TCP/127.0.0.1/8001"},
       false},
      {"second tcp port conflict to 0.0.0.0 hostIP",
       {"TCP/127.0.0.1/8001"},
       {"TCP/0.0.0.0/8001"},
       false},
      {"second different protocol", {"UDP/127.0.0.1/8001"}, {"TCP/0.0.0.0/8001"}, true},
      {"UDP hostPort conflict due to 0.0.0.0 hostIP",
       {"UDP/127.0.0.1/8001"},
       {"TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"},
       false},
  };
  NodePorts plugin;
  for (const auto& c : cases) {
    INFO(c.name);
    PodInfo existing;
    existing.host_ports = ports(c.existing);
    const NodeInfo node = makeNodeInfo(makeNode("n1"), {existing});
    PodInfo pod;
    pod.host_ports = ports(c.pod);
    CycleState state;
    const Status pre = plugin.preFilter(state, pod);
    // A pod without host ports gets Skip: the framework passes every node without Filter.
    CHECK(pre.isSkip() == c.pod.empty());
    REQUIRE((pre.ok() || pre.isSkip()));
    const Status st = pre.isSkip() ? Status::success() : plugin.filter(state, pod, node);
    if (c.fits) {
      CHECK(st.ok());
    } else {
      CHECK(st.code() == Code::kUnschedulable);
      CHECK(st.reasons() ==
            std::vector<std::string>{"node(s) didn't have free ports for the requested pod ports"});
    }
  }
}

TEST_CASE("NodePorts PreFilter answers Skip only for a pod without host ports",
          "[scheduler][upstream]") {
  NodePorts plugin;
  CycleState state;
  PodInfo none;
  CHECK(plugin.preFilter(state, none).isSkip());
  // Port 0 asks for no host port (a hand-made pod; the API keeps only real ones).
  PodInfo zero;
  zero.host_ports = ports({"TCP/0.0.0.0/0"});
  CHECK(plugin.preFilter(state, zero).isSkip());
  CHECK(state.read<StateData>("PreFilterNodePorts") == nullptr);
  PodInfo one;
  one.host_ports = ports({"TCP/0.0.0.0/0", "UDP/0.0.0.0/53"});
  REQUIRE(plugin.preFilter(state, one).ok());
  PodInfo existing;
  existing.host_ports = ports({"UDP/10.0.0.1/53"});
  CHECK(plugin.filter(state, one, makeNodeInfo(makeNode("n1"), {existing})).code() ==
        Code::kUnschedulable);
}

TEST_CASE("NodePorts Filter without PreFilter is an error", "[scheduler][upstream]") {
  PodInfo pod;
  pod.host_ports = ports({"TCP/0.0.0.0/80"});
  const Status st = NodePorts{}.filter(CycleState{}, pod, makeNodeInfo(makeNode("n1")));
  CHECK(st.code() == Code::kError);
  CHECK(st.message() == "error reading \"PreFilterNodePorts\" from cycleState: not found");
}

TEST_CASE("NodePorts PreFilter state survives a CycleState clone", "[scheduler][upstream]") {
  NodePorts plugin;
  PodInfo pod;
  pod.host_ports = ports({"TCP/0.0.0.0/80"});
  CycleState state;
  REQUIRE(plugin.preFilter(state, pod).ok());
  const CycleState copy = state.clone();
  PodInfo existing;
  existing.host_ports = ports({"TCP/10.0.0.1/80"});
  CHECK(plugin.filter(copy, pod, makeNodeInfo(makeNode("n1"), {existing})).code() ==
        Code::kUnschedulable);
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream
