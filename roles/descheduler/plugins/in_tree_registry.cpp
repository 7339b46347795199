// Every descheduler plugin this build carries, by name. One line per plugin; each plugin folder's
// register.h declares its function (none yet: issue 27 brings Koordinator's).
#include "framework/plugin_registry.h"

namespace koord::roles::descheduler {

const PluginRegistry& inTreeRegistry() {
  static const PluginRegistry registry = [] {
    PluginRegistry r;
    return r;
  }();
  return registry;
}

}  // namespace koord::roles::descheduler
