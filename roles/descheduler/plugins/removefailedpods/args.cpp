// RemoveFailedPodsArgs: strict decoding with upstream's defaults and validation.
#include "plugins/removefailedpods/args.h"

#include <boost/json.hpp>

#include <utility>

#include "plugins/pluginkit/args_reader.h"

namespace koord::roles::descheduler::failedpods {

namespace json = boost::json;

Expected<RemoveFailedPodsArgs> decodeRemoveFailedPodsArgs(const json::value* args) {
  RemoveFailedPodsArgs a;
  pluginkit::ArgsReader r(args, {"namespaces", "labelSelector", "excludeOwnerKinds",
                                 "minPodLifetimeSeconds", "reasons", "includingInitContainers"});
  r.common(a.common)
      .strings("excludeOwnerKinds", a.exclude_owner_kinds)
      .uint64("minPodLifetimeSeconds", a.min_pod_lifetime_seconds)
      .strings("reasons", a.reasons)
      .boolean("includingInitContainers", a.including_init_containers);
  return r.finish(std::move(a));
}

}  // namespace koord::roles::descheduler::failedpods
