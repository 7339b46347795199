// /validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota: Koordinator's quota tree rules for
// ElasticQuota creates, updates and deletes, judged against the manager's QuotaTopology.
#pragma once

#include <memory>

#include "webhook/admission_review.h"
#include "webhook/quota_topology.h"

namespace koord::manager::webhook {

inline constexpr std::string_view kElasticQuotaValidatingPath =
    "/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota";

/// CREATE, UPDATE and DELETE of elasticquotas are judged by `topology`; an allowed change that is
/// not a dry run is applied to it at once. A refusal, or a quota that cannot be read, is answered
/// with code 400 and the reason (Koordinator answers admission.Errored(400)). DELETE without an
/// oldObject is judged by the request's name.
Handler elasticQuotaValidatingHandler(std::shared_ptr<QuotaTopology> topology);

}  // namespace koord::manager::webhook
