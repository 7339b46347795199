// Field reads for strict decoding of component configuration (KubeSchedulerConfiguration,
// DeschedulerConfiguration): every member must be known, each must have its Go type (int32,
// int64, float32, bool, string, metav1.Duration); errors name the path.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::kube::strict {

/// "<path>: <message>", or the message alone at the document's root.
kube::Error fieldError(std::string_view path, std::string_view message);

/// The first member (in document order) whose name is not in `known`, matched case-sensitively:
/// "<path>: unknown field \"x\"".
kube::Expected<void> rejectUnknownFields(const boost::json::object& o,
                                         std::initializer_list<std::string_view> known,
                                         std::string_view path);

// Each read answers nullopt for an absent or null member (Go leaves the field unset) and an error
// naming "<path>.<name>" for a value of the wrong type or range.

kube::Expected<std::optional<std::int32_t>> int32Field(const boost::json::object& o,
                                                       std::string_view name,
                                                       std::string_view path);
kube::Expected<std::optional<std::int64_t>> int64Field(const boost::json::object& o,
                                                       std::string_view name,
                                                       std::string_view path);
/// Any JSON number (float32 fields: qps).
kube::Expected<std::optional<double>> numberField(const boost::json::object& o,
                                                  std::string_view name, std::string_view path);
kube::Expected<std::optional<bool>> boolField(const boost::json::object& o, std::string_view name,
                                              std::string_view path);
kube::Expected<std::optional<std::string>> stringField(const boost::json::object& o,
                                                       std::string_view name,
                                                       std::string_view path);
/// metav1.Duration: a string in Go's time.ParseDuration syntax ("15s", "1m30s").
kube::Expected<std::optional<std::chrono::nanoseconds>> durationField(const boost::json::object& o,
                                                                      std::string_view name,
                                                                      std::string_view path);
/// The array member; nullptr when absent or null.
kube::Expected<const boost::json::array*> arrayField(const boost::json::object& o,
                                                     std::string_view name, std::string_view path);
/// The object member; nullptr when absent or null.
kube::Expected<const boost::json::object*> objectField(const boost::json::object& o,
                                                       std::string_view name,
                                                       std::string_view path);
/// `v` itself as an object (list items); an error naming `path` otherwise.
kube::Expected<const boost::json::object*> asObject(const boost::json::value& v,
                                                    std::string_view path);

}  // namespace koord::kube::strict
