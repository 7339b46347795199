#include "webhook/elastic_quota_validating.h"

#include <boost/json.hpp>

#include <fmt/format.h>

namespace koord::manager::webhook {

namespace {

kube::Expected<apis::ElasticQuota> decode(const boost::json::object& object, const char* which) {
  auto quota = apis::decodeElasticQuota(boost::json::value(object));
  if (!quota)
    return kube::makeKubeError(fmt::format("{}: {}", which, quota.error().message));
  return quota;
}

AdmissionResponse answer(const kube::Expected<void>& verdict) {
  if (!verdict)
    return AdmissionResponse::errored(400, verdict.error().message);
  return AdmissionResponse::allow();
}

}  // namespace

Handler elasticQuotaValidatingHandler(std::shared_ptr<QuotaTopology> topology) {
  Handler h;
  h.resource = std::string(apis::kElasticQuotaResource);
  h.kind = std::string(apis::kElasticQuotaKind);
  h.admit = [topology](const AdmissionRequest& request) {
    const bool commit = !request.dry_run;
    switch (request.operation) {
      case Operation::kCreate: {
        auto quota = decode(request.object, "object");
        if (!quota)
          return AdmissionResponse::errored(400, quota.error().message);
        return answer(topology->validateAdd(*quota, commit));
      }
      case Operation::kUpdate: {
        auto quota = decode(request.object, "object");
        if (!quota)
          return AdmissionResponse::errored(400, quota.error().message);
        auto old = decode(*request.old_object, "oldObject");
        if (!old)
          return AdmissionResponse::errored(400, old.error().message);
        return answer(topology->validateUpdate(*old, *quota, commit));
      }
      case Operation::kDelete: {
        apis::ElasticQuota quota;
        if (request.old_object) {
          auto old = decode(*request.old_object, "oldObject");
          if (!old)
            return AdmissionResponse::errored(400, old.error().message);
          quota = std::move(*old);
        } else {
          quota.namespace_ = request.namespace_name;
          quota.name = request.name;
        }
        return answer(topology->validateDelete(quota, commit));
      }
      case Operation::kConnect:
        break;
    }
    return AdmissionResponse::allow();
  };
  return h;
}

}  // namespace koord::manager::webhook
