#include "plugins/upstream/helper/default_selector.h"

#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/framework_handle.h"
#include "koord/core/string_map.h"

namespace koord::roles::scheduler::upstream::helper {

namespace {

enum Kind : std::size_t { kService, kReplicationController, kReplicaSet, kStatefulSet, kKinds };

using Entry = std::shared_ptr<const SpreadingSelector>;

bool singleValueEquality(const kube::Requirement& r) {
  switch (r.op()) {
    case kube::SelectorOperator::kEquals:
    case kube::SelectorOperator::kDoubleEquals:
      return true;
    case kube::SelectorOperator::kIn:
      return r.values().size() == 1;
    default:
      return false;
  }
}

// "namespace\0key\0value": no namespace, key or value holds a NUL, so the parts cannot blur.
void labelBucket(std::string& out, std::string_view ns, std::string_view key,
                 std::string_view value) {
  out.assign(ns);
  out.push_back('\0');
  out.append(key);
  out.push_back('\0');
  out.append(value);
}

}  // namespace

struct SpreadSelectorIndex::State {
  struct Where {
    bool keyed = false;
    std::string bucket;  // the label bucket, or the namespace for an unkeyed selector
  };
  struct KindIndex {
    StringMap<std::vector<Entry>> keyed;    // by labelBucket()
    StringMap<std::vector<Entry>> unkeyed;  // by namespace
    StringMap<Where> where;                 // by "namespace/name"
  };

  mutable std::shared_mutex mu;
  std::array<KindIndex, kKinds> kinds;
  std::size_t size = 0;

  void upsert(Kind kind, const Entry& obj) {
    if (!obj)
      return;
    std::unique_lock lock(mu);
    const std::string key = obj->key();
    removeLocked(kind, key);
    if (obj->selector.matchesNothing())
      return;
    KindIndex& k = kinds[kind];
    Where w;
    if (chooseBucket(k, *obj, w.bucket)) {
      w.keyed = true;
      k.keyed[w.bucket].push_back(obj);
    } else {
      w.bucket = obj->namespace_;
      k.unkeyed[w.bucket].push_back(obj);
    }
    k.where.emplace(key, std::move(w));
    ++size;
  }

  // The label bucket for `obj`: that of one of its single-valued equalities (every pod it
  // selects carries that label), the least full, so that a label many selectors share (an app's
  // name across a Deployment's old ReplicaSets, told apart by pod-template-hash) does not
  // gather them in one bucket. False when it has none (several values, Exists, negations).
  static bool chooseBucket(const KindIndex& k, const SpreadingSelector& obj, std::string& out) {
    bool found = false;
    std::size_t best = 0;
    std::string candidate;
    for (const auto& r : obj.selector.requirements()) {
      if (!singleValueEquality(r))
        continue;
      labelBucket(candidate, obj.namespace_, r.key(), r.values().front());
      auto it = k.keyed.find(std::string_view(candidate));
      const std::size_t n = it == k.keyed.end() ? 0 : it->second.size();
      if (!found || n < best) {
        found = true;
        best = n;
        out = candidate;
        if (n == 0)
          break;
      }
    }
    return found;
  }

  void erase(Kind kind, const SpreadingSelector& obj) {
    std::unique_lock lock(mu);
    removeLocked(kind, obj.key());
  }

  void removeLocked(Kind kind, std::string_view key) {
    KindIndex& k = kinds[kind];
    auto at = k.where.find(key);
    if (at == k.where.end())
      return;
    auto& buckets = at->second.keyed ? k.keyed : k.unkeyed;
    if (auto b = buckets.find(at->second.bucket); b != buckets.end()) {
      std::erase_if(b->second, [&](const Entry& e) { return e->key() == key; });
      if (b->second.empty())
        buckets.erase(b);
    }
    k.where.erase(at);
    --size;
  }

