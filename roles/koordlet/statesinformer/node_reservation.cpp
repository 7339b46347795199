#include "statesinformer/node_reservation.h"

#include <boost/json.hpp>

#include <algorithm>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "koord/apis/input_limits.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/core/saturating.h"
#include "koord/kube/decode.h"

namespace koord::roles::koordlet {

namespace json = boost::json;

kube::Expected<NodeReservation> nodeReservation(const NodeInfo& node) {
  NodeReservation out;
  auto it = node.annotations.find(apis::kAnnotationNodeReservation);
  if (it == node.annotations.end() || it->second.empty())
    return out;
  if (auto size = apis::checkValueSize("value", it->second, apis::kMaxAnnotationValueBytes); !size)
    return size.error();
  boost::system::error_code ec;
  const json::value v = json::parse(it->second, ec);
  if (ec)
    return kube::makeKubeError(fmt::format("not JSON: {}", ec.message()));
  if (v.is_null())
    return out;
  if (!v.is_object())
    return kube::makeKubeError("expected an object");
  const json::object& r = v.get_object();
  if (const json::value* res = r.if_contains("resources"); res != nullptr && !res->is_null()) {
    auto resources = kube::decodeResourceList(*res, "resources");
    if (!resources)
      return resources.error();
    if (auto cpu = resources->find("cpu"); cpu != resources->end())
      out.cpu_milli = std::max<std::int64_t>(0, cpu->second.milliValue());
  }
  if (const json::value* cpus = r.if_contains("reservedCPUs");
      cpus != nullptr && !cpus->is_null()) {
    if (!cpus->is_string())
      return kube::makeKubeError("reservedCPUs: expected a string");
    auto parsed = cgroup::parseCpuList(std::string_view(cpus->get_string()));
    if (!parsed)
      return kube::makeKubeError(fmt::format("reservedCPUs: {}", parsed.error().message));
    out.reserved_cpus = std::move(*parsed);
  }
  return out;
}

std::int64_t nodeReservedCPUMilli(const NodeInfo& node, const NodeReservation& reservation) {
  // What the kubelet keeps back (capacity - allocatable) counts too.
  std::int64_t kubelet = 0;
  auto cap = node.capacity.find("cpu");
  auto alloc = node.allocatable.find("cpu");
  if (cap != node.capacity.end() && alloc != node.allocatable.end())
    kubelet = std::max<std::int64_t>(
        0, saturatingSub(cap->second.milliValue(), alloc->second.milliValue()));
  // At most kMaxCpuId + 1 ids: the product cannot overflow.
  auto pinned = static_cast<std::int64_t>(reservation.reserved_cpus.size()) * 1000;
  return std::max({kubelet, reservation.cpu_milli, pinned});
}

}  // namespace koord::roles::koordlet
