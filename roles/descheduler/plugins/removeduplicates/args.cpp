// RemoveDuplicatesArgs: strict decoding and upstream's validation.
#include "plugins/removeduplicates/args.h"

#include <boost/json.hpp>

#include <utility>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"

namespace koord::roles::descheduler::removeduplicates {

namespace json = boost::json;
namespace strict = kube::strict;

Expected<RemoveDuplicatesArgs> decodeRemoveDuplicatesArgs(const json::value* args) {
  RemoveDuplicatesArgs a;
  if (args == nullptr || args->is_null())
    return a;
  auto root = strict::asObject(*args, "args");
  if (!root)
    return root.error();
  const json::object& o = **root;
  if (auto ok = strict::rejectUnknownFields(o, {"namespaces", "excludeOwnerKinds"}, ""); !ok)
    return ok.error();
  auto ns = podfilter::decodeNamespaces(o);
  if (!ns)
    return ns.error();
  a.namespaces = std::move(*ns);
  auto kinds = kube::jsonfields::stringList(o, "excludeOwnerKinds", "");
  if (!kinds)
    return kinds.error();
  a.exclude_owner_kinds = std::move(*kinds);
  return a;
}

}  // namespace koord::roles::descheduler::removeduplicates
