// Builders for InterPodAffinity's table tests: pods with (anti-)affinity terms written in the
// label-selector string syntax, a cluster of labelled nodes served as the testkit handle's
// snapshot, and one-call PreFilter+Filter and PreScore+Score+NormalizeScore runs.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/snapshot.h"
#include "plugins/upstream/interpodaffinity/plugin.h"
#include "plugins/upstream/interpodaffinity/state.h"
#include "scheduler/builders.h"
#include "scheduler/fake_handle.h"

namespace ipa_test {

using namespace koord::roles::scheduler;
using namespace koord::roles::scheduler::upstream::interpodaffinity;
using koord::kube::Labels;

/// A PodAffinityTerm: `selector` in the string syntax ("service in (a,b)", "foo", "!bar");
/// no namespaces means the owning pod's namespace, as the pod decoder fills it in.
struct Term {
  std::string selector;
  std::string topology_key;
  std::vector<std::string> namespaces = {};
};

struct WeightedTerm {
  std::int32_t weight = 0;
  Term term;
};

struct PodSpec {
  std::string name = "";
  std::string namespace_ = "";
  std::string node = "";
  Labels labels = {};
  std::vector<Term> affinity = {};
  std::vector<Term> anti_affinity = {};
  std::vector<WeightedTerm> preferred_affinity = {};
  std::vector<WeightedTerm> preferred_anti_affinity = {};
};

inline PodAffinityTerm makeTerm(const Term& t, const std::string& pod_namespace) {
  PodAffinityTerm out;
  auto selector = koord::kube::Selector::parse(t.selector);
  INFO(t.selector);
  REQUIRE(selector.has_value());
  out.label_selector = std::move(*selector);
  out.namespaces = t.namespaces.empty() ? std::vector<std::string>{pod_namespace} : t.namespaces;
  out.topology_key = t.topology_key;
  return out;
}

inline PodInfo makePod(const PodSpec& spec) {
  PodInfo p;
  p.name = spec.name.empty() ? "pod" : spec.name;
  p.uid = p.name;
  p.namespace_ = spec.namespace_;
  p.node_name = spec.node;
  p.labels = spec.labels;
  for (const auto& t : spec.affinity)
    p.pod_affinity.required.push_back(makeTerm(t, p.namespace_));
  for (const auto& t : spec.anti_affinity)
    p.pod_anti_affinity.required.push_back(makeTerm(t, p.namespace_));
  for (const auto& w : spec.preferred_affinity)
    p.pod_affinity.preferred.push_back({w.weight, makeTerm(w.term, p.namespace_)});
  for (const auto& w : spec.preferred_anti_affinity)
    p.pod_anti_affinity.preferred.push_back({w.weight, makeTerm(w.term, p.namespace_)});
  return p;
}

struct NodeSpec {
  std::string name;
  Labels labels = {};
};

inline std::shared_ptr<const Node> makeNode(const NodeSpec& spec) {
  return testkit::makeNode(spec.name, spec.labels);
}

/// Nodes with the pods bound to them (each pod on the node its spec names; unique UIDs), as the
/// handle's snapshot.
class Cluster : public testkit::FakeHandle {
 public:
  Cluster(const std::vector<NodeSpec>& nodes, const std::vector<PodSpec>& pods) {
    std::vector<std::shared_ptr<NodeInfo>> infos;
    for (const auto& n : nodes) {
      auto info = std::make_shared<NodeInfo>();
      info->node = makeNode(n);
      infos.push_back(info);
    }
    int i = 0;
    for (const auto& spec : pods) {
      auto pod = makePod(spec);
      pod.uid = "existing-" + std::to_string(i++);
      for (auto& info : infos) {
        if (info->name() == spec.node)
          info->addPod(std::make_shared<const PodInfo>(pod));
      }
    }
    std::vector<std::shared_ptr<const NodeInfo>> all(infos.begin(), infos.end());
    setSnapshot(Snapshot(std::move(all)));
  }
  /// A snapshot built by hand (NodeInfos whose derived lists a test chose).
  explicit Cluster(Snapshot snapshot) : testkit::FakeHandle(std::move(snapshot)) {}

