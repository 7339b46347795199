#include "descheduler.h"

#include <fmt/format.h>

#include "koord/app/role_app.h"
#include "koord/core/log.h"

namespace koord::roles::descheduler {

Descheduler::Descheduler(const config::DeschedulerConfig& config, const PluginRegistry& registry,
                         SnapshotSource snapshots, PodEvictionApi& api, metrics::Registry& metrics,
                         ClusterServices* cluster)
    : interval_(config.descheduling_interval),
      snapshots_(std::move(snapshots)),
      limiter_(config.max_pods_to_evict_per_node, config.max_pods_to_evict_per_namespace,
               config.max_pods_to_evict_total) {
  for (const auto& p : config.profiles) {
    auto runner = ProfileRunner::build(p, registry, limiter_, api, metrics, cluster);
    if (!runner)
      throw app::ConfigError("--config: " + runner.error().message);
    profiles_.push_back(std::move(*runner));
  }
}

Descheduler::~Descheduler() {
  stop();
}

Expected<void> Descheduler::runOnce(TimePoint now) {
  const Snapshot snapshot = snapshots_(now);
  std::vector<const Node*> nodes;
  nodes.reserve(snapshot.nodes.size());
  for (const auto& n : snapshot.nodes)
    nodes.push_back(n.get());
  if (nodes.size() <= 1)
    return invalidArgument(
        "the cluster size is 0 or 1 meaning eviction causes service disruption or degradation");
  limiter_.reset();
  for (auto& p : profiles_) {
    if (auto r = p->runDeschedule(snapshot, p->selectNodes(nodes)); !r)
      return r.error();
  }
  for (auto& p : profiles_) {
    if (auto r = p->runBalance(snapshot, p->selectNodes(nodes)); !r)
      return r.error();
  }
  return {};
}

void Descheduler::start() {
  thread_ = std::thread([this] {
    for (;;) {
      const auto started = std::chrono::steady_clock::now();
      if (auto r = runOnce(std::chrono::system_clock::now()); !r)
        KOORD_LOG_ERROR("descheduler: error descheduling pods: {}", r.error().message);
      ++passes_;
      std::unique_lock lock(mu_);
      if (interval_.count() == 0) {
        KOORD_LOG_INFO("descheduler: deschedulingInterval is 0: one pass done, no more");
        return;
      }
      // As wait.NonSlidingUntil: the interval counts from the start of the pass.
      if (cv_.wait_until(lock, started + interval_, [this] { return stopping_; }))
        return;
    }
  });
}

void Descheduler::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id())
    thread_.join();
}

}  // namespace koord::roles::descheduler
