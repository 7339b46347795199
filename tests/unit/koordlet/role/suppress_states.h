// The node the suppression tests run on: given CPU capacity, a NodeSLO threshold object, one
// Burstable LS pod (nginx) and one BE pod (hog), as the states informer would hand them over.
#pragma once

#include <boost/json.hpp>

#include <memory>
#include <string_view>
#include <vector>

#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::testing {

inline constexpr const char* kBEUid = "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e";
inline constexpr const char* kLSUid = "0123456789abcdef0123456789abcdef";

inline StatesSnapshot suppressStates(std::string_view cpu_capacity,
                                     std::string_view threshold_json) {
  StatesSnapshot s;
  auto node = std::make_shared<NodeInfo>();
  node->name = "node-a";
  node->capacity.emplace("cpu", kube::Quantity::parse(cpu_capacity).value());
  node->allocatable.emplace("cpu", kube::Quantity::parse(cpu_capacity).value());
  s.node = node;
  auto slo = std::make_shared<NodeSLOInfo>();
  slo->resource_used_threshold_with_be =
      std::make_shared<const boost::json::object>(boost::json::parse(threshold_json).as_object());
  s.node_slo = slo;
  PodMeta ls;
  ls.namespace_ = "web";
  ls.name = "nginx";
  ls.uid = kLSUid;
  ls.kube_qos = apis::KubeQoS::kBurstable;
  ls.phase = PodPhase::kRunning;
  PodMeta be;
  be.namespace_ = "batch";
  be.name = "hog";
  be.uid = kBEUid;
  be.kube_qos = apis::KubeQoS::kBestEffort;
  be.labels["koordinator.sh/qosClass"] = "BE";
  be.phase = PodPhase::kRunning;
  s.pods = std::make_shared<std::vector<PodMeta>>(std::vector<PodMeta>{ls, be});
  s.synced = true;
  return s;
}

}  // namespace koord::roles::koordlet::testing
