// RemovePodsViolatingInterPodAntiAffinity: which pods it evicts, by topology, in which order.
#include "plugins/removepodsviolatinginterpodantiaffinity/pod_antiaffinity.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "fake_handle.h"
#include "plugins/removepodsviolatinginterpodantiaffinity/pod_order.h"

namespace koord::roles::descheduler::interpodantiaffinity {
namespace {

using testkit::FakeHandle;
using testkit::makeNode;
using testkit::makePod;

PodAffinityTerm avoid(std::string app, std::string topology_key = "kubernetes.io/hostname") {
  PodAffinityTerm t;
  t.selector = kube::Selector::parse("app=" + app).value();
  t.has_selector = true;
  t.topology_key = std::move(topology_key);
  return t;
}

std::shared_ptr<Pod> app(std::string name, std::string node, std::string label,
                         std::optional<std::int32_t> priority = std::nullopt,
                         std::string ns = "default") {
  auto p = makePod(std::move(name), std::move(node), 100, 1, "rs", std::move(ns));
  p->labels["app"] = std::move(label);
  p->priority = priority;
  return p;
}

std::vector<std::string> run(FakeHandle& h, std::string_view args_json = "{}") {
  const boost::json::value v = boost::json::parse(args_json);
  auto args = decodeRemovePodsViolatingInterPodAntiAffinityArgs(&v);
  REQUIRE(args.has_value());
  auto plugin = makeRemovePodsViolatingInterPodAntiAffinity(
      std::make_shared<RemovePodsViolatingInterPodAntiAffinityArgs>(*args), h);
  REQUIRE(plugin.has_value());
  REQUIRE(dynamic_cast<DeschedulePlugin&>(**plugin).deschedule(h.nodes()).has_value());
  return h.evicted;
}

FakeHandle twoNodesOneZone() {
  FakeHandle h;
  for (const char* n : {"n1", "n2"}) {
    auto node = makeNode(n);
    node->labels["zone"] = "z1";
    h.snap.addNode(node);
  }
  return h;
}

TEST_CASE("InterPodAntiAffinity: args are strict", "[descheduler]") {
  const boost::json::value bad = boost::json::parse(R"({"nodeFit": true})");
  auto r = decodeRemovePodsViolatingInterPodAntiAffinityArgs(&bad);
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("nodeFit"));
}

TEST_CASE("InterPodAntiAffinity: a conflict on one node evicts the lower priority pod once",
          "[descheduler]") {
  FakeHandle h = twoNodesOneZone();
  auto high = app("high", "n1", "web", 100);
  high->required_anti_affinity = {avoid("web")};
  auto low = app("low", "n1", "web", 10);
  low->required_anti_affinity = {avoid("web")};
  h.snap.addPod(high);
  h.snap.addPod(low);
  // The evicted pod no longer counts, so the other stays.
  CHECK(run(h) == std::vector<std::string>{"default/low"});
  CHECK_THAT(h.options.at(0).reason, Catch::Contains("default/high"));
}

TEST_CASE("InterPodAntiAffinity: topology key, the other pod's term and namespaces",
          "[descheduler]") {
  struct Case {
    const char* name;
    std::string topology_key;
    const char* other_node;
    const char* other_ns;
    bool term_on_other;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"same zone on another node", "zone", "n2", "default", false, {"default/p"}},
      {"hostname key, other node", "kubernetes.io/hostname", "n2", "default", false, {}},
      {"other namespace", "kubernetes.io/hostname", "n1", "other", false, {}},
      {"the other pod's term forbids p",
       "kubernetes.io/hostname",
       "n1",
       "default",
       true,
       {"default/p"}},
      {"missing key on nodes", "rack", "n2", "default", false, {}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    FakeHandle h = twoNodesOneZone();
    auto p = app("p", "n1", "web", 1);
    auto other = app("other", c.other_node, "db", 100, c.other_ns);
    if (c.term_on_other)
      other->required_anti_affinity = {avoid("web", c.topology_key)};
    else
      p->required_anti_affinity = {avoid("db", c.topology_key)};
    h.snap.addPod(p);
    h.snap.addPod(other);
    // Only p may go, so which of the two is evicted is not up to the order.
    h.filter_fn = [](const Pod& x) { return x.name == "p"; };
    CHECK(run(h) == c.want);
  }
}

TEST_CASE("InterPodAntiAffinity: the args' filter picks which pods may go, not which count",
          "[descheduler]") {
  FakeHandle h = twoNodesOneZone();
  auto p = app("p", "n1", "web", 1, "kube-system");
  p->required_anti_affinity = {avoid("db")};
  h.snap.addPod(p);
  h.snap.addPod(app("other", "n1", "db", 100, "kube-system"));
  CHECK(run(h, R"({"namespaces": {"exclude": ["kube-system"]}})").empty());
  CHECK(run(h).size() == 1);
  FakeHandle g = twoNodesOneZone();
  auto r = app("r", "n1", "web", 1);
  PodAffinityTerm t = avoid("db");
  t.namespaces = {"kube-system"};
  r->required_anti_affinity = {t};
  g.snap.addPod(r);
  g.snap.addPod(app("other", "n1", "db", 100, "kube-system"));
  CHECK(run(g, R"({"namespaces": {"exclude": ["kube-system"]}})") ==
        std::vector<std::string>{"default/r"});
}

TEST_CASE("InterPodAntiAffinity: pods sort by priority, none first, then Kubernetes QoS",
          "[descheduler]") {
  std::vector<std::shared_ptr<const Pod>> pods;
  auto mk = [&](std::string name, std::optional<std::int32_t> prio, apis::KubeQoS qos) {
    auto p = makePod(std::move(name), "n1");
    p->priority = prio;
    p->kube_qos = qos;
    pods.push_back(p);
  };
  mk("ls-10", 10, apis::KubeQoS::kBurstable);
  mk("be-10", 10, apis::KubeQoS::kBestEffort);
  mk("none", std::nullopt, apis::KubeQoS::kGuaranteed);
  mk("ls-1", 1, apis::KubeQoS::kBurstable);
  sortPodsLowToHigh(pods);
  std::vector<std::string> names;
  for (const auto& p : pods)
    names.push_back(p->name);
  CHECK(names == std::vector<std::string>{"none", "ls-1", "be-10", "ls-10"});
}

}  // namespace
}  // namespace koord::roles::descheduler::interpodantiaffinity
