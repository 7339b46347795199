// /mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota: the defaults Koordinator's quota webhook
// gives a new ElasticQuota (parent, tree id, shared weight).
#pragma once

#include <boost/json/object.hpp>

#include <memory>

#include "koord/kube/error.h"
#include "webhook/admission_review.h"
#include "webhook/quota_topology.h"

namespace koord::manager::webhook {

inline constexpr std::string_view kElasticQuotaMutatingPath =
    "/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota";

/// `quota` with Koordinator's defaults, except for the root quota: an empty or absent parent
/// label becomes the root quota; an empty tree-id label under a parent other than the root takes
/// the parent's tree id (an error when that parent is not in `topology`); an empty or absent
/// shared-weight annotation becomes spec.max as JSON ("null" when spec.max is absent, as Go
/// writes a nil list).
kube::Expected<boost::json::object> defaultElasticQuota(const boost::json::object& quota,
                                                        const QuotaTopology& topology);

/// CREATE of elasticquotas only (Koordinator defaults nothing on UPDATE): the defaults as a JSON
/// patch; a quota that cannot be read, or whose parent is unknown, is answered with code 400.
Handler elasticQuotaMutatingHandler(std::shared_ptr<const QuotaTopology> topology);

}  // namespace koord::manager::webhook
