#include "koord/core/expected.h"

#include <boost/throw_exception.hpp>

#include <stdexcept>

namespace koord {

[[noreturn]] void throw_exception_from_error(const Error& e, const boost::source_location& loc) {
  boost::throw_exception(std::invalid_argument(e.message), loc);
}

}  // namespace koord
