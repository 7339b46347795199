#include "webhook/elastic_quota_mutating.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "webhook/json_patch.h"

namespace koord::manager::webhook {

namespace json = boost::json;

namespace {

// A copy of <parent>.<key>: empty when absent or null; an error when it is another type.
kube::Expected<json::object> objectAt(const json::object& parent, std::string_view key,
                                      std::string_view path) {
  const json::value* v = parent.if_contains(key);
  if (v == nullptr || v->is_null())
    return json::object{};
  if (!v->is_object())
    return kube::makeKubeError(fmt::format("{}: not an object", path));
  return v->as_object();
}

std::string stringAt(const json::object& map, std::string_view key) {
  const json::value* v = map.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

kube::Expected<json::object> defaultElasticQuota(const json::object& quota,
                                                 const QuotaTopology& topology) {
  // Decoding first refuses what the API server should never have sent (wrong types, bad
  // quantities, oversized lists) before anything is written.
  auto decoded = apis::decodeElasticQuota(json::value(quota));
  if (!decoded)
    return kube::makeKubeError(fmt::format("object: {}", decoded.error().message));
  if (decoded->name == apis::kRootQuotaName)
    return quota;

  // Edited as copies and put back whole: no reference into an object is held across an
  // insert that may move its values.
  auto meta = objectAt(quota, "metadata", "metadata");
  if (!meta)
    return meta.error();
  auto labels = objectAt(*meta, "labels", "metadata.labels");
  if (!labels)
    return labels.error();
  auto annotations = objectAt(*meta, "annotations", "metadata.annotations");
  if (!annotations)
    return annotations.error();

  std::string parent = stringAt(*labels, apis::kLabelQuotaParent);
  if (parent.empty()) {
    parent = std::string(apis::kRootQuotaName);
    (*labels)[apis::kLabelQuotaParent] = parent;
  }
  if (stringAt(*labels, apis::kLabelQuotaTreeID).empty() && parent != apis::kRootQuotaName) {
    auto tree_id = topology.parentTreeId(parent);
    if (!tree_id)
      return kube::makeKubeError(
          fmt::format("quota {}: parent quota {} does not exist", decoded->name, parent));
    if (!tree_id->empty())
      (*labels)[apis::kLabelQuotaTreeID] = *tree_id;
  }
  if (stringAt(*annotations, apis::kAnnotationSharedWeight).empty()) {
    const json::value* spec = quota.if_contains("spec");
    const json::value* max =
        spec != nullptr && spec->is_object() ? spec->as_object().if_contains("max") : nullptr;
    (*annotations)[apis::kAnnotationSharedWeight] =
        max == nullptr || max->is_null() ? std::string("null")
                                         : apis::quotaResourceAnnotationValue(decoded->max);
  }
  (*meta)["labels"] = std::move(*labels);
  (*meta)["annotations"] = std::move(*annotations);
  json::object out = quota;
  out["metadata"] = std::move(*meta);
  return out;
}

Handler elasticQuotaMutatingHandler(std::shared_ptr<const QuotaTopology> topology) {
  Handler h;
  h.resource = std::string(apis::kElasticQuotaResource);
  h.kind = std::string(apis::kElasticQuotaKind);
  h.admit = [topology](const AdmissionRequest& request) {
    if (request.operation != Operation::kCreate)
      return AdmissionResponse::allow();
    auto mutated = defaultElasticQuota(request.object, *topology);
    if (!mutated)
      return AdmissionResponse::errored(400, mutated.error().message);
    auto patch = createJsonPatch(json::value(request.object), json::value(*mutated));
    if (patch.empty())
      return AdmissionResponse::allow();
    return AdmissionResponse::allowWithPatch(std::move(patch));
  };
  return h;
}

}  // namespace koord::manager::webhook
