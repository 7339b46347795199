// RemovePodsHavingTooManyRestarts's registry entry: its args decoder and its factory.
#include "plugins/removepodshavingtoomanyrestarts/register.h"

#include <memory>
#include <string>
#include <utility>

#include "plugins/removepodshavingtoomanyrestarts/args.h"
#include "plugins/removepodshavingtoomanyrestarts/too_many_restarts.h"

namespace koord::roles::descheduler {

void registerRemovePodsHavingTooManyRestarts(PluginRegistry& r) {
  using toomanyrestarts::RemovePodsHavingTooManyRestartsArgs;
  r.add(std::string(toomanyrestarts::kTooManyRestartsName),
        makePluginFactory<RemovePodsHavingTooManyRestartsArgs>(
            [](const boost::json::value* args) {
              return toomanyrestarts::decodeTooManyRestartsArgs(args);
            },
            [](std::shared_ptr<const RemovePodsHavingTooManyRestartsArgs> args,
               FrameworkHandle& handle)
                -> Expected<std::shared_ptr<toomanyrestarts::RemovePodsHavingTooManyRestarts>> {
              // Null args: what the decoder makes of none (and refuses, where upstream does).
              if (!args) {
                auto defaults = toomanyrestarts::decodeTooManyRestartsArgs(nullptr);
                if (!defaults)
                  return defaults.error();
                args = std::make_shared<const RemovePodsHavingTooManyRestartsArgs>(
                    std::move(*defaults));
              }
              auto selection = podfilter::PodFilter::make(args->common);
              if (!selection)
                return selection.error();
              return std::make_shared<toomanyrestarts::RemovePodsHavingTooManyRestarts>(
                  std::move(args), handle, std::move(*selection));
            },
            "RemovePodsHavingTooManyRestarts: args are not "
            "RemovePodsHavingTooManyRestartsArgs"));
}

}  // namespace koord::roles::descheduler
