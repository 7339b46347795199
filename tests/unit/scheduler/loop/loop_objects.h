// The nodes and pods the loop tests schedule: a node of the given CPU with room for the rest, and
// a koord-scheduler pod requesting the given CPU and 1 GiB.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "framework/node_info.h"
#include "framework/pod_info.h"

namespace koord::roles::scheduler::testing {

inline std::shared_ptr<const Node> loopNode(const std::string& name, std::int64_t milli_cpu) {
  auto n = std::make_shared<Node>();
  n->name = name;
  n->uid = "uid-" + name;
  n->allocatable.milli_cpu = milli_cpu;
  n->allocatable.memory = 32LL << 30;
  n->allocatable.allowed_pod_number = 110;
  return n;
}

inline std::shared_ptr<PodInfo> loopPod(const std::string& name, std::int64_t milli_cpu) {
  auto p = std::make_shared<PodInfo>();
  p->namespace_ = "default";
  p->name = name;
  p->uid = "uid-" + name;
  p->scheduler_name = "koord-scheduler";
  p->requests.milli_cpu = milli_cpu;
  p->requests.memory = 1 << 30;
  p->non_zero_requests = p->requests;
  return p;
}

}  // namespace koord::roles::scheduler::testing
