// DefaultEvictorArgs: strict decoding with the community descheduler's (zero) defaults.
#include "plugins/defaultevictor/args.h"

#include <boost/json.hpp>

#include <utility>

#include "koord/kube/strict_fields.h"
#include "plugins/pluginkit/args_reader.h"
#include "plugins/pluginkit/object_member.h"

namespace koord::roles::descheduler::defaultevictor {

namespace json = boost::json;
namespace strict = kube::strict;

namespace {

Expected<std::optional<PriorityThreshold>> priorityThresholdField(const json::object& root) {
  return pluginkit::objectMember<PriorityThreshold>(
      root, "priorityThreshold", "",
      [](const json::object& o, const std::string& path) -> Expected<PriorityThreshold> {
        if (auto ok = strict::rejectUnknownFields(o, {"value", "name"}, path); !ok)
          return ok.error();
        PriorityThreshold t;
        auto value = strict::int32Field(o, "value", path);
        if (!value)
          return value.error();
        t.value = *value;
        auto name = strict::stringField(o, "name", path);
        if (!name)
          return name.error();
        t.name = name->value_or("");
        return t;
      });
}

}  // namespace

Expected<DefaultEvictorArgs> decodeDefaultEvictorArgs(const json::value* args) {
  DefaultEvictorArgs a;
  pluginkit::ArgsReader r(
      args, {"nodeSelector", "evictLocalStoragePods", "evictSystemCriticalPods", "ignorePvcPods",
             "evictFailedBarePods", "labelSelector", "priorityThreshold", "nodeFit"});
  r.string("nodeSelector", a.node_selector).then([&]() -> Expected<void> {
    if (auto s = kube::Selector::parse(a.node_selector); !s)
      return strict::fieldError("nodeSelector", s.error().message);
    return {};
  });
  r.boolean("evictLocalStoragePods", a.evict_local_storage_pods)
      .boolean("evictSystemCriticalPods", a.evict_system_critical_pods)
      .boolean("ignorePvcPods", a.ignore_pvc_pods)
      .boolean("evictFailedBarePods", a.evict_failed_bare_pods)
      .boolean("nodeFit", a.node_fit);
  // Compiled while the configuration is read, so a bad key is reported next to its field.
  r.labelSelector(a.label_selector).decoded(a.priority_threshold, priorityThresholdField);
  return r.finish(std::move(a));
}

}  // namespace koord::roles::descheduler::defaultevictor
