// InterPodAffinity on pods decoded from API JSON: a term without namespaces means the pod's
// own namespace, and a bad selector is refused at decode (so PreFilter has no parse errors).
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "fixture.h"

namespace ipa_test {
namespace {

PodInfo decode(std::string_view json) {
  auto pod = decodePodInfo(boost::json::parse(json));
  INFO(json);
  REQUIRE(pod.has_value());
  return *pod;
}

std::shared_ptr<const NodeInfo> nodeWith(const NodeSpec& spec, std::vector<PodInfo> pods) {
  auto info = std::make_shared<NodeInfo>();
  info->node = makeNode(spec);
  for (auto& p : pods) {
    p.node_name = spec.name;
    info->addPod(std::make_shared<const PodInfo>(std::move(p)));
  }
  return info;
}

TEST_CASE("InterPodAffinity on decoded pods: empty namespaces mean the pod's own",
          "[scheduler][interpodaffinity]") {
  const PodInfo incoming = decode(R"({
    "metadata": {"name": "web", "namespace": "team-a", "labels": {"app": "web"}},
    "spec": {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}]}}}})");
  REQUIRE(incoming.pod_anti_affinity.required.size() == 1);
  CHECK(incoming.pod_anti_affinity.required[0].namespaces == std::vector<std::string>{"team-a"});

  const PodInfo same_ns = decode(
      R"({"metadata": {"name": "a", "uid": "a", "namespace": "team-a", "labels": {"app": "web"}}})");
  const PodInfo other_ns = decode(
      R"({"metadata": {"name": "b", "uid": "b", "namespace": "team-b", "labels": {"app": "web"}}})");
  const Cluster cluster(Snapshot({nodeWith({"n1", {{"zone", "z1"}}}, {same_ns}),
                                  nodeWith({"n2", {{"zone", "z2"}}}, {other_ns}),
                                  nodeWith({"n3", {{"zone", "z3"}}}, {})}));
  const auto statuses = filterAll(cluster, incoming);
  REQUIRE(statuses.size() == 3);
  checkVerdict(statuses[0], antiAffinityRulesFail());
  checkVerdict(statuses[1], fits());
  checkVerdict(statuses[2], fits());
}

TEST_CASE("InterPodAffinity on decoded pods: an invalid selector value is refused at decode",
          "[scheduler][interpodaffinity]") {
  auto pod = decodePodInfo(boost::json::parse(R"({
    "metadata": {"name": "bad"},
    "spec": {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {"matchExpressions": [
        {"key": "service", "operator": "In", "values": ["{{.bad-value.}}"]}]},
       "topologyKey": "region"}]}}}})"));
  REQUIRE_FALSE(pod.has_value());
  CHECK_THAT(pod.error().message,
             Catch::StartsWith("spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuring"
                               "Execution[0].labelSelector"));
}

}  // namespace
}  // namespace ipa_test
