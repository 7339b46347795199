#include "plugins/upstream/imagelocality/register.h"

#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/imagelocality/image_locality.h"

namespace koord::roles::scheduler::upstream {

void registerImageLocality(PluginRegistry& registry) {
  registry.add(std::string(kImageLocalityName),
               makePluginFactory<ImageLocality>(kImageLocalityName));
}

}  // namespace koord::roles::scheduler::upstream
