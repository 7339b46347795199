// DefaultEvictorArgs: strict decoding with the community descheduler's (zero) defaults.
#include "plugins/defaultevictor/args.h"

#include <boost/json.hpp>

#include <utility>

#include "koord/kube/strict_fields.h"
#include "plugins/podfilter/pod_filter.h"

namespace koord::roles::descheduler::defaultevictor {

namespace json = boost::json;
namespace strict = kube::strict;

namespace {

Expected<PriorityThreshold> priorityThresholdField(const json::object& o) {
  constexpr std::string_view kPath = "priorityThreshold";
  if (auto ok = strict::rejectUnknownFields(o, {"value", "name"}, kPath); !ok)
    return ok.error();
  PriorityThreshold t;
  auto value = strict::int32Field(o, "value", kPath);
  if (!value)
    return value.error();
  t.value = *value;
  auto name = strict::stringField(o, "name", kPath);
  if (!name)
    return name.error();
  t.name = name->value_or("");
  return t;
}

}  // namespace

Expected<DefaultEvictorArgs> decodeDefaultEvictorArgs(const json::value* args) {
  DefaultEvictorArgs a;
  if (args == nullptr || args->is_null())
    return a;
  auto root = strict::asObject(*args, "args");
  if (!root)
    return root.error();
  const json::object& o = **root;
  const std::string_view path;
  if (auto ok = strict::rejectUnknownFields(
          o,
          {"nodeSelector", "evictLocalStoragePods", "evictSystemCriticalPods", "ignorePvcPods",
           "evictFailedBarePods", "labelSelector", "priorityThreshold", "nodeFit"},
          path);
      !ok)
    return ok.error();

  auto node_selector = strict::stringField(o, "nodeSelector", path);
  if (!node_selector)
    return node_selector.error();
  a.node_selector = node_selector->value_or("");
  if (auto s = kube::Selector::parse(a.node_selector); !s)
    return strict::fieldError("nodeSelector", s.error().message);

  for (auto [name, out] :
       {std::pair<std::string_view, bool*>{"evictLocalStoragePods", &a.evict_local_storage_pods},
        {"evictSystemCriticalPods", &a.evict_system_critical_pods},
        {"ignorePvcPods", &a.ignore_pvc_pods},
        {"evictFailedBarePods", &a.evict_failed_bare_pods},
        {"nodeFit", &a.node_fit}}) {
    auto b = strict::boolField(o, name, path);
    if (!b)
      return b.error();
    *out = b->value_or(false);
  }

  // Compiled while the configuration is read, so a bad key is reported next to its field.
  auto selector = podfilter::decodeLabelSelector(o, path);
  if (!selector)
    return selector.error();
  a.label_selector = std::move(*selector);

  auto threshold = strict::objectField(o, "priorityThreshold", path);
  if (!threshold)
    return threshold.error();
  if (*threshold != nullptr) {
    auto t = priorityThresholdField(**threshold);
    if (!t)
      return t.error();
    a.priority_threshold = std::move(*t);
  }
  return a;
}

}  // namespace koord::roles::descheduler::defaultevictor
