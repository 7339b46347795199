// decodeElasticQuota (the ElasticQuota JSON -> ElasticQuota projection, with Koordinator's
// reading of its labels and annotations), the strict annotation readers, and the status patch.
#include "koord/apis/elastic_quota.h"

#include <boost/json.hpp>

#include <utility>

#include <fmt/format.h>

#include "crd_object.h"
#include "koord/apis/input_limits.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "object_fields.h"

namespace koord::apis {

namespace json = boost::json;
using namespace koord::kube::jsonfields;
using kube::Expected;
using kube::makeKubeError;

namespace {

// A namespace's name is a DNS label.
constexpr std::size_t kMaxNamespaceBytes = 63;

Expected<void> resourceList(const json::object& o, std::string_view name, std::string_view path,
                            kube::ResourceList& out) {
  auto list = detail::boundedResourceList(o, name, path, kMaxElasticQuotaResourceNames);
  if (!list)
    return list.error();
  out = std::move(*list).value_or(kube::ResourceList());
  return {};
}

Expected<void> decodeSpec(const json::object& spec, ElasticQuota& out) {
  if (auto ok = resourceList(spec, "min", "spec", out.min); !ok)
    return ok.error();
  return resourceList(spec, "max", "spec", out.max);
}

Expected<void> decodeStatus(const json::object& status, ElasticQuota& out) {
  return resourceList(status, "used", "status", out.used);
}

bool labelIs(const kube::Labels& labels, std::string_view key, std::string_view value) {
  auto it = labels.find(key);
  return it != labels.end() && it->second == value;
}

std::string labelOf(const kube::Labels& labels, std::string_view key) {
  auto it = labels.find(key);
  return it == labels.end() ? std::string() : it->second;
}

bool allZero(const kube::ResourceList& list) {
  for (const auto& [name, quantity] : list) {
    if (!quantity.isZero())
      return false;
  }
  return true;
}

// Koordinator's getters over the decoded labels, annotations and max.
void readKoordinatorMeta(ElasticQuota& q) {
  q.parent_name = labelOf(q.labels, kLabelQuotaParent);
  if (q.parent_name.empty() && q.name != kRootQuotaName)
    q.parent_name = std::string(kRootQuotaName);
  q.is_parent = labelIs(q.labels, kLabelQuotaIsParent, "true");
  q.allow_lent_resource = !labelIs(q.labels, kLabelAllowLentResource, "false");
  q.is_root = labelIs(q.labels, kLabelQuotaIsRoot, "true");
  q.allow_force_update = labelIs(q.labels, kLabelAllowForceUpdate, "true");
  q.tree_id = labelOf(q.labels, kLabelQuotaTreeID);

  q.shared_weight = q.max;
  if (auto weight = quotaResourceAnnotation(q.annotations, kAnnotationSharedWeight);
      weight && !allZero(*weight)) {
    q.shared_weight = std::move(*weight);
  }
  if (auto namespaces = quotaNamespaces(q.annotations))
    q.namespaces = std::move(*namespaces);
}

}  // namespace

Expected<ElasticQuota> decodeElasticQuota(const json::value& v) {
  auto quota = detail::decodeCrd<ElasticQuota>(v, "ElasticQuota", decodeSpec, decodeStatus);
  if (!quota)
    return quota.error();
  readKoordinatorMeta(*quota);
  return quota;
}

Expected<kube::ResourceList> quotaResourceAnnotation(const kube::Labels& annotations,
                                                     std::string_view key) {
  auto it = annotations.find(key);
  if (it == annotations.end() || it->second.empty())
    return kube::ResourceList();
  auto parsed = detail::parseAnnotationJson(annotations, key, kMaxAnnotationValueBytes);
  if (!parsed)
    return parsed.error();
  if ((*parsed)->syntax_error)
    return makeKubeError(fmt::format("{}: not JSON", key));
  const json::value& value = (*parsed)->value;
  if (value.is_null())
    return kube::ResourceList();
  if (!value.is_object())
    return typeError(key, "object", value);
  if (value.get_object().size() > kMaxElasticQuotaResourceNames) {
    return makeKubeError(fmt::format("{}: {} resources, more than the {} allowed", key,
                                     value.get_object().size(), kMaxElasticQuotaResourceNames));
  }
  return kube::decodeResourceList(value, key);
}

Expected<std::vector<std::string>> quotaNamespaces(const kube::Labels& annotations) {
  auto it = annotations.find(kAnnotationQuotaNamespaces);
  if (it == annotations.end() || it->second.empty())
    return std::vector<std::string>();
  auto parsed = detail::parseAnnotationJson(annotations, kAnnotationQuotaNamespaces,
                                            kMaxAnnotationValueBytes);
  if (!parsed)
    return parsed.error();
  if ((*parsed)->syntax_error)
    return makeKubeError(fmt::format("{}: not JSON", kAnnotationQuotaNamespaces));
  auto items = detail::goStringSlice((*parsed)->value, kAnnotationQuotaNamespaces,
                                     kMaxElasticQuotaNamespaces, kMaxNamespaceBytes);
  if (!items)
    return items.error();
  if (!items->assigned || items->type_error) {
    return makeKubeError(
        fmt::format("{}: not a JSON array of namespaces", kAnnotationQuotaNamespaces));
  }
  return std::move(items->items);
}

std::string quotaResourceAnnotationValue(const kube::ResourceList& list) {
  return json::serialize(detail::resourceListJson(list));
}

std::string_view podQuotaName(const kube::Labels& pod_labels) {
  auto it = pod_labels.find(kLabelQuotaName);
  return it == pod_labels.end() ? std::string_view() : std::string_view(it->second);
}

bool isPodNonPreemptible(const kube::Labels& pod_labels) {
  return labelIs(pod_labels, kLabelPreemptible, "false");
}

json::value elasticQuotaStatusPatch(const ElasticQuota& current,
                                    const ElasticQuotaStatusUpdate& update,
                                    std::string_view resource_version) {
  json::object annotations;
  for (const auto& [key, list] :
       {std::pair<std::string_view, const std::optional<kube::ResourceList>*>{kAnnotationRuntime,
                                                                              &update.runtime},
        {kAnnotationRequest, &update.request},
        {kAnnotationChildRequest, &update.child_request},
        {kAnnotationGuaranteed, &update.guaranteed},
        {kAnnotationAllocated, &update.allocated},
        {kAnnotationNonPreemptibleRequest, &update.non_preemptible_request},
        {kAnnotationNonPreemptibleUsed, &update.non_preemptible_used}}) {
    if (list->has_value())
      annotations[key] = quotaResourceAnnotationValue(**list);
  }
  json::object patch;
  json::object meta;
  if (!annotations.empty())
    meta["annotations"] = std::move(annotations);
  if (!resource_version.empty())
    meta["resourceVersion"] = resource_version;
  if (!meta.empty())
    patch["metadata"] = std::move(meta);
  if (update.used) {
    json::object used = detail::resourceListJson(*update.used);
    // A merge patch merges maps: a resource no longer used must be removed by name.
    for (const auto& [name, quantity] : current.used) {
      if (!update.used->contains(name))
        used[name] = nullptr;
    }
    patch["status"] = json::object{{"used", std::move(used)}};
  }
  return patch;
}

}  // namespace koord::apis
