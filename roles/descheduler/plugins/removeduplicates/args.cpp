// RemoveDuplicatesArgs: strict decoding and upstream's validation.
#include "plugins/removeduplicates/args.h"

#include <boost/json.hpp>

#include <utility>

#include "plugins/pluginkit/args_reader.h"

namespace koord::roles::descheduler::removeduplicates {

namespace json = boost::json;

Expected<RemoveDuplicatesArgs> decodeRemoveDuplicatesArgs(const json::value* args) {
  RemoveDuplicatesArgs a;
  pluginkit::ArgsReader r(args, {"namespaces", "excludeOwnerKinds"});
  r.namespaces(a.namespaces).strings("excludeOwnerKinds", a.exclude_owner_kinds);
  return r.finish(std::move(a));
}

}  // namespace koord::roles::descheduler::removeduplicates
