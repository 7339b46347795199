#include "plugins/deviceshare/device_cache.h"

#include <algorithm>
#include <mutex>
#include <utility>

namespace koord::roles::scheduler::deviceshare {

std::shared_ptr<NodeDeviceEntry> DeviceCache::find(std::string_view node) const {
  std::shared_lock lock(mu_);
  auto it = nodes_.find(node);
  return it == nodes_.end() ? nullptr : it->second;
}

std::shared_ptr<NodeDeviceEntry> DeviceCache::getOrCreate(std::string_view node) {
  if (auto existing = find(node))
    return existing;
  std::unique_lock lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end())
    it = nodes_.emplace(std::string(node), std::make_shared<NodeDeviceEntry>()).first;
  return it->second;
}

std::shared_ptr<NodeDeviceEntry> DeviceCache::remove(std::string_view node) {
  std::unique_lock lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end())
    return nullptr;
  std::shared_ptr<NodeDeviceEntry> entry = std::move(it->second);
  nodes_.erase(it);
  return entry;
}

std::vector<std::string> DeviceCache::nodes() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  out.reserve(nodes_.size());
  for (const auto& [name, entry] : nodes_)
    out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace koord::roles::scheduler::deviceshare
