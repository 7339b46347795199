// RemovePodsHavingTooManyRestartsArgs: strict decoding, upstream's (zero) defaults and validation.
#include "plugins/removepodshavingtoomanyrestarts/args.h"

#include <boost/json.hpp>

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"
#include "plugins/pluginkit/args_reader.h"

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
  pluginkit::ArgsReader r(args, {"namespaces", "labelSelector", "podRestartThreshold",
                                 "includingInitContainers", "states"});
  r.common(a.common)
      .int32("podRestartThreshold", a.pod_restart_threshold)
      .boolean("includingInitContainers", a.including_init_containers)
      .strings("states", a.states)
      .then([&] { return validate(a); });
  return r.finish(std::move(a));
}

}  // namespace koord::roles::descheduler::toomanyrestarts
