// The result type for fallible I/O and hot paths: a value or a boost::system::error_code, the
// same error currency Asio, Beast and Boost.JSON use. Exceptions are for startup faults only.
#pragma once

#include <boost/system/result.hpp>

#include <string>

namespace koord {

template <typename T>
using Result = boost::system::result<T, boost::system::error_code>;

/// Errors koord itself raises, beyond the system and Asio categories.
enum class Errc {
  kOk = 0,
  kTimeout,
  kBodyTooLarge,
  kBadResponse,
  kTlsVerifyFailed,
  kShuttingDown,
  kInvalidArgument,
};

const boost::system::error_category& koordCategory();
inline boost::system::error_code makeError(Errc e) {
  return {static_cast<int>(e), koordCategory()};
}

}  // namespace koord
