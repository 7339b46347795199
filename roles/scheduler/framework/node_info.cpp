#include "node_info.h"

#include <algorithm>

namespace koord::roles::scheduler {

namespace {

constexpr std::string_view kAnyIP = "0.0.0.0";

bool sameSlot(const HostPort& a, const HostPort& b) {
  return a.port == b.port && a.protocol == b.protocol && a.host_ip == b.host_ip;
}

}  // namespace

void HostPortUsage::add(const HostPort& p) {
  ports_.push_back(p);
}

void HostPortUsage::remove(const HostPort& p) {
  auto it =
      std::find_if(ports_.begin(), ports_.end(), [&](const auto& q) { return sameSlot(p, q); });
  if (it != ports_.end())
    ports_.erase(it);
}

bool HostPortUsage::conflicts(const HostPort& p) const {
  // kube-scheduler's HostPortInfo.CheckConflict: the same protocol and port, and either side
  // on 0.0.0.0 or both on one IP.
  return std::any_of(ports_.begin(), ports_.end(), [&](const HostPort& q) {
    return q.port == p.port && q.protocol == p.protocol &&
           (q.host_ip == p.host_ip || q.host_ip == kAnyIP || p.host_ip == kAnyIP);
  });
}

const std::string& NodeInfo::name() const {
  static const std::string kNone;
  return node ? node->name : kNone;
}

void NodeInfo::addPod(std::shared_ptr<const PodInfo> pod) {
  requested.add(pod->requests);
  non_zero_requested.milli_cpu += pod->non_zero_requests.milli_cpu;
  non_zero_requested.memory += pod->non_zero_requests.memory;
  for (const auto& p : pod->host_ports)
    used_ports.add(p);
  if (!pod->pod_affinity.empty() || !pod->pod_anti_affinity.empty())
    pods_with_affinity.push_back(pod);
  if (!pod->pod_anti_affinity.required.empty())
    pods_with_required_anti_affinity.push_back(pod);
  pods.push_back(std::move(pod));
  ++generation;
}

bool NodeInfo::removePod(const std::string& uid) {
  auto it = std::find_if(pods.begin(), pods.end(), [&](const auto& p) { return p->uid == uid; });
  if (it == pods.end())
    return false;
  const auto pod = *it;
  pods.erase(it);
  auto drop = [&](auto& list) {
    std::erase_if(list, [&](const auto& p) { return p->uid == uid; });
  };
  drop(pods_with_affinity);
  drop(pods_with_required_anti_affinity);
  requested.subtract(pod->requests);
  non_zero_requested.milli_cpu -= pod->non_zero_requests.milli_cpu;
  non_zero_requested.memory -= pod->non_zero_requests.memory;
  for (const auto& p : pod->host_ports)
    used_ports.remove(p);
  ++generation;
  return true;
}

}  // namespace koord::roles::scheduler
