// Private to the http layer: OpenSSL reports failures through a thread-local error queue that
// must be drained, or a stale entry surfaces as the cause of some later, unrelated call.
#pragma once

#include <string>

namespace koord::http::detail {

/// Empties this thread's OpenSSL error queue into one line ("unknown OpenSSL error" if empty).
std::string drainOpensslErrors();

}  // namespace koord::http::detail
