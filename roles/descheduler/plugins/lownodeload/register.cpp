// LowNodeLoad's registry entry: its args decoder and its factory.
#include "plugins/lownodeload/register.h"

#include <memory>
#include <string>

#include "plugins/lownodeload/args.h"
#include "plugins/lownodeload/low_node_load.h"

namespace koord::roles::descheduler {

void registerLowNodeLoad(PluginRegistry& r) {
  using lownodeload::LowNodeLoadArgs;
  r.add(std::string(lownodeload::kLowNodeLoadName),
        makePluginFactory<LowNodeLoadArgs>(
            [](const boost::json::value* args) { return lownodeload::decodeLowNodeLoadArgs(args); },
            [](std::shared_ptr<const LowNodeLoadArgs> args,
               FrameworkHandle& handle) -> Expected<std::shared_ptr<Plugin>> {
              if (!args) {
                auto defaults = lownodeload::decodeLowNodeLoadArgs(nullptr);
                if (!defaults)
                  return defaults.error();
                args = std::make_shared<const LowNodeLoadArgs>(std::move(*defaults));
              }
              auto p = lownodeload::LowNodeLoad::make(std::move(args), handle);
              if (!p)
                return p.error();
              return std::shared_ptr<Plugin>(std::move(*p));
            },
            "LowNodeLoad: args are not LowNodeLoadArgs"));
}

}  // namespace koord::roles::descheduler
