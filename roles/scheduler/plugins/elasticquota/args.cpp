#include "plugins/elasticquota/args.h"

#include <boost/json.hpp>

#include <limits>

#include <fmt/format.h>

#include "koord/core/duration.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::elasticquota {

namespace {

namespace json = boost::json;
namespace jf = kube::jsonfields;

constexpr std::int64_t kHugeQuota = std::numeric_limits<std::int64_t>::max() / 5;

kube::Expected<void> readDuration(const json::object& a, std::string_view name,
                                  std::chrono::nanoseconds& out) {
  const json::value* v = jf::field(a, name);
  if (v == nullptr)
    return {};
  if (!v->is_string())
    return jf::typeError(name, "duration string", *v);
  auto d = parseGoDuration(v->get_string());
  if (!d) {
    return kube::makeKubeError(
        fmt::format("{}: invalid duration \"{}\"", name, std::string_view(v->get_string())));
  }
  if (d->count() < 0) {
    return kube::makeKubeError(
        fmt::format("{}: Invalid value: \"{}\": must not be negative", name, formatGoDuration(*d)));
  }
  out = *d;
  return {};
}

kube::Expected<void> readMax(const json::object& a, std::string_view name,
                             kube::ResourceList& out) {
  const json::value* v = jf::field(a, name);
  if (v == nullptr)
    return {};
  auto list = kube::decodeResourceList(*v, name);
  if (!list)
    return list.error();
  for (const auto& [resource, q] : *list) {
    if (q.sign() < 0) {
      return kube::makeKubeError(fmt::format("{}[{}]: Invalid value: \"{}\": must not be negative",
                                             name, resource, q.toString()));
    }
  }
  // As Koordinator, an empty list keeps the default.
  if (!list->empty())
    out = std::move(*list);
  return {};
}

kube::Expected<void> readBool(const json::object& a, std::string_view name, bool& out) {
  auto b = jf::optionalBoolField(a, name, "");
  if (!b)
    return b.error();
  if (*b)
    out = **b;
  return {};
}

}  // namespace

kube::ResourceList defaultQuotaGroupMaxDefault() {
  return {{"cpu", kube::Quantity::fromInt(kHugeQuota)},
          {"memory", kube::Quantity::fromInt(kHugeQuota)}};
}

kube::ResourceList systemQuotaGroupMaxDefault() {
  return {{"cpu", kube::Quantity::fromInt(kHugeQuota)},
          {"memory", kube::Quantity::fromInt(kHugeQuota, kube::Quantity::Format::kBinarySI)}};
}

kube::Expected<ElasticQuotaArgs> decodeElasticQuotaArgs(const json::value* args,
                                                        std::string_view /*api_version*/) {
  ElasticQuotaArgs out;
  auto o = upstream::argsObject(args);
  if (!o)
    return o.error();
  if (*o == nullptr)
    return out;
  const json::object& a = **o;
  if (auto known = upstream::checkKnownFields(
          a,
          {"apiVersion", "kind", "delayEvictTime", "revokePodInterval", "defaultQuotaGroupMax",
           "systemQuotaGroupMax", "quotaGroupNamespace", "monitorAllQuotas",
           "enableCheckParentQuota", "enableRuntimeQuota"},
          "");
      !known)
    return known.error();
  auto ns = jf::stringField(a, "quotaGroupNamespace", "");
  if (!ns)
    return ns.error();
  if (!ns->empty())
    out.quota_group_namespace = std::move(*ns);
  for (auto r : {readDuration(a, "delayEvictTime", out.delay_evict_time),
                 readDuration(a, "revokePodInterval", out.revoke_pod_interval),
                 readMax(a, "defaultQuotaGroupMax", out.default_quota_group_max),
                 readMax(a, "systemQuotaGroupMax", out.system_quota_group_max),
                 readBool(a, "monitorAllQuotas", out.monitor_all_quotas),
                 readBool(a, "enableCheckParentQuota", out.enable_check_parent_quota),
                 readBool(a, "enableRuntimeQuota", out.enable_runtime_quota)}) {
    if (!r)
      return r.error();
  }
  return out;
}

}  // namespace koord::roles::scheduler::elasticquota
