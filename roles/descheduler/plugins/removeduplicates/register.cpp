// RemoveDuplicates' registry entry: its args decoder and its factory.
#include "plugins/removeduplicates/register.h"

#include "plugins/pluginkit/add_plugin.h"
#include "plugins/removeduplicates/args.h"
#include "plugins/removeduplicates/duplicates.h"

namespace koord::roles::descheduler {

void registerRemoveDuplicates(PluginRegistry& r) {
  using namespace removeduplicates;
  pluginkit::addPlugin<RemoveDuplicatesArgs>(r, kRemoveDuplicatesName, decodeRemoveDuplicatesArgs,
                                             makeRemoveDuplicates);
}

}  // namespace koord::roles::descheduler
