#include "node_tree.h"

#include <algorithm>

namespace koord::roles::scheduler {

namespace {

std::string labelWithFallback(const Node& node, std::string_view key, std::string_view legacy) {
  if (auto it = node.labels.find(key); it != node.labels.end())
    return it->second;
  if (auto it = node.labels.find(legacy); it != node.labels.end())
    return it->second;
  return {};
}

}  // namespace

std::string zoneKey(const Node& node) {
  const std::string region = labelWithFallback(node, "topology.kubernetes.io/region",
                                               "failure-domain.beta.kubernetes.io/region");
  const std::string zone = labelWithFallback(node, "topology.kubernetes.io/zone",
                                             "failure-domain.beta.kubernetes.io/zone");
  if (region.empty() && zone.empty())
    return {};
  // The NUL keeps "a:" + "b" apart from "a" + ":b", as upstream's key does.
  std::string key = region;
  key += ":";
  key.push_back('\0');
  key += ":";
  key += zone;
  return key;
}

bool NodeTree::add(const std::string& name, const std::string& zone) {
  if (auto it = zone_of_.find(name); it != zone_of_.end()) {
    if (it->second == zone)
      return false;
    remove(name);
  }
  auto [it, fresh] = tree_.try_emplace(zone);
  if (fresh)
    zones_.push_back(zone);
  it->second.push_back(name);
  zone_of_.emplace(name, zone);
  list_stale_ = true;
  return true;
}

bool NodeTree::remove(const std::string& name) {
  auto where = zone_of_.find(name);
  if (where == zone_of_.end())
    return false;
  auto zone = tree_.find(where->second);
  std::erase(zone->second, name);
  if (zone->second.empty()) {
    std::erase(zones_, where->second);
    tree_.erase(zone);
  }
  zone_of_.erase(where);
  list_stale_ = true;
  return true;
}

const std::vector<std::string>& NodeTree::list() const {
  if (!list_stale_)
    return list_;
  list_.clear();
  list_.reserve(zone_of_.size());
  for (std::size_t round = 0; list_.size() < zone_of_.size(); ++round) {
    for (const auto& zone : zones_) {
      const auto& names = tree_.at(zone);
      if (round < names.size())
        list_.push_back(names[round]);
    }
  }
  list_stale_ = false;
  return list_;
}

}  // namespace koord::roles::scheduler
