#include "statesinformer/node_reservation.h"

#include <boost/json.hpp>

#include <algorithm>

#include "koord/cgroup/cpu_topology.h"
#include "koord/kube/quantity.h"

namespace koord::roles::koordlet {

namespace json = boost::json;

namespace {

constexpr std::string_view kReservationAnnotation = "node.koordinator.sh/reservation";

const json::object* reservation(const NodeInfo& node, json::value& holder) {
  auto it = node.annotations.find(std::string(kReservationAnnotation));
  if (it == node.annotations.end())
    return nullptr;
  boost::system::error_code ec;
  holder = json::parse(it->second, ec);
  if (ec || !holder.is_object())
    return nullptr;
  return &holder.as_object();
}

}  // namespace

std::vector<int> nodeReservedCPUs(const NodeInfo& node) {
  json::value holder;
  const auto* r = reservation(node, holder);
  if (r == nullptr)
    return {};
  auto it = r->find("reservedCPUs");
  if (it == r->end() || !it->value().is_string() || it->value().as_string().empty())
    return {};
  auto cpus = cgroup::parseCpuList(std::string_view(it->value().as_string()));
  return cpus ? std::move(*cpus) : std::vector<int>{};
}

std::int64_t nodeReservedCPUMilli(const NodeInfo& node) {
  // What the kubelet keeps back (capacity - allocatable) counts too.
  std::int64_t kubelet = 0;
  auto cap = node.capacity.find("cpu");
  auto alloc = node.allocatable.find("cpu");
  if (cap != node.capacity.end() && alloc != node.allocatable.end())
    kubelet = std::max<std::int64_t>(0, cap->second.milliValue() - alloc->second.milliValue());
  json::value holder;
  const auto* r = reservation(node, holder);
  if (r == nullptr)
    return kubelet;
  std::int64_t milli = 0;
  if (auto res = r->find("resources"); res != r->end() && res->value().is_object()) {
    if (auto cpu = res->value().as_object().find("cpu");
        cpu != res->value().as_object().end() && cpu->value().is_string()) {
      if (auto q = kube::Quantity::parse(std::string_view(cpu->value().as_string())))
        milli = std::max<std::int64_t>(0, q->milliValue());
    }
  }
  auto pinned = static_cast<std::int64_t>(nodeReservedCPUs(node).size()) * 1000;
  return std::max({kubelet, milli, pinned});
}

}  // namespace koord::roles::koordlet
