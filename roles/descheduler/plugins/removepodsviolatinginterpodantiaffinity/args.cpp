// RemovePodsViolatingInterPodAntiAffinityArgs: strict decoding and upstream's validation.
#include "plugins/removepodsviolatinginterpodantiaffinity/args.h"

#include <boost/json.hpp>

#include <utility>

#include "koord/kube/strict_fields.h"

namespace koord::roles::descheduler::interpodantiaffinity {

namespace json = boost::json;
namespace strict = kube::strict;

Expected<RemovePodsViolatingInterPodAntiAffinityArgs>
decodeRemovePodsViolatingInterPodAntiAffinityArgs(const json::value* args) {
  RemovePodsViolatingInterPodAntiAffinityArgs a;
  if (args == nullptr || args->is_null())
    return a;
  auto root = strict::asObject(*args, "args");
  if (!root)
    return root.error();
  if (auto ok = strict::rejectUnknownFields(**root, {"namespaces", "labelSelector"}, ""); !ok)
    return ok.error();
  auto common = podfilter::decodeCommonArgs(**root);
  if (!common)
    return common.error();
  a.common = std::move(*common);
  return a;
}

}  // namespace koord::roles::descheduler::interpodantiaffinity
