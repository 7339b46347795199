// RFC 6902 JSON Patch between two JSON documents: what a mutating webhook answers with, computed
// from the object as it came and as the handler left it.
#pragma once

#include <boost/json/fwd.hpp>

#include <string>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::manager::webhook {

/// One JSON Pointer reference token with '~' as "~0" and '/' as "~1" (RFC 6901), so that
/// "koordinator.sh/qosClass" becomes "koordinator.sh~1qosClass".
std::string escapeJsonPointerToken(std::string_view token);

/// The operations that turn `from` into `to`: objects are compared key by key; arrays of equal
/// length element by element (so one changed container is one small patch), arrays that only
/// grew or shrank at the end get adds or removes there, other arrays are replaced whole; any
/// other difference is a replace. An empty array when the two are equal.
boost::json::array createJsonPatch(const boost::json::value& from, const boost::json::value& to);

/// Applies add, remove, replace, move, copy and test operations in order. For tests: it checks
/// what createJsonPatch produces round-trips, it is not a general-purpose patch engine.
kube::Expected<boost::json::value> applyJsonPatch(const boost::json::value& document,
                                                  const boost::json::array& patch);

}  // namespace koord::manager::webhook
