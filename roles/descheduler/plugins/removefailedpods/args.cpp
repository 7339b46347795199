// RemoveFailedPodsArgs: strict decoding with upstream's defaults and validation.
#include "plugins/removefailedpods/args.h"

#include <boost/json.hpp>

#include <utility>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"

namespace koord::roles::descheduler::failedpods {

namespace json = boost::json;
namespace strict = kube::strict;

Expected<RemoveFailedPodsArgs> decodeRemoveFailedPodsArgs(const json::value* args) {
  RemoveFailedPodsArgs a;
  if (args == nullptr || args->is_null())
    return a;
  auto root = strict::asObject(*args, "args");
  if (!root)
    return root.error();
  const json::object& o = **root;
  const std::string_view path;
  if (auto ok = strict::rejectUnknownFields(
          o,
          {"namespaces", "labelSelector", "excludeOwnerKinds", "minPodLifetimeSeconds", "reasons",
           "includingInitContainers"},
          path);
      !ok)
    return ok.error();
  auto common = podfilter::decodeCommonArgs(o, path);
  if (!common)
    return common.error();
  a.common = std::move(*common);
  auto kinds = kube::jsonfields::stringList(o, "excludeOwnerKinds", path);
  if (!kinds)
    return kinds.error();
  a.exclude_owner_kinds = std::move(*kinds);
  // Go's uint: a negative number does not decode.
  auto min_age = strict::int64Field(o, "minPodLifetimeSeconds", path);
  if (!min_age)
    return min_age.error();
  if (*min_age) {
    if (**min_age < 0)
      return strict::fieldError("minPodLifetimeSeconds", "must not be negative");
    a.min_pod_lifetime_seconds = static_cast<std::uint64_t>(**min_age);
  }
  auto reasons = kube::jsonfields::stringList(o, "reasons", path);
  if (!reasons)
    return reasons.error();
  a.reasons = std::move(*reasons);
  auto init = strict::boolField(o, "includingInitContainers", path);
  if (!init)
    return init.error();
  a.including_init_containers = init->value_or(false);
  return a;
}

}  // namespace koord::roles::descheduler::failedpods
