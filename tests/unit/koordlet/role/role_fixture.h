// Pods the koordlet role tests share: a BE pod with batch resources in two containers, as the
// states informer hands it to BatchResource and to CPU suppression.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "koord/kube/quantity.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet::testing {

inline kube::ResourceList res(std::initializer_list<std::pair<const char*, const char*>> items) {
  kube::ResourceList out;
  for (auto [k, v] : items)
    out.emplace(k, kube::Quantity::parse(v).value());
  return out;
}

/// A running koord BE pod: container a asks batch-cpu 1000 / batch-memory 1Gi with limits 2000 /
/// 2Gi, container b batch-cpu 500 with limits 500 / 512Mi; both with containerd IDs.
inline PodMeta batchResourcePod(std::string namespace_, std::string name, std::string uid) {
  PodMeta p;
  p.namespace_ = std::move(namespace_);
  p.name = std::move(name);
  p.uid = std::move(uid);
  p.phase = PodPhase::kRunning;
  p.kube_qos = apis::KubeQoS::kBestEffort;
  p.qos = apis::QoSClass::kBE;
  p.labels["koordinator.sh/qosClass"] = "BE";
  ContainerMeta a;
  a.name = "a";
  a.requests = res({{"kubernetes.io/batch-cpu", "1000"}, {"kubernetes.io/batch-memory", "1Gi"}});
  a.limits = res({{"kubernetes.io/batch-cpu", "2000"}, {"kubernetes.io/batch-memory", "2Gi"}});
  a.runtime = "containerd";
  a.id = std::string(64, 'a');
  ContainerMeta b;
  b.name = "b";
  b.requests = res({{"kubernetes.io/batch-cpu", "500"}});
  b.limits = res({{"kubernetes.io/batch-cpu", "500"}, {"kubernetes.io/batch-memory", "512Mi"}});
  b.runtime = "containerd";
  b.id = std::string(64, 'b');
  p.containers = {a, b};
  return p;
}

}  // namespace koord::roles::koordlet::testing
