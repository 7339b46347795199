#include "controller/quota_profile.h"

#include <boost/json.hpp>

#include <cstdint>

#include "koord/apis/elastic_quota.h"

namespace koord::roles::manager {

namespace json = boost::json;

namespace {

kube::ResourceList addAll(kube::ResourceList sum, const kube::ResourceList& more) {
  for (const auto& [name, q] : more) {
    auto it = sum.find(name);
    if (it == sum.end())
      sum.emplace(name, q);
    else
      it->second = it->second + q;
  }
  return sum;
}

// A product that leaves int64 is clamped, as Go's float-to-int conversion is not defined there.
std::int64_t scaled(std::int64_t value, double ratio) {
  const double product = static_cast<double>(value) * ratio;
  if (product >= 9.2e18)
    return INT64_MAX;
  if (product <= -9.2e18)
    return INT64_MIN;
  return static_cast<std::int64_t>(product);
}

void applyRatio(const apis::ElasticQuotaProfile& profile, kube::ResourceList& list) {
  // Without spec.resourceRatio the quantities stay exactly as summed.
  if (!profile.resource_ratio)
    return;
  const double ratio = profile.resourceRatio();
  for (auto& [name, q] : list) {
    if (name == "cpu")
      q = kube::Quantity::fromMilli(scaled(q.milliValue(), ratio),
                                    kube::Quantity::Format::kDecimalSI);
    else if (name == "memory")
      q = kube::Quantity::fromInt(scaled(q.value(), ratio), kube::Quantity::Format::kBinarySI);
    else
      q = kube::Quantity::fromInt(scaled(q.value(), ratio), kube::Quantity::Format::kDecimalSI);
  }
}

json::object resourceObject(const kube::ResourceList& list) {
  json::object out;
  for (const auto& [name, q] : list)
    out[name] = q.toString();
  return out;
}

// A copy of parent.<key> when it is an object, else an empty one.
json::object objectAt(const json::object& parent, std::string_view key) {
  const json::value* v = parent.if_contains(key);
  return v != nullptr && v->is_object() ? v->as_object() : json::object{};
}

}  // namespace

ProfileTotals profileTotals(const apis::ElasticQuotaProfile& profile,
                            const std::vector<ProfileNode>& nodes) {
  ProfileTotals out;
  for (const auto& node : nodes) {
    if (!profile.node_selector_compiled.matches(node.labels))
      continue;
    out.total = addAll(std::move(out.total), node.allocatable);
    if (node.unschedulable || !node.ready)
      out.unschedulable = addAll(std::move(out.unschedulable), node.allocatable);
  }
  applyRatio(profile, out.total);
  applyRatio(profile, out.unschedulable);
  return out;
}

std::string profileTreeId(std::string_view namespace_, std::string_view name) {
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  mix(namespace_);
  mix("/");
  mix(name);
  return std::to_string(h);
}

json::object desiredProfileQuota(const json::object& quota,
                                 const apis::ElasticQuotaProfile& profile,
                                 const ProfileTotals& totals, const std::string& tree_id) {
  // Built from copies and put back whole: no reference into an object is held across an
  // insert that may move its values.
  json::object out = quota;
  json::object meta = objectAt(out, "metadata");
  if (!meta.contains("name")) {
    meta["namespace"] = profile.namespace_;
    meta["name"] = profile.quota_name;
  }
  kube::ResourceList min;
  kube::ResourceList max;
  for (const auto& key : profile.resource_keys) {
    auto it = totals.total.find(key);
    min.insert_or_assign(key, it == totals.total.end() ? kube::Quantity::fromInt(0) : it->second);
    max.insert_or_assign(key, kube::Quantity::fromInt(kProfileQuotaMax));
  }
  json::object spec = objectAt(out, "spec");
  spec["min"] = resourceObject(min);
  spec["max"] = resourceObject(max);

  json::object labels = objectAt(meta, "labels");
  labels[apis::kLabelQuotaProfile] = profile.name;
  for (const auto& [k, v] : profile.quota_labels)
    labels[k] = v;
  labels[apis::kLabelQuotaTreeID] = tree_id;
  labels[apis::kLabelQuotaIsRoot] = "true";

  json::object annotations = objectAt(meta, "annotations");
  annotations[apis::kAnnotationTotalResource] = apis::quotaResourceAnnotationValue(totals.total);
  annotations[apis::kAnnotationUnschedulableResource] =
      apis::quotaResourceAnnotationValue(totals.unschedulable);

  meta["labels"] = std::move(labels);
  meta["annotations"] = std::move(annotations);
  out["metadata"] = std::move(meta);
  out["spec"] = std::move(spec);
  return out;
}

}  // namespace koord::roles::manager
