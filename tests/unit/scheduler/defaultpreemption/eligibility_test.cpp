// kube-scheduler 1.20's TestPodEligibleToPreemptOthers and TestNodesWherePreemptionMightHelp.
#include <catch2/catch.hpp>

#include "fixture.h"
#include "plugins/upstream/defaultpreemption/eligibility.h"

namespace koord::roles::scheduler::upstream::dptest {
namespace {

struct EligibleCase {
  std::string name;
  PodSpec pod;
  std::vector<PodSpec> pods;
  std::vector<std::string> nodes;
  std::optional<Status> nominated_status;
  std::optional<std::string_view> expected;  // nullopt: eligible
};

TEST_CASE("podEligibleToPreemptOthers as kube-scheduler 1.20 decides") {
  const std::vector<EligibleCase> table = {
      {"nominated node now unresolvable: preempt again",
       {.name = "p_with_nominated_node", .priority = kHighPriority, .nominated = "node1"},
       {{.name = "p1", .priority = kLowPriority, .node = "node1", .terminating = true}},
       {"node1"},
       Status::unresolvable("node(s) had taint {key: value}, that the pod didn't tolerate"),
       std::nullopt},
      {"nominated node without a status and a lower-priority pod terminating there: wait",
       {.name = "p_without_status", .priority = kHighPriority, .nominated = "node1"},
       {{.name = "p1", .priority = kLowPriority, .node = "node1", .terminating = true}},
       {"node1"},
       std::nullopt,
       kNotEligibleTerminating},
      {"nominated node merely Unschedulable and a lower-priority pod terminating there: wait",
       {.name = "p", .priority = kHighPriority, .nominated = "node1"},
       {{.name = "p1", .priority = kLowPriority, .node = "node1", .terminating = true}},
       {"node1"},
       Status::unschedulable("Insufficient cpu"),
       kNotEligibleTerminating},
      {"a terminating pod of equal priority does not hold the pod back",
       {.name = "p", .priority = kHighPriority, .nominated = "node1"},
       {{.name = "p1", .priority = kHighPriority, .node = "node1", .terminating = true}},
       {"node1"},
       std::nullopt,
       std::nullopt},
      {"a lower-priority pod that is not terminating does not hold the pod back",
       {.name = "p", .priority = kHighPriority, .nominated = "node1"},
       {{.name = "p1", .priority = kLowPriority, .node = "node1"}},
       {"node1"},
       std::nullopt,
       std::nullopt},
      {"nominated node gone from the snapshot",
       {.name = "p", .priority = kHighPriority, .nominated = "node9"},
       {{.name = "p1", .priority = kLowPriority, .node = "node1", .terminating = true}},
       {"node1"},
       std::nullopt,
       std::nullopt},
      {"Pod without nominated node",
       {.name = "p_without_nominated_node", .priority = kHighPriority},
       {},
       {},
       std::nullopt,
       std::nullopt},
      {"Pod with PreemptNever preemption policy",
       {.name = "p_with_preempt_never_policy", .priority = kHighPriority, .preempt_never = true},
       {},
       {},
       std::nullopt,
       kNotEligiblePreemptNever},
  };
  for (const auto& tc : table) {
    SECTION(tc.name) {
      const Snapshot snap = makeSnapshot(tc.nodes, tc.pods);
      NodeStatusMap statuses;
      if (tc.nominated_status)
        statuses.emplace(tc.pod.nominated, *tc.nominated_status);
      CHECK(notEligibleToPreempt(makePod(tc.pod), snap, statuses) == tc.expected);
    }
  }
}

struct HelpCase {
  std::string name;
  NodeStatusMap statuses;
  std::vector<std::string> expected;
};

TEST_CASE("nodesWherePreemptionMightHelp skips only UnschedulableAndUnresolvable nodes") {
  const std::vector<HelpCase> table = {
      {"No node should be attempted",
       {{"node1", Status::unresolvable("node(s) didn't match node selector")},
        {"node2", Status::unresolvable("node(s) didn't match the requested node name")},
        {"node3", Status::unresolvable("node(s) had taint, that the pod didn't tolerate")},
        {"node4", Status::unresolvable("node(s) didn't have the requested labels")}},
       {}},
      {"pod affinity failures that preemption may resolve are tried",
       {{"node1", Status::unschedulable("node(s) didn't match pod affinity/anti-affinity")},
        {"node2", Status::unresolvable("node(s) didn't match the requested node name")},
        {"node3", Status::unresolvable("node(s) were unschedulable")}},
       {"node1", "node4"}},
      {"affinity rules that no eviction satisfies are not tried",
       {{"node1", Status::unresolvable("node(s) didn't match pod affinity rules")},
        {"node2", Status::unschedulable("node(s) didn't match pod affinity/anti-affinity")}},
       {"node2", "node3", "node4"}},
      {"Mix of failed predicates works fine",
       {{"node1", Status::unresolvable("node(s) had no available disk")},
        {"node2", Status::unschedulable("Insufficient memory")}},
       {"node2", "node3", "node4"}},
      {"topology spread failures are tried",
       {{"node1", Status::unschedulable("node(s) didn't match pod topology spread constraints")},
        {"node2", Status::unresolvable("node(s) didn't match the requested node name")},
        {"node3", Status::unschedulable("node(s) didn't match pod topology spread constraints")}},
       {"node1", "node3", "node4"}},
      {"UnschedulableAndUnresolvable status should be skipped but Unschedulable should be tried",
       {{"node2", Status::unresolvable("")},
        {"node3", Status::unschedulable("")},
        {"node4", Status::unresolvable("")}},
       {"node1", "node3"}},
  };
  const Snapshot snap = makeSnapshot({"node1", "node2", "node3", "node4"}, {});
  for (const auto& tc : table) {
    SECTION(tc.name) {
      std::vector<std::string> got;
      for (const auto* n : nodesWherePreemptionMightHelp(snap, tc.statuses))
        got.push_back(n->name());
      CHECK(got == tc.expected);
    }
  }
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream::dptest
