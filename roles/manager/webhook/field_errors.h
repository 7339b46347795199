// Kubernetes' field.Error wording for the validating webhooks' refusals ("spec.ttl: Invalid
// value: \"-1h\": ..."), so koord's messages read as Koordinator's and the apiserver's do.
#pragma once

#include <boost/json/fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "webhook/admission_review.h"

namespace koord::manager::webhook {

/// "<path>: Required value: <detail>"
std::string required(std::string_view path, std::string_view detail);
/// "<path>: Forbidden: <detail>"
std::string forbidden(std::string_view path, std::string_view detail);
/// "<path>: Invalid value: <value quoted as Go's %q>: <detail>"
std::string invalid(std::string_view path, std::string_view value, std::string_view detail);
/// invalid() for a JSON value: a string quoted, anything else as JSON (Go prints a bool or a
/// number bare: "spec.allocateOnce: Invalid value: false: ...").
std::string invalidValue(std::string_view path, const boost::json::value& value,
                         std::string_view detail);

/// The messages joined as field.ErrorList.ToAggregate().Error() does: duplicates dropped, one
/// message alone, several as "[a, b]".
std::string aggregateMessages(const std::vector<std::string>& messages);

/// A validation's answer as Koordinator's validating webhooks give it: allowed without errors,
/// otherwise admission.Errored(400) with the aggregate, or with the message of an object that
/// could not be read.
AdmissionResponse answerInvalid(const kube::Expected<std::vector<std::string>>& errors);

}  // namespace koord::manager::webhook
