#include "framework/eviction_limiter.h"

#include <fmt/format.h>

namespace koord::roles::descheduler {

namespace {

std::uint32_t countOf(const std::map<std::string, std::uint32_t, std::less<>>& m,
                      std::string_view key) {
  auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

void decrement(std::map<std::string, std::uint32_t, std::less<>>& m, std::string_view key) {
  auto it = m.find(key);
  if (it != m.end() && it->second > 0 && --it->second == 0)
    m.erase(it);
}

}  // namespace

EvictionLimiter::EvictionLimiter(std::optional<std::uint32_t> per_node,
                                 std::optional<std::uint32_t> per_namespace,
                                 std::optional<std::uint32_t> total)
    : per_node_(per_node), per_namespace_(per_namespace), total_cap_(total) {}

bool EvictionLimiter::tryReserve(std::string_view node, std::string_view ns, std::string* why) {
  std::lock_guard lock(mu_);
  auto refuse = [&](std::string reason) {
    if (why != nullptr)
      *why = std::move(reason);
    return false;
  };
  if (!node.empty() && per_node_ && countOf(by_node_, node) >= *per_node_)
    return refuse(fmt::format("maximum number of evicted pods per node ({}) reached", *per_node_));
  if (per_namespace_ && countOf(by_namespace_, ns) >= *per_namespace_)
    return refuse(
        fmt::format("maximum number of evicted pods per namespace ({}) reached", *per_namespace_));
  if (total_cap_ && total_ >= *total_cap_)
    return refuse(fmt::format("maximum number of evicted pods in total ({}) reached", *total_cap_));
  if (!node.empty())
    ++by_node_[std::string(node)];
  ++by_namespace_[std::string(ns)];
  ++total_;
  return true;
}

void EvictionLimiter::release(std::string_view node, std::string_view ns) {
  std::lock_guard lock(mu_);
  if (!node.empty())
    decrement(by_node_, node);
  decrement(by_namespace_, ns);
  if (total_ > 0)
    --total_;
}

void EvictionLimiter::reset() {
  std::lock_guard lock(mu_);
  total_ = 0;
  by_node_.clear();
  by_namespace_.clear();
}

bool EvictionLimiter::nodeLimitReached(std::string_view node) const {
  std::lock_guard lock(mu_);
  return per_node_ && countOf(by_node_, node) >= *per_node_;
}

bool EvictionLimiter::namespaceLimitReached(std::string_view ns) const {
  std::lock_guard lock(mu_);
  return per_namespace_ && countOf(by_namespace_, ns) >= *per_namespace_;
}

bool EvictionLimiter::totalLimitReached() const {
  std::lock_guard lock(mu_);
  return total_cap_ && total_ >= *total_cap_;
}

std::uint32_t EvictionLimiter::total() const {
  std::lock_guard lock(mu_);
  return total_;
}

std::uint32_t EvictionLimiter::onNode(std::string_view node) const {
  std::lock_guard lock(mu_);
  return countOf(by_node_, node);
}

}  // namespace koord::roles::descheduler
