#include "openssl_errors.h"

#include <openssl/err.h>

namespace koord::http::detail {

std::string drainOpensslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) {
      out += "; ";
    }
    out += buf;
  }
  return out.empty() ? std::string("unknown OpenSSL error") : out;
}

}  // namespace koord::http::detail
