#include "runtime/profile_runner.h"

#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <map>

#include "koord/core/log.h"

namespace koord::roles::descheduler {

namespace {

const Snapshot kEmptySnapshot;

// Koordinator's metric: descheduler_pods_evicted{result, strategy, namespace, node}.
constexpr std::string_view kEvictedMetric = "descheduler_pods_evicted";

// Clears the pass's snapshot when a point returns, so a plugin holding the handle past it
// reads an empty cluster rather than freed memory.
struct PassScope {
  const Snapshot*& slot;
  PassScope(const Snapshot*& s, const Snapshot& snapshot) : slot(s) { slot = &snapshot; }
  ~PassScope() { slot = nullptr; }
};

}  // namespace

ProfileRunner::ProfileRunner(std::string name, EvictionLimiter& limiter, PodEvictionApi& api,
                             metrics::Registry& metrics)
    : name_(std::move(name)),
      limiter_(limiter),
      api_(api),
      evicted_(metrics.counter(kEvictedMetric,
                               "Number of evicted pods, by the result, by the strategy, by the "
                               "namespace, by the node name. 'error' result means a pod could "
                               "not be evicted",
                               {"result", "strategy", "namespace", "node"})) {}

Expected<std::unique_ptr<ProfileRunner>> ProfileRunner::build(
    const config::Profile& profile, const PluginRegistry& registry, EvictionLimiter& limiter,
    PodEvictionApi& api, metrics::Registry& metrics, ClusterServices* cluster) {
  std::unique_ptr<ProfileRunner> r(new ProfileRunner(profile.name, limiter, api, metrics));
  // Before the plugins are built: a plugin's factory may ask for it.
  r->cluster_ = cluster;
  if (profile.node_selector) {
    auto s = kube::toSelector(*profile.node_selector);
    if (!s)
      return invalidArgument(
          fmt::format("profile {}: nodeSelector: {}", profile.name, s.error().message));
    r->node_selector_ = std::move(*s);
  }
  std::map<std::string, std::shared_ptr<Plugin>, std::less<>> built;
  auto plugin = [&](const std::string& name) -> Expected<Plugin*> {
    if (auto it = built.find(name); it != built.end())
      return it->second.get();
    const PluginFactory* factory = registry.find(name);
    if (factory == nullptr)
      return invalidArgument(
          fmt::format("profile {}: plugin {} is not in this build", profile.name, name));
    auto args_it = profile.args.find(name);
    auto p = factory->create(args_it == profile.args.end() ? nullptr : args_it->second, *r);
    if (!p)
      return invalidArgument(
          fmt::format("profile {}: plugin {}: {}", profile.name, name, p.error().message));
    built[name] = *p;
    r->plugins_.push_back(*p);
    return p->get();
  };
  auto point = [&]<typename T>(config::ExtensionPoint at, std::vector<T*>& out) -> Expected<void> {
    for (const auto& name : profile.at(at)) {
      auto p = plugin(name);
      if (!p)
        return p.error();
      auto* typed = dynamic_cast<T*>(*p);
      if (typed == nullptr)
        return invalidArgument(fmt::format("profile {}: plugin {} does not implement {}",
                                           profile.name, name, config::pointName(at)));
      out.push_back(typed);
    }
    return {};
  };
  if (auto e = point(config::ExtensionPoint::kDeschedule, r->deschedule_); !e)
    return e.error();
  if (auto e = point(config::ExtensionPoint::kBalance, r->balance_); !e)
    return e.error();
  if (auto e = point(config::ExtensionPoint::kFilter, r->filter_); !e)
    return e.error();
  std::vector<EvictPlugin*> evictors;
  if (auto e = point(config::ExtensionPoint::kEvict, evictors); !e)
    return e.error();
  if (evictors.size() > 1)
    return invalidArgument(fmt::format("profile {}: only one evict plugin may be enabled, got {}",
                                       profile.name, evictors.size()));
  if (evictors.empty() && !(r->deschedule_.empty() && r->balance_.empty()))
    return invalidArgument(fmt::format(
        "profile {}: deschedule or balance plugins are enabled but no evict plugin", profile.name));
  r->evict_ = evictors.empty() ? nullptr : evictors.front();
  return r;
}

std::vector<const Node*> ProfileRunner::selectNodes(const std::vector<const Node*>& all) const {
  if (!node_selector_)
    return all;
  std::vector<const Node*> out;
  for (const Node* n : all) {
    if (node_selector_->matches(n->labels))
      out.push_back(n);
  }
  return out;
}

Expected<void> ProfileRunner::runDeschedule(const Snapshot& snapshot,
                                            const std::vector<const Node*>& nodes) {
  PassScope scope(snapshot_, snapshot);
  for (DeschedulePlugin* p : deschedule_) {
    if (auto r = p->deschedule(nodes); !r)
      return invalidArgument(
          fmt::format("profile {}: {}: {}", name_, p->name(), r.error().message));
  }
  return {};
}

Expected<void> ProfileRunner::runBalance(const Snapshot& snapshot,
                                         const std::vector<const Node*>& nodes) {
  PassScope scope(snapshot_, snapshot);
  for (BalancePlugin* p : balance_) {
    if (auto r = p->balance(nodes); !r)
      return invalidArgument(
          fmt::format("profile {}: {}: {}", name_, p->name(), r.error().message));
  }
  return {};
}

const Snapshot& ProfileRunner::snapshot() const {
  return snapshot_ != nullptr ? *snapshot_ : kEmptySnapshot;
}

bool ProfileRunner::filter(const Pod& pod) const {
  for (const FilterPlugin* f : filter_) {
    if (!f->filter(pod))
      return false;
  }
  return true;
}

bool ProfileRunner::preEvictionFilter(const Pod& pod) const {
  for (const FilterPlugin* f : filter_) {
    if (!f->preEvictionFilter(pod))
      return false;
  }
  return true;
}

bool ProfileRunner::evict(const Pod& pod, const EvictOptions& options) {
  if (evict_ == nullptr)
    return false;
  std::string why;
  if (!limiter_.tryReserve(pod.node_name, pod.namespace_, &why)) {
    KOORD_VLOG(2, "descheduler: not evicting {} for {}: {}", pod.key(), options.plugin_name, why);
    return false;
  }
  const bool ok = evict_->evict(pod, options);
  if (!ok)
    limiter_.release(pod.node_name, pod.namespace_);
  evicted_.with({ok ? "success" : "error", options.plugin_name, pod.namespace_, pod.node_name})
      .inc();
  return ok;
}

bool ProfileRunner::nodeLimitReached(std::string_view node) const {
  return limiter_.nodeLimitReached(node);
}

bool ProfileRunner::totalLimitReached() const {
  return limiter_.totalLimitReached();
}

}  // namespace koord::roles::descheduler
