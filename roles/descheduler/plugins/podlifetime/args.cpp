// PodLifeTimeArgs: strict decoding and upstream's validation.
#include "plugins/podlifetime/args.h"

#include <boost/json.hpp>

#include <utility>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"

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
  if (args == nullptr || args->is_null())
    return strict::fieldError(kMax, "must be set (it has no default)");
  auto root = strict::asObject(*args, "args");
  if (!root)
    return root.error();
  const json::object& o = **root;
  const std::string_view path;
  if (auto ok = strict::rejectUnknownFields(
          o, {"namespaces", "labelSelector", "maxPodLifeTimeSeconds", "states"}, path);
      !ok)
    return ok.error();
  PodLifeTimeArgs a;
  auto common = podfilter::decodeCommonArgs(o, path);
  if (!common)
    return common.error();
  a.common = std::move(*common);
  auto max = strict::int64Field(o, kMax, path);
  if (!max)
    return max.error();
  if (!*max)
    return strict::fieldError(kMax, "must be set (it has no default)");
  // Go's uint: a negative number does not decode.
  if (**max < 0)
    return strict::fieldError(kMax, "must not be negative");
  a.max_pod_lifetime_seconds = static_cast<std::uint64_t>(**max);
  auto states = kube::jsonfields::stringList(o, "states", path);
  if (!states)
    return states.error();
  a.states = std::move(*states);
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
