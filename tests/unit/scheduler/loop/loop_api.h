// A SchedulerApi for the loop tests that records every call (bindings, patches, reservation
// writes, failures) and answers from maps the test fills: pods, reservations, and the
// NodeResourceTopology and Device objects the fine-grained plugins read.
#pragma once

#include <boost/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/device.h"
#include "koord/apis/node_resource_topology.h"
#include "plugins/deviceshare/device.h"
#include "plugins/nodenumaresource/register.h"
#include "scheduler/map_object_source.h"
#include "scheduler_api.h"

namespace koord::roles::scheduler::testing {

class LoopApi final : public SchedulerApi {
 public:
  const AnyObjectSource* objectSource(std::string_view key) const override {
    if (key == nodenumaresource::kNodeResourceTopologySource)
      return &topologies;
    if (key == deviceshare::kDeviceSource)
      return &devices;
    return nullptr;
  }
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override {
    calls.push_back("bind " + pod->key() + " " + node);
    bound.push_back(pod);
    done({});
  }
  void patchPod(std::shared_ptr<const PodInfo> pod, boost::json::value patch,
                ApiCallback done) const override {
    calls.push_back("patch " + pod->key() + " " + boost::json::serialize(patch));
    done({});
  }
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override {
    auto it = pods.find(key);
    return it == pods.end() ? nullptr : it->second;
  }
  void reportScheduled(const PodInfo&, const std::string&, const std::string&) override {}
  void reportFailure(const PodInfo& pod, const std::string&, std::string_view,
                     const std::string& message, const std::string&) override {
    calls.push_back("failed " + pod.key() + ": " + message);
  }
  std::shared_ptr<const ReservationState> currentReservation(
      const std::string& name) const override {
    auto it = reservations.find(name);
    return it == reservations.end() ? nullptr : it->second;
  }
  void patchReservation(const apis::Reservation& r, boost::json::value patch,
                        ApiCallback done) override {
    calls.push_back("reservation " + r.name);
    reservation_patches.push_back(std::move(patch));
    done({});
  }
  void patchReservationStatus(const apis::Reservation& r, boost::json::value patch,
                              ApiCallback done) override {
    calls.push_back("status " + r.name + " " + boost::json::serialize(patch));
    done({});
  }

  testkit::MapObjectSource<apis::NodeResourceTopology> topologies;
  testkit::MapObjectSource<apis::Device> devices;
  std::map<std::string, std::shared_ptr<const PodInfo>> pods;
  std::map<std::string, std::shared_ptr<const ReservationState>> reservations;
  std::vector<boost::json::value> reservation_patches;
  mutable std::vector<std::string> calls;
  mutable std::vector<std::shared_ptr<const PodInfo>> bound;
};

/// Two sockets of four SMT cores, as the koordlet reports them: CPUs 0-7 on NUMA node 0, 8-15
/// on node 1, core = cpu / 2; each NUMA zone with 8 CPUs and 16Gi. `policy`: the kubelet's
/// topology policy, none when empty.
inline std::shared_ptr<apis::NodeResourceTopology> loopTopology(const std::string& node,
                                                                const std::string& policy = "") {
  auto nrt = std::make_shared<apis::NodeResourceTopology>();
  nrt->name = node;
  apis::CPUTopology t;
  for (int cpu = 0; cpu < 16; ++cpu)
    t.detail.push_back({cpu, cpu / 2, cpu / 8, cpu / 8});
  nrt->annotations[std::string(apis::kAnnotationNodeCPUTopology)] = apis::formatCPUTopology(t);
  if (!policy.empty())
    nrt->topology_policies = {policy};
  for (int n : {0, 1}) {
    apis::Zone z;
    z.name = apis::nodeZoneName(n);
    z.type = std::string(apis::kZoneTypeNode);
    const auto cpu = *kube::Quantity::parse("8");
    const auto memory = *kube::Quantity::parse("16Gi");
    z.resources = {{"cpu", cpu, cpu, cpu}, {"memory", memory, memory, memory}};
    nrt->zones.push_back(std::move(z));
  }
  return nrt;
}

}  // namespace koord::roles::scheduler::testing
