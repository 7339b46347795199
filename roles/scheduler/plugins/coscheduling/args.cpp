#include "plugins/coscheduling/args.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/core/duration.h"
#include "koord/kube/json_fields.h"
#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::coscheduling {

namespace {

namespace json = boost::json;
namespace jf = kube::jsonfields;

}  // namespace

kube::Expected<CoschedulingArgs> decodeCoschedulingArgs(const json::value* args,
                                                        std::string_view /*api_version*/) {
  CoschedulingArgs out;
  auto o = upstream::argsObject(args);
  if (!o)
    return o.error();
  if (*o == nullptr)
    return out;
  const json::object& a = **o;
  if (auto known = upstream::checkKnownFields(
          a,
          {"apiVersion", "kind", "defaultTimeout", "controllerWorkers", "skipCheckScheduleCycle",
           "enablePreemption", "awareNetworkTopology"},
          "");
      !known)
    return known.error();
  if (const json::value* v = jf::field(a, "defaultTimeout")) {
    if (!v->is_string())
      return jf::typeError("defaultTimeout", "duration string", *v);
    auto d = parseGoDuration(v->get_string());
    if (!d)
      return kube::makeKubeError(fmt::format("defaultTimeout: invalid duration \"{}\"",
                                             std::string_view(v->get_string())));
    out.default_timeout = *d;
  }
  if (const json::value* v = jf::field(a, "controllerWorkers")) {
    auto n = jf::intValue(*v, "controllerWorkers");
    if (!n)
      return n.error();
    out.controller_workers = *n;
  }
  auto skip = jf::optionalBoolField(a, "skipCheckScheduleCycle", "");
  if (!skip)
    return skip.error();
  if (*skip)
    out.skip_check_schedule_cycle = **skip;
  auto preempt = jf::optionalBoolField(a, "enablePreemption", "");
  if (!preempt)
    return preempt.error();
  if (*preempt)
    out.enable_preemption = **preempt;
  auto network = jf::optionalBoolField(a, "awareNetworkTopology", "");
  if (!network)
    return network.error();
  if (*network)
    out.aware_network_topology = **network;
  if (out.default_timeout.count() < 0)
    return kube::makeKubeError(
        fmt::format("defaultTimeout: Invalid value: \"{}\": must not be "
                    "negative",
                    formatGoDuration(out.default_timeout)));
  if (out.controller_workers < 1)
    return kube::makeKubeError(fmt::format(
        "controllerWorkers: Invalid value: {}: must be at least 1", out.controller_workers));
  return out;
}

}  // namespace koord::roles::scheduler::coscheduling
