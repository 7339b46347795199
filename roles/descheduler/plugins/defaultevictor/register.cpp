// DefaultEvictor's registry entry: its args decoder and its factory.
#include "plugins/defaultevictor/register.h"

#include <memory>
#include <string>

#include "plugins/defaultevictor/args.h"
#include "plugins/defaultevictor/default_evictor.h"

namespace koord::roles::descheduler {

void registerDefaultEvictor(PluginRegistry& r) {
  using defaultevictor::DefaultEvictorArgs;
  r.add(std::string(defaultevictor::kDefaultEvictorName),
        makePluginFactory<DefaultEvictorArgs>(
            [](const boost::json::value* args) {
              return defaultevictor::decodeDefaultEvictorArgs(args);
            },
            [](std::shared_ptr<const DefaultEvictorArgs> args, FrameworkHandle& handle) {
              if (!args)
                args = std::make_shared<const DefaultEvictorArgs>();
              return defaultevictor::makeDefaultEvictor(std::move(args), handle);
            },
            "DefaultEvictor: args are not DefaultEvictorArgs"));
}

}  // namespace koord::roles::descheduler
