// One spread constraint as PodTopologySpread evaluates it (its selector resolved), and the
// helpers Filter and Score share: which constraints a pod gets and which pods a constraint counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "koord/kube/labels.h"
#include "plugins/upstream/helper/default_selector.h"
#include "plugins/upstream/podtopologyspread/args.h"

namespace koord::roles::scheduler::upstream::podtopologyspread {

struct SpreadConstraint {
  std::int32_t max_skew = 1;
  std::string topology_key;
  /// The pod's own labelSelector; for a default constraint, the pod's DefaultSelector.
  kube::Selector selector;

  bool matches(const PodInfo& pod) const { return selector.matches(pod.labels); }
};

using SpreadConstraints = std::vector<SpreadConstraint>;

/// The pod's constraints with `action`; when the pod states none at all, the default ones with
/// `action`, each selecting the pods of helper::DefaultSelector(pod) (the Services, RCs,
/// ReplicaSets and StatefulSets that select the pod), none when that selector is empty (nothing
/// selects the pod, or `selectors` is null). Null when there are none: the caller's fast path.
/// The default selector is computed only when default constraints with `action` exist.
std::shared_ptr<const SpreadConstraints> buildConstraints(
    const PodInfo& pod, const std::vector<DefaultSpreadConstraint>& defaults,
    UnsatisfiableConstraintAction action, const helper::SpreadSelectorIndex* selectors);

/// Whether the node carries every constraint's topology key.
bool nodeHasAllKeys(const kube::Labels& node_labels, const SpreadConstraints& constraints);

/// Writes the node's value for each constraint's key to values[i] ("" where absent, as a Go map
/// read gives) and answers whether every key is there: one label lookup per key, which on a
/// cold node costs as much as a pod.
bool topologyValues(const kube::Labels& node_labels, const SpreadConstraints& constraints,
                    std::string_view* values);

/// Counts the pods of a node for several constraints at once. Walking every pod of the cluster
/// is what PreFilter and PreScore spend their time on, and it is bound by memory, so each pod
/// is read once for all constraints, and constraints with equal selectors share one match.
class PodCounter {
 public:
  PodCounter(const SpreadConstraints& constraints, std::string_view ns);

  /// Adds to *slots[i] the pods on `node` that constraint i selects, for every i whose slot is
  /// not null; pods of other namespaces and terminating pods (#87621) never count.
  template <typename Count>
  void add(const NodeInfo& node, const std::vector<Count*>& slots) {
    const auto& pods = node.pods;
    for (std::size_t k = 0; k < pods.size(); ++k) {
      // Each PodInfo is a heap object of its own, so the walk waits on memory: asking for the
      // pods a few places ahead lets those misses overlap.
      if (k + kPrefetchAhead < pods.size())
        prefetch(*pods[k + kPrefetchAhead]);
      const PodInfo* p = pods[k].get();
      if (p->terminating || p->namespace_ != namespace_)
        continue;
      for (std::size_t i = 0; i < slots.size(); ++i) {
        if (slots[i] == nullptr)
          continue;
        // same_as_[i] < i, so its verdict for this pod is known when its slot is set.
        const std::size_t first = same_as_[i];
        matched_[i] =
            first != i && slots[first] != nullptr ? matched_[first] : constraints_[i].matches(*p);
        if (matched_[i])
          ++*slots[i];
      }
    }
  }

 private:
  static constexpr std::size_t kPrefetchAhead = 4;

  /// The lines add() reads first: the namespace, the labels' root and the flags after them.
  static void prefetch(const PodInfo& p) {
    __builtin_prefetch(&p.namespace_);
    __builtin_prefetch(&p.labels);
    __builtin_prefetch(&p.terminating);
  }

  const SpreadConstraints& constraints_;
  std::string_view namespace_;
  /// The first constraint with the same selector (itself when none before it).
  std::vector<std::size_t> same_as_;
  /// Per constraint, whether the pod being looked at matched (set only where a slot is).
  std::vector<char> matched_;
};

/// The pod's nodeSelector and required node affinity hold on the node (spreading counts only
/// such nodes' domains).
bool podFitsNodeAffinity(const PodInfo& pod, const Node& node);

}  // namespace koord::roles::scheduler::upstream::podtopologyspread
