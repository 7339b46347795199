#include "plugins/deviceshare/args.h"

#include <boost/json.hpp>

#include "koord/kube/json_fields.h"
#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::deviceshare {

namespace json = boost::json;
namespace jf = kube::jsonfields;

config::KoordScoringStrategy defaultDeviceScoring() {
  return {config::KoordScoringType::kLeastAllocated,
          {{"koordinator.sh/gpu-memory-ratio", 1},
           {"koordinator.sh/rdma", 1},
           {"koordinator.sh/fpga", 1}}};
}

kube::Expected<DeviceShareArgs> decodeDeviceShareArgs(const json::value* args,
                                                      std::string_view /*api_version*/) {
  DeviceShareArgs out;
  auto o = upstream::argsObject(args);
  if (!o)
    return o.error();
  if (*o == nullptr)
    return out;
  const json::object& a = **o;
  if (auto known = upstream::checkKnownFields(a,
                                              {"apiVersion", "kind", "allocator", "scoringStrategy",
                                               "disableDeviceNUMATopologyAlignment"},
                                              "");
      !known)
    return known.error();
  auto allocator = jf::stringField(a, "allocator", "");
  if (!allocator)
    return allocator.error();
  out.allocator = std::move(*allocator);
  auto scoring = config::decodeKoordScoringStrategy(a, "scoringStrategy", out.scoring_strategy);
  if (!scoring)
    return scoring.error();
  out.scoring_strategy = std::move(*scoring);
  auto disable = jf::boolField(a, "disableDeviceNUMATopologyAlignment", "");
  if (!disable)
    return disable.error();
  out.disable_device_numa_topology_alignment = *disable;
  return out;
}

}  // namespace koord::roles::scheduler::deviceshare
