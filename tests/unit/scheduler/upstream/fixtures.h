// Builders for the upstream plugins' table tests: nodes, pods and NodeInfos as kube-scheduler's
// tests make them, plus JSON-literal helpers for affinities, taints and tolerations.
#pragma once

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "framework/node_info.h"
#include "framework/plugin.h"
#include "framework/pod_info.h"
#include "koord/kube/decode.h"

namespace koord::roles::scheduler::upstream::testing {

/// cpu in millicores, memory in bytes, plus scalar resources.
inline Resource res(std::int64_t milli_cpu, std::int64_t memory,
                    std::vector<std::pair<std::string, std::int64_t>> scalars = {}) {
  Resource r;
  r.milli_cpu = milli_cpu;
  r.memory = memory;
  for (const auto& [name, v] : scalars)
    r.setScalar(name, v);
  return r;
}

/// What the pod decoder computes: containers summed, each init container a floor, overhead on
/// top (kube-scheduler's computePodResourceRequest).
inline Resource effectiveRequest(const std::vector<Resource>& containers,
                                 const std::vector<Resource>& init_containers = {},
                                 const Resource& overhead = {}) {
  Resource r;
  for (const auto& c : containers)
    r.add(c);
  for (const auto& c : init_containers)
    r.setMax(c);
  r.add(overhead);
  return r;
}

/// A pod whose containers state every request they make (an explicit 0 included), so its
/// non-zero requests equal its requests.
inline PodInfo podRequesting(const Resource& requests, std::string name = "pod") {
  PodInfo p;
  p.namespace_ = "default";
  p.name = name;
  p.uid = name;
  p.requests = requests;
  p.non_zero_requests.milli_cpu = requests.milli_cpu;
  p.non_zero_requests.memory = requests.memory;
  return p;
}

inline std::shared_ptr<Node> makeNode(std::string name, Resource allocatable = {}) {
  auto n = std::make_shared<Node>();
  n->name = std::move(name);
  n->uid = n->name;
  n->allocatable = allocatable;
  n->capacity = allocatable;
  return n;
}

inline NodeInfo makeNodeInfo(std::shared_ptr<const Node> node,
                             const std::vector<PodInfo>& pods = {}) {
  NodeInfo info;
  info.node = std::move(node);
  int i = 0;
  for (auto p : pods) {
    p.uid = info.node->name + "-existing-" + std::to_string(i++);
    p.node_name = info.node->name;
    info.addPod(std::make_shared<const PodInfo>(std::move(p)));
  }
  return info;
}

inline boost::json::value parseJson(std::string_view text) {
  return boost::json::parse(text);
}

inline kube::NodeAffinity nodeAffinity(std::string_view json) {
  auto a = kube::decodeNodeAffinity(parseJson(json));
  REQUIRE(a.has_value());
  return *a;
}

inline std::vector<kube::Taint> taints(std::string_view json) {
  auto t = kube::decodeTaints(parseJson(json));
  REQUIRE(t.has_value());
  return *t;
}

inline std::vector<kube::Toleration> tolerations(std::string_view json) {
  auto t = kube::decodeTolerations(parseJson(json));
  REQUIRE(t.has_value());
  return *t;
}

/// Score on every node, then normalizeScore when the plugin has one: the scores the framework
/// would weigh. Every status must be success.
inline std::vector<std::int64_t> scoreAll(const ScorePlugin& plugin, const CycleState& state,
                                          const PodInfo& pod, const std::vector<NodeInfo>& nodes) {
  std::vector<NodeScore> scores;
  for (const auto& n : nodes) {
    std::int64_t s = -1;
    const Status st = plugin.score(state, pod, n, s);
    INFO(st.message());
    REQUIRE(st.ok());
    scores.push_back({n.name(), s});
  }
  if (plugin.hasNormalizeScore())
    REQUIRE(plugin.normalizeScore(state, pod, scores).ok());
  std::vector<std::int64_t> out;
  for (const auto& s : scores)
    out.push_back(s.score);
  return out;
}

}  // namespace koord::roles::scheduler::upstream::testing