  // f(entry) for every indexed object of `kind` in the pod's namespace whose selector matches
  // the pod: each is in exactly one bucket, found through one of the pod's labels or among its
  // namespace's unkeyed ones, so none is visited twice.
  template <typename F>
  void forEachMatching(Kind kind, const PodInfo& pod, std::string& scratch, F&& f) const {
    const KindIndex& k = kinds[kind];
    if (k.where.empty())
      return;
    auto visit = [&](const std::vector<Entry>& entries) {
      for (const Entry& e : entries) {
        if (e->selector.matches(pod.labels))
          f(*e);
      }
    };
    if (!k.keyed.empty()) {
      for (const auto& [key, value] : pod.labels) {
        labelBucket(scratch, pod.namespace_, key, value);
        if (auto b = k.keyed.find(std::string_view(scratch)); b != k.keyed.end())
          visit(b->second);
      }
    }
    if (auto b = k.unkeyed.find(pod.namespace_); b != k.unkeyed.end())
      visit(b->second);
  }
};

SpreadSelectorIndex::Sources SpreadSelectorIndex::sourcesOf(const ClusterView& cluster) {
  return {
      cluster.source<SpreadingSelector>(kServiceSource),
      cluster.source<SpreadingSelector>(kReplicationControllerSource),
      cluster.source<SpreadingSelector>(kReplicaSetSource),
      cluster.source<SpreadingSelector>(kStatefulSetSource),
  };
}

SpreadSelectorIndex::SpreadSelectorIndex(const Sources& sources)
    : state_(std::make_shared<State>()) {
  const std::array<std::pair<Kind, const ObjectSource<SpreadingSelector>*>, kKinds> all = {{
      {kService, sources.services},
      {kReplicationController, sources.replication_controllers},
      {kReplicaSet, sources.replica_sets},
      {kStatefulSet, sources.stateful_sets},
  }};
  for (const auto& [kind, source] : all) {
    if (source == nullptr)
      continue;
    // By value: the handlers live as long as the informer, which may outlive this index.
    std::shared_ptr<State> state = state_;
    const Kind k = kind;
    source->subscribe({
        [state, k](const Entry& obj) { state->upsert(k, obj); },
        [state, k](const SpreadingSelector&, const Entry& obj) { state->upsert(k, obj); },
        [state, k](const SpreadingSelector& obj) { state->erase(k, obj); },
    });
    for (const Entry& obj : source->list())
      state_->upsert(kind, obj);
  }
}

kube::Selector SpreadSelectorIndex::defaultSelector(const PodInfo& pod) const {
  std::shared_lock lock(state_->mu);
  if (state_->size == 0)
    return {};
  std::string scratch;
  // Services' and RCs' selectors all match the pod, so they cannot disagree on a key: merging
  // them is their union (upstream's labels.Merge).
  kube::Labels merged;
  auto merge = [&](const SpreadingSelector& s) {
    for (const auto& r : s.selector.requirements())
      merged.insert_or_assign(r.key(), r.values().front());
  };
  state_->forEachMatching(kService, pod, scratch, merge);
  if (pod.labels.empty())
    return kube::Selector::fromSet(merged);
  state_->forEachMatching(kReplicationController, pod, scratch, merge);
  kube::Selector out = kube::Selector::fromSet(merged);
  auto add = [&](const SpreadingSelector& s) {
    for (const auto& r : s.selector.requirements())
      out.add(r);
  };
  state_->forEachMatching(kReplicaSet, pod, scratch, add);
  state_->forEachMatching(kStatefulSet, pod, scratch, add);
  return out;
}

std::size_t SpreadSelectorIndex::size() const {
  std::shared_lock lock(state_->mu);
  return state_->size;
}

kube::Selector defaultSelector(const PodInfo& pod, const SpreadSelectorIndex* index) {
  return index != nullptr ? index->defaultSelector(pod) : kube::Selector{};
}

}  // namespace koord::roles::scheduler::upstream::helper