  /// Whether some pod is nominated somewhere (PreFilter may answer Skip only when none is).
  void setNominations(bool any) { fakeCluster().any_nominated = any; }
};

inline std::shared_ptr<InterPodAffinity> makePlugin(const Cluster& cluster,
                                                    std::int32_t hard_pod_affinity_weight = 1) {
  auto args = std::make_shared<InterPodAffinityArgs>();
  args->hard_pod_affinity_weight = hard_pod_affinity_weight;
  return std::make_shared<InterPodAffinity>(std::move(args), cluster);
}

/// An expected Filter verdict: success, or a code with its reasons.
struct Verdict {
  Code code = Code::kSuccess;
  std::vector<std::string> reasons = {};
};

inline Verdict fits() {
  return {};
}
inline Verdict affinityRulesFail() {
  return {Code::kUnschedulableAndUnresolvable,
          {std::string(kErrReasonAffinityNotMatch), std::string(kErrReasonAffinityRulesNotMatch)}};
}
inline Verdict antiAffinityRulesFail() {
  return {
      Code::kUnschedulable,
      {std::string(kErrReasonAffinityNotMatch), std::string(kErrReasonAntiAffinityRulesNotMatch)}};
}
inline Verdict existingAntiAffinityFail() {
  return {Code::kUnschedulable,
          {std::string(kErrReasonAffinityNotMatch),
           std::string(kErrReasonExistingAntiAffinityRulesNotMatch)}};
}

inline void checkVerdict(const Status& got, const Verdict& want) {
  INFO(got.message());
  CHECK(got.code() == want.code);
  CHECK(got.reasons() == want.reasons);
}

/// PreFilter then Filter on each node in order. A PreFilter answering Skip passes every node
/// without Filter, as the framework runs it (1.20 passed them in Filter).
inline std::vector<Status> filterAll(const Cluster& cluster, const PodInfo& pod) {
  auto plugin = makePlugin(cluster);
  CycleState state;
  const Status pre = plugin->preFilter(state, pod);
  INFO(pre.message());
  REQUIRE((pre.ok() || pre.isSkip()));
  std::vector<Status> out;
  for (const auto* n : cluster.nodes())
    out.push_back(pre.isSkip() ? Status::success() : plugin->filter(state, pod, *n));
  return out;
}

/// PreScore, Score on each node in order, NormalizeScore: the normalised scores. A PreScore
/// answering Skip leaves the plugin out, which is every node at 0 (what 1.20 computed then).
inline std::vector<std::int64_t> scoreAll(const Cluster& cluster, const PodInfo& pod,
                                          std::int32_t hard_pod_affinity_weight = 1) {
  auto plugin = makePlugin(cluster, hard_pod_affinity_weight);
  CycleState state;
  const auto nodes = cluster.nodes();
  const Status pre = plugin->preScore(state, pod, nodes);
  INFO(pre.message());
  REQUIRE((pre.ok() || pre.isSkip()));
  if (pre.isSkip()) {
    CHECK(state.read<PreScoreState>(kPreScoreStateKey) == nullptr);
    return std::vector<std::int64_t>(nodes.size(), 0);
  }
  std::vector<NodeScore> scores;
  for (const auto* n : nodes) {
    std::int64_t s = 0;
    const Status st = plugin->score(state, pod, *n, s);
    INFO(st.message());
    REQUIRE(st.ok());
    scores.push_back({n->name(), s});
  }
  REQUIRE(plugin->hasNormalizeScore());
  REQUIRE(plugin->normalizeScore(state, pod, scores).ok());
  std::vector<std::int64_t> out;
  for (const auto& s : scores)
    out.push_back(s.score);
  return out;
}

using Pair = std::tuple<std::string, std::string, std::int64_t>;
using Pairs = std::vector<Pair>;

}  // namespace ipa_test
