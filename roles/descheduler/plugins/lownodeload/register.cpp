// LowNodeLoad's registry entry: its args decoder and its factory.
#include "plugins/lownodeload/register.h"

#include "plugins/lownodeload/args.h"
#include "plugins/lownodeload/low_node_load.h"
#include "plugins/pluginkit/add_plugin.h"

namespace koord::roles::descheduler {

void registerLowNodeLoad(PluginRegistry& r) {
  using namespace lownodeload;
  pluginkit::addPlugin<LowNodeLoadArgs>(r, kLowNodeLoadName, decodeLowNodeLoadArgs,
                                        LowNodeLoad::make);
}

}  // namespace koord::roles::descheduler
