// /validate-pod: Koordinator's co-location rules for pods (batch resources only for BE, QoS and
// priority classes that go together, whole CPUs for LSR/LSE, QoS and priority fixed once set).
#pragma once

#include <boost/json/object.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "webhook/admission_review.h"
#include "webhook/quota_topology.h"

namespace koord::manager::webhook {

struct PodValidatingOptions {
  /// The ColocationProfileSkipValidatingPriority feature gate: koordinator.sh/priority may
  /// change on UPDATE.
  bool skip_validating_priority = false;
  /// Who may set or change the scheduler-owned annotations (apis::kSchedulerOwnedPodAnnotations):
  /// koord-scheduler's service account. Empty: nobody.
  std::vector<std::string> scheduler_usernames;
  /// The ElasticQuota tree for Koordinator's quota check of pods; null skips it.
  std::shared_ptr<const QuotaTopology> quota_topology;
};

/// Koordinator's quota check of a pod, run once the co-location rules pass: on UPDATE the
/// quota.scheduling.koordinator.sh/preemptible label may not change; on CREATE and UPDATE the
/// pod may not be charged to a parent quota (QuotaTopology::validatePod). `request_namespace`
/// stands in for an empty metadata.namespace. An error says why the pod is refused, or that it
/// could not be read.
kube::Expected<void> validatePodQuota(const boost::json::object& pod,
                                      const boost::json::object* old_pod,
                                      std::string_view request_namespace,
                                      const QuotaTopology& topology);

/// Every rule the pod breaks, each formatted as Kubernetes' field.Error ("labels.koordinator.sh/
/// qosClass: Required value: must specify koordinator QoS BE with koordinator colocation
/// resources"). `old_pod` is given on UPDATE. An error means the pod could not be read.
kube::Expected<std::vector<std::string>> validatePod(const boost::json::object& pod,
                                                     const boost::json::object* old_pod,
                                                     const PodValidatingOptions& options = {});

/// The scheduler-owned annotations a CREATE brings, or an UPDATE adds, changes or removes, when
/// `username` is not one of options.scheduler_usernames: one field.Error each. Koordinator lets
/// any user set them, and the koordlet trusts them (a resource-status cpuset is pinned).
kube::Expected<std::vector<std::string>> forbiddenSchedulerAnnotations(
    const boost::json::object& pod, const boost::json::object* old_pod, std::string_view username,
    const PodValidatingOptions& options);

/// The /validate-pod handler: CREATE and UPDATE are checked. A scheduler-owned annotation set by
/// anyone else is denied with 403 Forbidden; a co-location rule broken with code 400 and the
/// aggregate message (Koordinator answers with admission.Errored(400)); then the quota check,
/// when options.quota_topology is set, its refusal also with code 400.
Handler podValidatingHandler(PodValidatingOptions options = {});

}  // namespace koord::manager::webhook
