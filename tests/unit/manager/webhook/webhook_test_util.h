// Helpers shared by the webhook tests: JSON literals, AdmissionReview bodies and decoding the
// base64 patch of an answer.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>

#include <catch2/catch.hpp>

namespace koord::manager::webhook::testing {

inline boost::json::value parse(std::string_view text) {
  return boost::json::parse(text);
}

inline boost::json::object parseObject(std::string_view text) {
  return boost::json::parse(text).as_object();
}

/// A review for `resource` with `object` (and `old_object` when not empty).
inline std::string review(std::string_view operation, std::string_view object,
                          std::string_view resource = "pods", std::string_view old_object = "",
                          std::string_view api_version = "admission.k8s.io/v1") {
  std::string out = "{\"apiVersion\":\"" + std::string(api_version) +
                    "\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u-1\",\"kind\":{},"
                    "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"" +
                    std::string(resource) + "\"},\"namespace\":\"default\",\"operation\":\"" +
                    std::string(operation) + "\"";
  if (!object.empty())
    out += ",\"object\":" + std::string(object);
  if (!old_object.empty())
    out += ",\"oldObject\":" + std::string(old_object);
  out += "}}";
  return out;
}

inline std::string base64Decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    if (c == '+')
      return 62;
    if (c == '/')
      return 63;
    return -1;
  };
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : in) {
    int v = value(c);
    if (v < 0)
      break;
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  return out;
}

}  // namespace koord::manager::webhook::testing
