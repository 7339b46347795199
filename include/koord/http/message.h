// The plain request and response values that koord's HTTP server hands to handlers and its
// client returns, so that no role needs to touch Beast types.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace koord::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

/// Case-insensitive lookup of the first header named `name`; "" if absent.
std::string_view findHeader(const Headers& headers, std::string_view name);
/// ASCII case-insensitive equality, as HTTP header names and tokens compare.
bool equalsIgnoreCase(std::string_view a, std::string_view b);

struct Request {
  std::string method;
  std::string target;  // as sent: "/path?query"
  std::string path;    // percent-decoded; handlers are matched on it exactly
  std::string query;   // still percent-encoded, without the '?'
  Headers headers;
  std::string body;
  std::string remote;  // peer "ip:port", for logs

  std::string_view header(std::string_view name) const { return findHeader(headers, name); }
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  /// Extra headers. The server owns framing (Content-Length, Transfer-Encoding), so those are
  /// ignored here; "Connection: close" is honoured.
  Headers headers;
  std::string body;

  std::string_view header(std::string_view name) const { return findHeader(headers, name); }
};

Response text(int status, std::string body);
Response json(int status, std::string body);

/// The standard reason phrase ("Not Found"), or "" for codes HTTP does not name.
std::string_view reasonPhrase(int status);

}  // namespace koord::http
