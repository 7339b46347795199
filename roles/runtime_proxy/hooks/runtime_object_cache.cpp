#include "hooks/runtime_object_cache.h"

namespace koord::roles::runtime_proxy {

namespace {

template <typename Map, typename Value>
void put(Map& map, const std::string& id, Value value) {
  if (map.size() >= RuntimeObjectCache::kMaxEntries && map.find(id) == map.end())
    map.erase(map.begin());
  map[id] = std::move(value);
}

template <typename Map, typename Value>
bool putIfAbsent(Map& map, const std::string& id, Value value) {
  if (map.contains(id))
    return false;
  put(map, id, std::move(value));
  return true;
}

template <typename Map>
auto get(const Map& map, const std::string& id) -> std::optional<typename Map::mapped_type> {
  auto it = map.find(id);
  if (it == map.end())
    return std::nullopt;
  return it->second;
}

}  // namespace

void RuntimeObjectCache::putSandbox(const std::string& id, hookapi::PodSandboxHookRequest r) {
  std::lock_guard lock(mu_);
  put(sandboxes_, id, std::move(r));
}

void RuntimeObjectCache::putContainer(const std::string& id,
                                      hookapi::ContainerResourceHookRequest r) {
  std::lock_guard lock(mu_);
  put(containers_, id, std::move(r));
}

bool RuntimeObjectCache::putSandboxIfAbsent(const std::string& id,
                                            hookapi::PodSandboxHookRequest r) {
  std::lock_guard lock(mu_);
  return putIfAbsent(sandboxes_, id, std::move(r));
}

bool RuntimeObjectCache::putContainerIfAbsent(const std::string& id,
                                              hookapi::ContainerResourceHookRequest r) {
  std::lock_guard lock(mu_);
  return putIfAbsent(containers_, id, std::move(r));
}

std::optional<hookapi::PodSandboxHookRequest> RuntimeObjectCache::sandbox(
    const std::string& id) const {
  std::lock_guard lock(mu_);
  return get(sandboxes_, id);
}

std::optional<hookapi::ContainerResourceHookRequest> RuntimeObjectCache::container(
    const std::string& id) const {
  std::lock_guard lock(mu_);
  return get(containers_, id);
}

void RuntimeObjectCache::eraseSandbox(const std::string& id) {
  std::lock_guard lock(mu_);
  sandboxes_.erase(id);
}

void RuntimeObjectCache::eraseContainer(const std::string& id) {
  std::lock_guard lock(mu_);
  containers_.erase(id);
}

std::size_t RuntimeObjectCache::size() const {
  std::lock_guard lock(mu_);
  return sandboxes_.size() + containers_.size();
}

}  // namespace koord::roles::runtime_proxy
