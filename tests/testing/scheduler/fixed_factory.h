// A registry entry for a plugin object a test made itself: no args, and create() hands out that
// same object every time (so the test keeps a pointer to inspect it).
#pragma once

#include <memory>

#include "framework/plugin_registry.h"

namespace koord::roles::scheduler::testkit {

PluginFactory fixedFactory(std::shared_ptr<Plugin> plugin);

}  // namespace koord::roles::scheduler::testkit
