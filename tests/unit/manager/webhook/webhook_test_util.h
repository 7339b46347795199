// Helpers shared by the webhook tests: JSON literals, AdmissionReview bodies and decoding the
// base64 patch of an answer.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "koord/kube/kubeconfig.h"

namespace koord::manager::webhook::testing {

inline boost::json::value parse(std::string_view text) {
  return boost::json::parse(text);
}

inline boost::json::object parseObject(std::string_view text) {
  return boost::json::parse(text).as_object();
}

/// A review for `resource` with `object` (and `old_object` and `username` when not empty).
inline std::string review(std::string_view operation, std::string_view object,
                          std::string_view resource = "pods", std::string_view old_object = "",
                          std::string_view api_version = "admission.k8s.io/v1",
                          std::string_view username = "") {
  std::string out = "{\"apiVersion\":\"" + std::string(api_version) +
                    "\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u-1\",\"kind\":{},"
                    "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"" +
                    std::string(resource) + "\"},\"namespace\":\"default\",\"operation\":\"" +
                    std::string(operation) + "\"";
  if (!object.empty())
    out += ",\"object\":" + std::string(object);
  if (!old_object.empty())
    out += ",\"oldObject\":" + std::string(old_object);
  if (!username.empty())
    out += ",\"userInfo\":{\"username\":\"" + std::string(username) + "\",\"groups\":[]}";
  out += "}}";
  return out;
}

// The patch as the API server reads it back; a malformed one fails the test.
inline std::string base64Decode(std::string_view in) {
  return koord::kube::decodeBase64(in).value();
}

}  // namespace koord::manager::webhook::testing
