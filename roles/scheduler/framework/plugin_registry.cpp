#include "plugin_registry.h"

#include <set>

namespace koord::roles::scheduler {

std::vector<const ObjectDeclaration*> PluginRegistry::objects() const {
  std::vector<const ObjectDeclaration*> out;
  std::set<std::string_view> keys;
  for (const auto& [name, factory] : entries()) {
    for (const auto& d : factory.objects) {
      if (keys.insert(d.key).second)
        out.push_back(&d);
    }
  }
  return out;
}

}  // namespace koord::roles::scheduler
