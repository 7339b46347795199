#include <memory>

#include <catch2/catch.hpp>

#include "framework/node_info.h"

using namespace koord::roles::scheduler;
namespace kube = koord::kube;

namespace {

std::shared_ptr<const PodInfo> pod(std::string uid, std::int64_t cpu, std::int64_t memory) {
  auto p = std::make_shared<PodInfo>();
  p->namespace_ = "default";
  p->name = uid;
  p->uid = std::move(uid);
  p->requests.milli_cpu = cpu;
  p->requests.memory = memory;
  p->requests.setScalar("kubernetes.io/batch-cpu", cpu);
  // As decodePodInfo fills it: the defaults replace absent requests.
  p->non_zero_requests = p->requests;
  if (cpu == 0)
    p->non_zero_requests.milli_cpu = kDefaultMilliCPURequest;
  if (memory == 0)
    p->non_zero_requests.memory = kDefaultMemoryRequest;
  return p;
}

}  // namespace

TEST_CASE("NodeInfo adds and removes pods") {
  NodeInfo info;
  auto node = std::make_shared<Node>();
  node->name = "node-1";
  info.node = node;
  CHECK(info.name() == "node-1");

  auto web = std::make_shared<PodInfo>(*pod("web", 500, 1000));
  web->host_ports.push_back(HostPort{"0.0.0.0", "TCP", 80});
  web->pod_anti_affinity.required.push_back(PodAffinityTerm{});
  auto cache = std::make_shared<PodInfo>(*pod("cache", 0, 0));
  cache->pod_affinity.preferred.push_back(WeightedPodAffinityTerm{10, PodAffinityTerm{}});
  auto plain = pod("plain", 250, 300);

  info.addPod(web);
  info.addPod(cache);
  info.addPod(plain);
  CHECK(info.generation == 3);
  CHECK(info.pods.size() == 3);
  CHECK(info.requested.milli_cpu == 750);
  CHECK(info.requested.memory == 1300);
  CHECK(info.requested.scalarValue("kubernetes.io/batch-cpu") == 750);
  // The pod without requests counts its defaults only in the non-zero sum.
  CHECK(info.non_zero_requested.milli_cpu == 750 + kDefaultMilliCPURequest);
  CHECK(info.non_zero_requested.memory == 1300 + kDefaultMemoryRequest);
  CHECK(info.non_zero_requested.scalar.empty());  // only cpu and memory, as in kube-scheduler
  CHECK(info.used_ports.conflicts(HostPort{"10.0.0.1", "TCP", 80}));
  REQUIRE(info.pods_with_affinity.size() == 2);
  CHECK(info.pods_with_affinity[0]->uid == "web");
  CHECK(info.pods_with_affinity[1]->uid == "cache");
  REQUIRE(info.pods_with_required_anti_affinity.size() == 1);
  CHECK(info.pods_with_required_anti_affinity[0]->uid == "web");

  CHECK_FALSE(info.removePod("nobody"));
  CHECK(info.generation == 3);

  REQUIRE(info.removePod("web"));
  CHECK(info.generation == 4);
  CHECK(info.pods.size() == 2);
  CHECK(info.requested.milli_cpu == 250);
  CHECK(info.requested.memory == 300);
  CHECK(info.requested.scalarValue("kubernetes.io/batch-cpu") == 250);
  CHECK(info.non_zero_requested.milli_cpu == 250 + kDefaultMilliCPURequest);
  CHECK_FALSE(info.used_ports.conflicts(HostPort{"0.0.0.0", "TCP", 80}));
  CHECK(info.used_ports.empty());
  REQUIRE(info.pods_with_affinity.size() == 1);
  CHECK(info.pods_with_affinity[0]->uid == "cache");
  CHECK(info.pods_with_required_anti_affinity.empty());

  REQUIRE(info.removePod("cache"));
  REQUIRE(info.removePod("plain"));
  CHECK(info.requested == Resource{});
  CHECK(info.non_zero_requested == Resource{});
  CHECK(info.pods_with_affinity.empty());
  CHECK(info.generation == 6);
}

TEST_CASE("NodeInfo without a Node has no name") {
  NodeInfo info;
  CHECK(info.name().empty());
}

TEST_CASE("HostPortUsage removes one use of a port at a time") {
  HostPortUsage usage;
  const HostPort p{"0.0.0.0", "TCP", 8080};
  usage.add(p);
  usage.add(p);
  usage.remove(p);
  CHECK(usage.conflicts(p));
  usage.remove(HostPort{"0.0.0.0", "UDP", 8080});  // not there: nothing changes
  CHECK(usage.conflicts(p));
  usage.remove(p);
  CHECK_FALSE(usage.conflicts(p));
  CHECK(usage.empty());
}

TEST_CASE("HostPortUsage::conflicts as kube-scheduler's CheckConflict") {
  struct Case {
    const char* name;
    HostPort used;
    HostPort wanted;
    bool conflict;
  };
  const Case cases[] = {
      {"same ip, protocol and port", {"10.0.0.1", "TCP", 80}, {"10.0.0.1", "TCP", 80}, true},
      {"any ip used, specific wanted", {"0.0.0.0", "TCP", 80}, {"10.0.0.1", "TCP", 80}, true},
      {"specific used, any ip wanted", {"10.0.0.1", "TCP", 80}, {"0.0.0.0", "TCP", 80}, true},
      {"both any ip", {"0.0.0.0", "UDP", 53}, {"0.0.0.0", "UDP", 53}, true},
      {"different ips", {"10.0.0.1", "TCP", 80}, {"10.0.0.2", "TCP", 80}, false},
      {"different protocol", {"0.0.0.0", "TCP", 53}, {"0.0.0.0", "UDP", 53}, false},
      {"different protocol, specific ip", {"10.0.0.1", "TCP", 53}, {"10.0.0.1", "SCTP", 53}, false},
      {"different port", {"0.0.0.0", "TCP", 80}, {"0.0.0.0", "TCP", 81}, false},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      HostPortUsage usage;
      CHECK_FALSE(usage.conflicts(c.wanted));
      usage.add(c.used);
      CHECK(usage.conflicts(c.wanted) == c.conflict);
    }
  }
}
