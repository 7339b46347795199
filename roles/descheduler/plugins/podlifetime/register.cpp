// PodLifeTime's registry entry: its args decoder and its factory.
#include "plugins/podlifetime/register.h"

#include <memory>
#include <string>
#include <utility>

#include "plugins/podlifetime/args.h"
#include "plugins/podlifetime/pod_lifetime.h"

namespace koord::roles::descheduler {

void registerPodLifeTime(PluginRegistry& r) {
  using podlifetime::PodLifeTimeArgs;
  r.add(std::string(podlifetime::kPodLifeTimeName),
        makePluginFactory<PodLifeTimeArgs>(
            [](const boost::json::value* args) { return podlifetime::decodePodLifeTimeArgs(args); },
            [](std::shared_ptr<const PodLifeTimeArgs> args,
               FrameworkHandle& handle) -> Expected<std::shared_ptr<podlifetime::PodLifeTime>> {
              // Null args: what the decoder makes of none (and refuses, where upstream does).
              if (!args) {
                auto defaults = podlifetime::decodePodLifeTimeArgs(nullptr);
                if (!defaults)
                  return defaults.error();
                args = std::make_shared<const PodLifeTimeArgs>(std::move(*defaults));
              }
              auto selection = podfilter::PodFilter::make(args->common);
              if (!selection)
                return selection.error();
              return std::make_shared<podlifetime::PodLifeTime>(std::move(args), handle,
                                                                std::move(*selection));
            },
            "PodLifeTime: args are not PodLifeTimeArgs"));
}

}  // namespace koord::roles::descheduler
