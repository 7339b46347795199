// /validate-pod: Koordinator's co-location rules for pods (batch resources only for BE, QoS and
// priority classes that go together, whole CPUs for LSR/LSE, QoS and priority fixed once set).
#pragma once

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <vector>

#include "koord/kube/error.h"
#include "webhook/admission_review.h"

namespace koord::manager::webhook {

struct PodValidatingOptions {
  /// The ColocationProfileSkipValidatingPriority feature gate: koordinator.sh/priority may
  /// change on UPDATE.
  bool skip_validating_priority = false;
};

/// Every rule the pod breaks, each formatted as Kubernetes' field.Error ("labels.koordinator.sh/
/// qosClass: Required value: must specify koordinator QoS BE with koordinator colocation
/// resources"). `old_pod` is given on UPDATE. An error means the pod could not be read.
kube::Expected<std::vector<std::string>> validatePod(const boost::json::object& pod,
                                                     const boost::json::object* old_pod,
                                                     const PodValidatingOptions& options = {});

/// The messages joined as field.ErrorList.ToAggregate().Error() does: duplicates dropped, one
/// message alone, several as "[a, b]".
std::string aggregateMessages(const std::vector<std::string>& messages);

/// The /validate-pod handler: CREATE and UPDATE are checked, a violation is denied with code 400
/// and the aggregate message (Koordinator answers with admission.Errored(400)).
Handler podValidatingHandler(PodValidatingOptions options = {});

}  // namespace koord::manager::webhook
