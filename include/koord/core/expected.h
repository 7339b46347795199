// A value or an Error that says what was wrong in words (the bad field, token or path), with an
// error_code so a caller can fold it into koord::Result. Parsers and projections of every layer use
// it.
#pragma once

#include <boost/assert/source_location.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <string>
#include <utility>

#include "koord/core/result.h"

namespace koord {

struct Error {
  // Two arguments on purpose: an Error constructible from a lone string would make
  // Expected<std::string> ambiguous.
  /// What error() answers for a result that holds a value.
  Error() = default;
  Error(std::string message_in, boost::system::error_code code_in)
      : message(std::move(message_in)), code(code_in) {}

  std::string message;
  boost::system::error_code code;
};

/// A value or an Error. boost::system::result rather than koord::Result because an error_code
/// alone cannot say which field of a pod spec was wrong.
template <typename T>
using Expected = boost::system::result<T, Error>;

/// An Error with the message and Errc::kInvalidArgument: input that could not be used.
inline Error invalidArgument(std::string message) {
  return Error(std::move(message), makeError(Errc::kInvalidArgument));
}

/// Found by boost::system::result through ADL when value() is called on an error: that is a
/// programmer error (the caller did not check), so it throws.
[[noreturn]] void throw_exception_from_error(const Error& e, const boost::source_location& loc);

}  // namespace koord
