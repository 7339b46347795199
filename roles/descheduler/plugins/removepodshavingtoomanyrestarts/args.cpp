// RemovePodsHavingTooManyRestartsArgs: strict decoding, upstream's (zero) defaults and validation.
#include "plugins/removepodshavingtoomanyrestarts/args.h"

#include <boost/json.hpp>

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"

namespace koord::roles::descheduler::toomanyrestarts {

namespace json = boost::json;
namespace strict = kube::strict;

namespace {

// Kept apart so the null-args path validates exactly what a document does.
Expected<void> validate(const RemovePodsHavingTooManyRestartsArgs& a) {
  if (a.pod_restart_threshold < 1)
    return strict::fieldError(
        "podRestartThreshold",
        fmt::format("must be at least 1, got {} (it has no default)", a.pod_restart_threshold));
  for (std::size_t i = 0; i < a.states.size(); ++i) {
    if (a.states[i] != "Running" && a.states[i] != "CrashLoopBackOff")
      return strict::fieldError(kube::jsonfields::indexPath("states", i),
                                fmt::format("{:?} is not a state this plugin "
                                            "knows (Running, CrashLoopBackOff)",
                                            a.states[i]));
  }
  return {};
}

}  // namespace

Expected<RemovePodsHavingTooManyRestartsArgs> decodeTooManyRestartsArgs(const json::value* args) {
  RemovePodsHavingTooManyRestartsArgs a;
  if (args != nullptr && !args->is_null()) {
    auto root = strict::asObject(*args, "args");
    if (!root)
      return root.error();
    const json::object& o = **root;
    const std::string_view path;
    if (auto ok = strict::rejectUnknownFields(o,
                                              {"namespaces", "labelSelector", "podRestartThreshold",
                                               "includingInitContainers", "states"},
                                              path);
        !ok)
      return ok.error();
    auto common = podfilter::decodeCommonArgs(o, path);
    if (!common)
      return common.error();
    a.common = std::move(*common);
    auto threshold = strict::int32Field(o, "podRestartThreshold", path);
    if (!threshold)
      return threshold.error();
    a.pod_restart_threshold = threshold->value_or(0);
    auto init = strict::boolField(o, "includingInitContainers", path);
    if (!init)
      return init.error();
    a.including_init_containers = init->value_or(false);
    auto states = kube::jsonfields::stringList(o, "states", path);
    if (!states)
      return states.error();
    a.states = std::move(*states);
  }
  if (auto ok = validate(a); !ok)
    return ok.error();
  return a;
}

}  // namespace koord::roles::descheduler::toomanyrestarts
