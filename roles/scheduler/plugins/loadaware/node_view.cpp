#include "plugins/loadaware/node_view.h"

#include <algorithm>
#include <atomic>
#include <bit>

namespace koord::roles::scheduler::loadaware {

static_assert(sizeof(NodeView) == 128, "a NodeView is two cache lines");

namespace {

constexpr std::size_t kMaxOwnersPerThread = 8;

struct ThreadTables {
  std::vector<std::pair<std::uint64_t, std::unique_ptr<NodeViewTable>>> tables;  // LRU last
};

thread_local ThreadTables t_tables;

}  // namespace

std::uint64_t NodeViewTable::hash(const Node* key) const {
  // Fibonacci hashing: allocation addresses share their low bits, the product's top bits do not.
  return reinterpret_cast<std::uintptr_t>(key) * 0x9E3779B97F4A7C15ULL;
}

NodeView* NodeViewTable::findHashed(const Node* key) {
  if (slots_.empty())
    return nullptr;
  const std::uint64_t h = hash(key);
  const auto tag = static_cast<std::uint32_t>(h);
  const std::size_t mask = slots_.size() - 1;
  for (auto i = static_cast<std::size_t>(h >> shift_);; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.index_plus_one == 0)
      return nullptr;
    if (s.tag == tag) {
      NodeView& view = views_[s.index_plus_one - 1];
      if (view.key == key) {
        next_ = s.index_plus_one;
        prefetchNext();
        return &view;
      }
    }
  }
}

void NodeViewTable::place(std::uint64_t h, std::size_t index) {
  const std::size_t mask = slots_.size() - 1;
  auto i = static_cast<std::size_t>(h >> shift_);
  while (slots_[i].index_plus_one != 0)
    i = (i + 1) & mask;
  slots_[i] = Slot{static_cast<std::uint32_t>(h), static_cast<std::uint32_t>(index + 1)};
}

NodeView& NodeViewTable::insert(std::shared_ptr<const Node> node, std::size_t n) {
  if (2 * (views_.size() + 1) > slots_.size()) {
    const std::size_t capacity = std::max<std::size_t>(64, 2 * slots_.size());
    slots_.assign(capacity, Slot{});
    shift_ = 64 - std::countr_zero(capacity);
    for (std::size_t i = 0; i < views_.size(); ++i)
      place(hash(views_[i].key), i);
  }
  place(hash(node.get()), views_.size());
  next_ = views_.size() + 1;
  ++inserted_;
  NodeView& view = views_.emplace_back();
  view.key = node.get();
  view.cold = std::make_unique<NodeViewCold>();
  view.cold->node = std::move(node);
  const std::size_t inline_vectors = n > NodeView::kInlineResources ? 0 : NodeView::kInlineVectors;
  view.cold->values.assign((kVectors - inline_vectors) * n, 0);
  return view;
}

void NodeViewTable::clear() {
  slots_.clear();
  shift_ = 63;
  views_.clear();
  next_ = 0;
  inserted_ = 0;
}

void NodeViewTable::reorder(const std::vector<const Node*>& order) {
  std::vector<NodeView> ordered;
  ordered.reserve(std::min(order.size(), views_.size()));
  for (const Node* key : order) {
    if (NodeView* view = find(key))
      ordered.push_back(std::move(*view));
  }
  clear();
  slots_.assign(std::max<std::size_t>(64, std::bit_ceil(2 * ordered.size() + 1)), Slot{});
  shift_ = 64 - std::countr_zero(slots_.size());
  views_ = std::move(ordered);
  for (std::size_t i = 0; i < views_.size(); ++i)
    place(hash(views_[i].key), i);
}

namespace detail {

constinit thread_local std::uint64_t t_last_owner = 0;
constinit thread_local NodeViewTable* t_last_table = nullptr;

}  // namespace detail

std::uint64_t newNodeViewOwner() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

NodeViewTable& detail::threadNodeViewsSlow(std::uint64_t owner) {
  auto& tables = t_tables.tables;
  auto it =
      std::find_if(tables.begin(), tables.end(), [&](const auto& t) { return t.first == owner; });
  if (it != tables.end()) {
    std::rotate(it, it + 1, tables.end());
  } else {
    if (tables.size() >= kMaxOwnersPerThread)
      tables.erase(tables.begin());
    tables.emplace_back(owner, std::make_unique<NodeViewTable>());
  }
  t_last_owner = owner;
  t_last_table = tables.back().second.get();
  return *t_last_table;
}

}  // namespace koord::roles::scheduler::loadaware
