// DefaultEvictor's registry entry: its args decoder and its factory.
#include "plugins/defaultevictor/register.h"

#include "plugins/defaultevictor/args.h"
#include "plugins/defaultevictor/default_evictor.h"
#include "plugins/pluginkit/add_plugin.h"

namespace koord::roles::descheduler {

void registerDefaultEvictor(PluginRegistry& r) {
  using namespace defaultevictor;
  pluginkit::addPlugin<DefaultEvictorArgs>(r, kDefaultEvictorName, decodeDefaultEvictorArgs,
                                           makeDefaultEvictor);
}

}  // namespace koord::roles::descheduler
