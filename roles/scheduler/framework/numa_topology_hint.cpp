#include "numa_topology_hint.h"

namespace koord::roles::scheduler {

namespace {
const StateKey kAffinityStoreKey("koord/NUMATopologyAffinity");
}

NUMAAffinityStore::NUMAAffinityStore(const NUMAAffinityStore& other) : StateData() {
  std::lock_guard lock(other.mu_);
  by_node_ = other.by_node_;
  any_.store(other.any_.load(std::memory_order_acquire), std::memory_order_release);
}

std::unique_ptr<StateData> NUMAAffinityStore::clone() const {
  return std::make_unique<NUMAAffinityStore>(*this);
}

void NUMAAffinityStore::set(std::string_view node, NUMATopologyHint hint) const {
  std::lock_guard lock(mu_);
  by_node_.insert_or_assign(std::string(node), hint);
  any_.store(true, std::memory_order_release);
}

NUMATopologyHint NUMAAffinityStore::get(std::string_view node) const {
  if (!any_.load(std::memory_order_acquire))
    return {};
  std::lock_guard lock(mu_);
  auto it = by_node_.find(node);
  return it == by_node_.end() ? NUMATopologyHint{} : it->second;
}

void initNUMAAffinityStore(CycleState& state) {
  if (state.read<NUMAAffinityStore>(kAffinityStoreKey) == nullptr)
    state.write(kAffinityStoreKey, std::make_unique<NUMAAffinityStore>());
}

const NUMAAffinityStore* numaAffinityStore(const CycleState& state) {
  return state.read<NUMAAffinityStore>(kAffinityStoreKey);
}

}  // namespace koord::roles::scheduler
