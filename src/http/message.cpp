#include "koord/http/message.h"

#include <algorithm>
#include <cctype>
#include <ostream>  // Boost.Core's string_view, pulled in below, needs it complete

#include <boost/beast/http/status.hpp>

namespace koord::http {

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view findHeader(const Headers& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (equalsIgnoreCase(key, name))
      return value;
  }
  return {};
}

Response text(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response json(int status, std::string body) {
  Response r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

std::string_view reasonPhrase(int status) {
  if (status < 100 || status > 999)
    return {};
  auto known = boost::beast::http::int_to_status(static_cast<unsigned>(status));
  if (known == boost::beast::http::status::unknown)
    return {};
  return boost::beast::http::obsolete_reason(known);
}

}  // namespace koord::http
