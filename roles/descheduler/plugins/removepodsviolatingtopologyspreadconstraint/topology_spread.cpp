// RemovePodsViolatingTopologySpreadConstraint: constraints gathered per namespace, domains
// counted over the given nodes, pods chosen by balanceDomains, then evicted.
#include "plugins/removepodsviolatingtopologyspreadconstraint/topology_spread.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "framework/node_fit.h"
#include "plugins/removepodsviolatingtopologyspreadconstraint/balance_domains.h"

namespace koord::roles::descheduler::topologyspread {

namespace {

bool sameConstraint(const TopologySpreadConstraint& a, const TopologySpreadConstraint& b) {
  return a.max_skew == b.max_skew && a.topology_key == b.topology_key &&
         a.when_unsatisfiable == b.when_unsatisfiable && a.has_selector == b.has_selector &&
         a.selector == b.selector;
}

const std::string* labelValue(const Node& node, std::string_view key) {
  auto it = node.labels.find(key);
  return it == node.labels.end() ? nullptr : &it->second;
}

struct Chosen {
  const Pod* pod;
  std::string reason;
};

}  // namespace

Expected<void> RemovePodsViolatingTopologySpreadConstraint::balance(
    const std::vector<const Node*>& nodes) {
  const Snapshot& snap = handle_.snapshot();
  std::map<std::string, const Node*, std::less<>> node_by_name;
  for (const Node* n : nodes)
    node_by_name[n->name] = n;

  // Every pod in the domains counts, whatever the args' label selector says: the scheduler
  // counts them all. Pods on their way out do not.
  std::map<std::string, std::vector<const Pod*>, std::less<>> by_namespace;
  for (const Node* n : nodes) {
    for (const auto& p : snap.podsOn(n->name)) {
      if (!podFinished(*p) && !p->deletion_timestamp)
        by_namespace[p->namespace_].push_back(p.get());
    }
  }

  std::vector<Chosen> chosen;
  std::set<const Pod*> seen;
  for (const auto& [ns, pods] : by_namespace) {
    if (!pod_filter_.namespaceMatches(ns))
      continue;
    std::vector<const TopologySpreadConstraint*> constraints;
    for (const Pod* p : pods) {
      for (const auto& c : p->topology_spread) {
        if (!args_->allows(c.when_unsatisfiable))
          continue;
        bool known = false;
        for (const auto* k : constraints)
          known = known || sameConstraint(*k, c);
        if (!known)
          constraints.push_back(&c);
      }
    }
    for (const TopologySpreadConstraint* c : constraints) {
      // Domains come from the nodes, so an empty one counts too.
      std::map<std::string, std::vector<const Pod*>, std::less<>> domain_pods;
      for (const Node* n : nodes) {
        if (const std::string* v = labelValue(*n, c->topology_key))
          domain_pods[*v];
      }
      for (const Pod* p : pods) {
        if (!c->has_selector || !c->selector.matches(p->labels))
          continue;
        const std::string* v = labelValue(*node_by_name.at(p->node_name), c->topology_key);
        if (v != nullptr)
          domain_pods[*v].push_back(p);
      }
      std::vector<Domain> domains;
      for (auto& [value, list] : domain_pods)
        domains.push_back({value, std::move(list)});
      if (domainsBalanced(domains, c->max_skew))
        continue;

      auto evictable = [this](const Pod& p) { return handle_.filter(p); };
      auto fits = [&](const Pod& p, const std::vector<std::string>& values) {
        if (!args_->topology_balance_node_fit)
          return true;
        std::vector<const Node*> targets;
        for (const Node* n : nodes) {
          const std::string* v = labelValue(*n, c->topology_key);
          if (v != nullptr && std::find(values.begin(), values.end(), *v) != values.end())
            targets.push_back(n);
        }
        return podFitsAnyOtherNode(snap, p, targets);
      };
      for (const Pod* p : balanceDomains(std::move(domains), c->max_skew, evictable, fits)) {
        if (seen.insert(p).second)
          chosen.push_back({p, fmt::format("topology domains of {} differ by more than maxSkew {}",
                                           c->topology_key, c->max_skew)});
      }
    }
  }

  for (const Chosen& c : chosen) {
    if (handle_.totalLimitReached())
      break;
    if (handle_.nodeLimitReached(c.pod->node_name) || !pod_filter_.matches(*c.pod))
      continue;
    if (!handle_.filter(*c.pod) || !handle_.preEvictionFilter(*c.pod))
      continue;
    handle_.evict(*c.pod, {std::string(name()), c.reason});
  }
  return {};
}

Expected<std::shared_ptr<Plugin>> makeRemovePodsViolatingTopologySpreadConstraint(
    std::shared_ptr<const RemovePodsViolatingTopologySpreadConstraintArgs> args,
    FrameworkHandle& handle) {
  return pluginkit::makeFiltered<RemovePodsViolatingTopologySpreadConstraint>(std::move(args),
                                                                              handle);
}

}  // namespace koord::roles::descheduler::topologyspread
