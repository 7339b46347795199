// RemovePodsViolatingNodeAffinityArgs: strict decoding and upstream's validation.
#include "plugins/removepodsviolatingnodeaffinity/args.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <utility>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"
#include "plugins/pluginkit/args_reader.h"

namespace koord::roles::descheduler::nodeaffinity {

namespace json = boost::json;
namespace strict = kube::strict;

namespace {

constexpr std::string_view kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
constexpr std::string_view kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";
constexpr std::string_view kNotSet = "nodeAffinityType needs to be set";

}  // namespace

Expected<RemovePodsViolatingNodeAffinityArgs> decodeRemovePodsViolatingNodeAffinityArgs(
    const json::value* args) {
  RemovePodsViolatingNodeAffinityArgs a;
  std::vector<std::string> types;
  pluginkit::ArgsReader r(args, {"namespaces", "labelSelector", "nodeAffinityType"});
  r.common(a.common).strings("nodeAffinityType", types);
  if (auto ok = r.status(); !ok)
    return ok.error();
  if (types.empty())
    return strict::fieldError("nodeAffinityType", kNotSet);
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string& t = types[i];
    if (t == kRequired) {
      a.node_affinity_type.push_back(NodeAffinityType::kRequired);
    } else if (t == kPreferred) {
      a.node_affinity_type.push_back(NodeAffinityType::kPreferred);
    } else {
      // Upstream logs and skips an unknown type at run time; refusing it here says so sooner.
      return strict::fieldError(kube::jsonfields::indexPath("nodeAffinityType", i),
                                fmt::format("unsupported node affinity type \"{}\"", t));
    }
  }
  return a;
}

}  // namespace koord::roles::descheduler::nodeaffinity
