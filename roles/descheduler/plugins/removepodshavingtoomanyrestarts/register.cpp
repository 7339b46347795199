// RemovePodsHavingTooManyRestarts's registry entry: its args decoder and its factory.
#include "plugins/removepodshavingtoomanyrestarts/register.h"

#include "plugins/pluginkit/add_plugin.h"
#include "plugins/removepodshavingtoomanyrestarts/args.h"
#include "plugins/removepodshavingtoomanyrestarts/too_many_restarts.h"

namespace koord::roles::descheduler {

void registerRemovePodsHavingTooManyRestarts(PluginRegistry& r) {
  using namespace toomanyrestarts;
  pluginkit::addPlugin<RemovePodsHavingTooManyRestartsArgs>(
      r, kTooManyRestartsName, decodeTooManyRestartsArgs,
      pluginkit::makeFiltered<RemovePodsHavingTooManyRestarts,
                              RemovePodsHavingTooManyRestartsArgs>);
}

}  // namespace koord::roles::descheduler
