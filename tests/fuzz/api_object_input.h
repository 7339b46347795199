// The input of the fuzz targets over the API server's objects: byte 0 picks one of the target's
// projections, the rest is the object's JSON, parsed as the informers parse what they receive.
#pragma once

#include <boost/json.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "koord/kube/json_limits.h"

namespace koord::fuzz {

/// One projection and the checks on what it gives.
using ApiObjectCheck = void (*)(const boost::json::value&);

/// Runs the projection byte 0 picks (modulo their number) on the rest of the input; input that
/// is empty or not JSON does nothing. Returns libFuzzer's 0.
inline int runApiObjectCheck(const std::uint8_t* data, std::size_t size,
                             std::span<const ApiObjectCheck> checks) {
  if (size == 0 || checks.empty())
    return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  boost::system::error_code ec;
  // Objects as deep as the API server may store them.
  const boost::json::value v =
      boost::json::parse(text, ec, boost::json::storage_ptr(), kube::apiObjectParseOptions());
  if (!ec)
    checks[data[0] % checks.size()](v);
  return 0;
}

}  // namespace koord::fuzz
