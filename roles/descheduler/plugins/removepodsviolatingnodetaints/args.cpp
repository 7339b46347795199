// RemovePodsViolatingNodeTaintsArgs: strict decoding and upstream's validation.
#include "plugins/removepodsviolatingnodetaints/args.h"

#include <boost/json.hpp>

#include <utility>

#include "koord/kube/strict_fields.h"
#include "plugins/pluginkit/args_reader.h"

namespace koord::roles::descheduler::nodetaints {

namespace json = boost::json;
namespace strict = kube::strict;

Expected<RemovePodsViolatingNodeTaintsArgs> decodeRemovePodsViolatingNodeTaintsArgs(
    const json::value* args) {
  RemovePodsViolatingNodeTaintsArgs a;
  pluginkit::ArgsReader r(args, {"namespaces", "labelSelector", "includePreferNoSchedule",
                                 "excludedTaints", "includedTaints"});
  r.common(a.common)
      .boolean("includePreferNoSchedule", a.include_prefer_no_schedule)
      .strings("excludedTaints", a.excluded_taints)
      .strings("includedTaints", a.included_taints)
      .then([&]() -> Expected<void> {
        if (!a.excluded_taints.empty() && a.included_taints && !a.included_taints->empty())
          return strict::fieldError(
              "includedTaints", "either includedTaints or excludedTaints can be set, but not both");
        return {};
      });
  return r.finish(std::move(a));
}

}  // namespace koord::roles::descheduler::nodetaints
