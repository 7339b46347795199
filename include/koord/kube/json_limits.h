// The bounds every decoder of API objects shares: how deep an object may nest. Objects arrive from
// the API server through lists, watches and gets, and all three must accept the same objects.
#pragma once

#include <boost/json/parse_options.hpp>

#include <cstddef>

namespace koord::kube {

/// Go's encoding/json refuses nesting deeper than this, so the API server stores nothing deeper,
/// and anything shallower it may store: a schema-free CRD field (NodeMetric status.devices) can
/// nest that deep. Boost.JSON's own default (32) refused such objects, and a watch that cannot
/// decode an event can never move past it. Values this deep are safe to parse, copy and destroy
/// on a default 8 MiB thread stack (Boost.JSON recurses for those); json::serialize recurses
/// more per level, so never serialize a whole object that came from the API server.
inline constexpr std::size_t kMaxApiObjectDepth = 10000;

inline boost::json::parse_options apiObjectParseOptions() {
  boost::json::parse_options o;
  o.max_depth = kMaxApiObjectDepth;
  return o;
}

}  // namespace koord::kube
