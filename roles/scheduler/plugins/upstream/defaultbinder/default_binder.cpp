#include "plugins/upstream/defaultbinder/default_binder.h"

#include <utility>

#include "framework/framework_handle.h"
#include "framework/plugin_registry.h"
#include "plugins/upstream/args_decode.h"
#include "plugins/upstream/upstream_plugins.h"

namespace koord::roles::scheduler::upstream {

void DefaultBinder::bind(std::shared_ptr<CycleState> /*state*/, std::shared_ptr<const PodInfo> pod,
                         const std::string& node, StatusCallback done) {
  handle_.cluster().bindPod(std::move(pod), node,
                            [done = std::move(done)](kube::Expected<void> result) {
                              if (result)
                                done(Status::success());
                              else
                                done(Status::error(result.error().message));
                            });
}

void registerDefaultBinder(PluginRegistry& registry) {
  registry.add(
      std::string(kDefaultBinderName),
      PluginFactory{
          .decode_args = [](const boost::json::value* args,
                            std::string_view) { return refuseArgs(args, kDefaultBinderName); },
          .create = [](std::shared_ptr<const PluginArgs>,
                       FrameworkHandle& handle) -> kube::Expected<std::shared_ptr<Plugin>> {
            return std::make_shared<DefaultBinder>(handle);
          },
      });
}

}  // namespace koord::roles::scheduler::upstream
