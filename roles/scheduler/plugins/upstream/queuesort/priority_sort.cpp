#include "plugins/upstream/queuesort/priority_sort.h"

#include "framework/plugin_registry.h"
#include "plugins/upstream/args_decode.h"
#include "plugins/upstream/upstream_plugins.h"

namespace koord::roles::scheduler::upstream {

namespace {

std::int32_t priorityOf(const QueuedPodInfo& q) {
  return q.pod ? q.pod->priority : 0;
}

}  // namespace

bool PrioritySort::less(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
  const std::int32_t pa = priorityOf(a);
  const std::int32_t pb = priorityOf(b);
  return pa > pb || (pa == pb && a.timestamp < b.timestamp);
}

void registerPrioritySort(PluginRegistry& registry) {
  registry.add(
      std::string(kPrioritySortName),
      PluginFactory{
          .decode_args = [](const boost::json::value* args,
                            std::string_view) { return refuseArgs(args, kPrioritySortName); },
          .create = [](std::shared_ptr<const PluginArgs>,
                       FrameworkHandle&) -> kube::Expected<std::shared_ptr<Plugin>> {
            return std::make_shared<PrioritySort>();
          },
      });
}

}  // namespace koord::roles::scheduler::upstream
