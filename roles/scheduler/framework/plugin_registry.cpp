#include "plugin_registry.h"

#include <stdexcept>
#include <utility>

namespace koord::roles::scheduler {

void PluginRegistry::add(std::string name, PluginFactory factory) {
  if (factories_.contains(name))
    throw std::logic_error("plugin registered twice: " + name);
  factories_.emplace(std::move(name), std::move(factory));
}

const PluginFactory* PluginRegistry::find(std::string_view name) const {
  const auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

std::vector<std::string> PluginRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(factories_.size());
  for (const auto& [name, factory] : factories_)
    out.push_back(name);
  return out;
}

}  // namespace koord::roles::scheduler
