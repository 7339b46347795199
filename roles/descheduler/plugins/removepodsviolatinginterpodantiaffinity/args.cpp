// RemovePodsViolatingInterPodAntiAffinityArgs: strict decoding and upstream's validation.
#include "plugins/removepodsviolatinginterpodantiaffinity/args.h"

#include <boost/json.hpp>

#include <utility>

#include "plugins/pluginkit/args_reader.h"

namespace koord::roles::descheduler::interpodantiaffinity {

namespace json = boost::json;

Expected<RemovePodsViolatingInterPodAntiAffinityArgs>
decodeRemovePodsViolatingInterPodAntiAffinityArgs(const json::value* args) {
  RemovePodsViolatingInterPodAntiAffinityArgs a;
  pluginkit::ArgsReader r(args, {"namespaces", "labelSelector"});
  r.common(a.common);
  return r.finish(std::move(a));
}

}  // namespace koord::roles::descheduler::interpodantiaffinity
