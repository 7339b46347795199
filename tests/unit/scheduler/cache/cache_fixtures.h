// Small builders for the cache tests: Nodes with zone labels and PodInfos with requests, bound
// to a node by name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "framework/node_info.h"
#include "framework/pod_info.h"

namespace koord::roles::scheduler::testfx {

inline std::shared_ptr<const Node> makeNode(const std::string& name, const std::string& zone = "",
                                            const std::string& region = "") {
  auto n = std::make_shared<Node>();
  n->name = name;
  n->uid = "uid-" + name;
  if (!zone.empty())
    n->labels["topology.kubernetes.io/zone"] = zone;
  if (!region.empty())
    n->labels["topology.kubernetes.io/region"] = region;
  n->allocatable.milli_cpu = 8000;
  n->allocatable.memory = 16LL << 30;
  return n;
}

inline std::shared_ptr<const PodInfo> makePod(const std::string& name, const std::string& node,
                                              std::int64_t milli_cpu = 100,
                                              std::int64_t memory = 1 << 20,
                                              bool affinity = false) {
  auto p = std::make_shared<PodInfo>();
  p->namespace_ = "default";
  p->name = name;
  p->uid = "uid-" + name;
  p->node_name = node;
  p->requests.milli_cpu = milli_cpu;
  p->requests.memory = memory;
  p->non_zero_requests = p->requests;
  if (affinity)
    p->pod_affinity.required.push_back(PodAffinityTerm{});
  return p;
}

/// The same pod (same UID) as the informer would deliver it, on another node or with other
/// requests.
inline std::shared_ptr<const PodInfo> rebound(const PodInfo& pod, const std::string& node,
                                              std::int64_t milli_cpu) {
  auto p = std::make_shared<PodInfo>(pod);
  p->node_name = node;
  p->requests.milli_cpu = milli_cpu;
  p->non_zero_requests.milli_cpu = milli_cpu;
  return p;
}

}  // namespace koord::roles::scheduler::testfx
