// RemoveFailedPods's registry entry: its args decoder and its factory.
#include "plugins/removefailedpods/register.h"

#include <memory>
#include <string>
#include <utility>

#include "plugins/removefailedpods/args.h"
#include "plugins/removefailedpods/failed_pods.h"

namespace koord::roles::descheduler {

void registerRemoveFailedPods(PluginRegistry& r) {
  using failedpods::RemoveFailedPodsArgs;
  r.add(std::string(failedpods::kRemoveFailedPodsName),
        makePluginFactory<RemoveFailedPodsArgs>(
            [](const boost::json::value* args) {
              return failedpods::decodeRemoveFailedPodsArgs(args);
            },
            [](std::shared_ptr<const RemoveFailedPodsArgs> args,
               FrameworkHandle& handle) -> Expected<std::shared_ptr<failedpods::RemoveFailedPods>> {
              // Null args: what the decoder makes of none (and refuses, where upstream does).
              if (!args) {
                auto defaults = failedpods::decodeRemoveFailedPodsArgs(nullptr);
                if (!defaults)
                  return defaults.error();
                args = std::make_shared<const RemoveFailedPodsArgs>(std::move(*defaults));
              }
              auto selection = podfilter::PodFilter::make(args->common);
              if (!selection)
                return selection.error();
              return std::make_shared<failedpods::RemoveFailedPods>(std::move(args), handle,
                                                                    std::move(*selection));
            },
            "RemoveFailedPods: args are not RemoveFailedPodsArgs"));
}

}  // namespace koord::roles::descheduler
