// PodLifeTimeArgs: strict decoding and upstream's validation.
#include "plugins/podlifetime/args.h"

#include <boost/json.hpp>

#include <utility>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"
#include "plugins/pluginkit/args_reader.h"

namespace koord::roles::descheduler::podlifetime {

namespace json = boost::json;
namespace strict = kube::strict;

namespace {

constexpr std::string_view kStates[] = {"Running", "Pending", "PodInitializing",
                                        "ContainerCreating"};

bool knownState(std::string_view s) {
  for (std::string_view k : kStates) {
    if (s == k)
      return true;
  }
  return false;
}

}  // namespace

Expected<PodLifeTimeArgs> decodePodLifeTimeArgs(const json::value* args) {
  constexpr std::string_view kMax = "maxPodLifeTimeSeconds";
  PodLifeTimeArgs a;
  pluginkit::ArgsReader r(args, {"namespaces", "labelSelector", kMax, "states"});
  r.common(a.common)
      .require(kMax, "must be set (it has no default)")
      .uint64(kMax, a.max_pod_lifetime_seconds)
      .strings("states", a.states);
  if (auto ok = r.status(); !ok)
    return ok.error();
  for (std::size_t i = 0; i < a.states.size(); ++i) {
    if (!knownState(a.states[i]))
      return strict::fieldError(kube::jsonfields::indexPath("states", i),
                                fmt::format("{:?} is not one of Running, Pending, "
                                            "PodInitializing, ContainerCreating",
                                            a.states[i]));
  }
  return a;
}

}  // namespace koord::roles::descheduler::podlifetime
