// Checks shared by the plugins' args tests: decoding a JSON text, and documents a decoder must
// refuse with the offending field named.
#pragma once

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <span>
#include <string>
#include <string_view>

namespace koord::roles::descheduler::testkit {

/// `decode` (a plugin's args decoder) applied to `text` parsed as JSON.
template <typename Decode>
auto decodeText(Decode decode, std::string_view text) {
  const boost::json::value v = boost::json::parse(text);
  return decode(&v);
}

/// `decode` taking JSON text: `const auto decode = textDecoder(decodeFooArgs);`.
template <typename Decode>
auto textDecoder(Decode decode) {
  return [decode](std::string_view text) { return decodeText(decode, text); };
}

/// A document the decoder refuses, and words its error message must contain.
struct Refusal {
  const char* json;
  const char* names;
};

/// Each document is refused, its message naming what the case says.
template <typename Decode>
void checkRefusals(Decode decode, std::span<const Refusal> cases) {
  for (const auto& c : cases) {
    INFO(c.json);
    auto a = decodeText(decode, c.json);
    REQUIRE_FALSE(a.has_value());
    CHECK_THAT(a.error().message, Catch::Contains(c.names));
  }
}

/// `check(decode(args))` with absent args (nullptr) and with a JSON null.
template <typename Decode, typename Check>
void forNoArgs(Decode decode, Check check) {
  const boost::json::value null_value;
  for (const boost::json::value* v : {static_cast<const boost::json::value*>(nullptr), &null_value})
    check(decode(v));
}

/// Both absent args and a JSON null are refused, the message naming `names`.
template <typename Decode>
void checkNoArgsRefused(Decode decode, const std::string& names) {
  forNoArgs(decode, [&](const auto& a) {
    REQUIRE_FALSE(a.has_value());
    CHECK_THAT(a.error().message, Catch::Contains(names));
  });
}

}  // namespace koord::roles::descheduler::testkit
