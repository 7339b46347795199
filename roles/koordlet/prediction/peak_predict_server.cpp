#include "prediction/peak_predict_server.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "koord/core/log.h"

namespace koord::roles::koordlet::prediction {

namespace {

// Go's int64(f) for percentiles: truncation, NaN as 0, saturating out of range.
std::int64_t truncToInt64(double f) {
  if (std::isnan(f))
    return 0;
  if (f >= 9.2233720368547758e18)
    return std::numeric_limits<std::int64_t>::max();
  if (f <= -9.2233720368547758e18)
    return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(f);
}

}  // namespace

std::string nodeItemKey(std::string_view item) {
  return fmt::format("__node-{}__", item);
}

std::string priorityItemKey(apis::PriorityClass priority) {
  return nodeItemKey(apis::priorityClassName(priority));
}

PeakPredictServer::PeakPredictServer(PredictionConfig config)
    : config_(std::move(config)), store_(config_.checkpoint_dir) {
  if (config_.cpu_half_life <= std::chrono::nanoseconds::zero() ||
      config_.memory_half_life <= std::chrono::nanoseconds::zero())
    throw std::invalid_argument("prediction: histogram half-lives must be positive");
}

PeakPredictServer::Model PeakPredictServer::newModel() const {
  return Model{DecayingHistogram(cpuBuckets(), config_.cpu_half_life),
               DecayingHistogram(memoryBuckets(), config_.memory_half_life)};
}

void PeakPredictServer::updateLocked(const std::string& key, double cpu, double memory,
                                     TimePoint now) {
  auto it = models_.find(key);
  if (it == models_.end())
    it = models_.emplace(key, newModel()).first;
  it->second.last_updated = now;
  it->second.cpu.addSample(cpu, 1, now);
  it->second.memory.addSample(memory, 1, now);
}

void PeakPredictServer::train(const TrainingRound& round, TimePoint now) {
  std::unordered_map<apis::PriorityClass, Usage> by_priority;
  Usage all_pods;
  bool any_pod = false;
  std::lock_guard lock(mu_);
  for (const auto& pod : round.pods) {
    updateLocked(pod.uid, pod.usage.cpu, pod.usage.memory, now);
    auto& sum = by_priority[pod.priority];
    sum.cpu += pod.usage.cpu;
    sum.memory += pod.usage.memory;
    all_pods.cpu += pod.usage.cpu;
    all_pods.memory += pod.usage.memory;
    any_pod = true;
  }
  if (round.node_cpu && round.node_memory)
    updateLocked(std::string(kNodeModelKey), *round.node_cpu, *round.node_memory, now);
  for (auto priority : kKnownPriorityClasses) {
    auto it = by_priority.find(priority);
    Usage u = it == by_priority.end() ? Usage{} : it->second;
    updateLocked(priorityItemKey(priority), u.cpu, u.memory, now);
  }
  double sys_cpu = round.node_cpu.value_or(0);
  double sys_memory = round.node_memory.value_or(0);
  if (any_pod) {
    sys_cpu = std::max(sys_cpu - all_pods.cpu, 0.0);
    sys_memory = std::max(sys_memory - all_pods.memory, 0.0);
  }
  updateLocked(nodeItemKey(kSystemItem), sys_cpu, sys_memory, now);
  synced_ = true;
}

std::optional<Prediction> PeakPredictServer::prediction(std::string_view key) const {
  std::lock_guard lock(mu_);
  auto it = models_.find(key);
  if (it == models_.end())
    return std::nullopt;
  const Model& m = it->second;
  auto at = [&](double p) {
    return ResourcePeak{truncToInt64(m.cpu.percentile(p) * 1000.0),
                        truncToInt64(m.memory.percentile(p))};
  };
  return Prediction{at(0.6), at(0.9), at(0.95), at(0.98), at(1.0)};
}

bool PeakPredictServer::hasSynced() const {
  std::lock_guard lock(mu_);
  return synced_;
}

std::size_t PeakPredictServer::modelCount() const {
  std::lock_guard lock(mu_);
  return models_.size();
}

std::vector<std::string> PeakPredictServer::modelKeys() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  out.reserve(models_.size());
  for (const auto& [key, model] : models_)
    out.push_back(key);
  return out;
}

std::vector<std::string> PeakPredictServer::collectGarbage(TimePoint now) {
  std::vector<std::string> removed;
  {
    std::lock_guard lock(mu_);
    if (!synced_)
      return removed;
    for (auto it = models_.begin(); it != models_.end();) {
      if (now - it->second.last_updated > config_.model_expiration) {
        removed.push_back(it->first);
        it = models_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& key : removed) {
    KOORD_VLOG(4, "prediction: model {} expired", key);
    if (auto r = store_.remove(key); !r)
      KOORD_LOG_WARNING("prediction: checkpoint of expired model {} not removed: {}", key,
                        r.error().message);
  }
  return removed;
}

CheckpointReport PeakPredictServer::checkpoint(TimePoint now) {
  CheckpointReport report;
  std::vector<ModelCheckpoint> due;
  {
    std::lock_guard lock(mu_);
    if (!synced_)
      return report;
    std::vector<std::pair<TimePoint, decltype(models_)::iterator>> order;
    order.reserve(models_.size());
    for (auto it = models_.begin(); it != models_.end(); ++it)
      order.emplace_back(it->second.last_checkpointed, it);
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    const auto max = static_cast<std::size_t>(std::max(config_.checkpoint_max_per_step, 0));
    for (auto& [last, it] : order) {
      if (due.size() >= max || now - last < config_.checkpoint_interval)
        break;
      Model& m = it->second;
      due.push_back(ModelCheckpoint{it->first, m.last_updated, m.cpu.save(), m.memory.save()});
      m.last_checkpointed = now;
    }
  }
  for (const auto& c : due) {
    if (auto r = store_.save(c); !r) {
      if (report.failed++ == 0)
        report.first_error = r.error().message;
    } else {
      ++report.written;
    }
  }
  return report;
}

RestoreReport PeakPredictServer::restore(const std::set<std::string, std::less<>>& known_pods,
                                         bool node_known, TimePoint now) {
  RestoreReport report;
  LoadedCheckpoints loaded = store_.loadAll();
  report.temporaries_removed = loaded.temporaries_removed;
  report.skipped = loaded.skipped;
  report.missing = loaded.missing;
  report.error = std::move(loaded.error);
  report.refused = std::move(loaded.refused);
  std::vector<std::string> to_remove = std::move(loaded.refused_keys);

  std::set<std::string, std::less<>> known(known_pods.begin(), known_pods.end());
  if (node_known)
    known.emplace(kNodeModelKey);
  known.insert(nodeItemKey(kSystemItem));
  for (auto priority : kKnownPriorityClasses)
    known.insert(priorityItemKey(priority));

  std::unique_lock lock(mu_);
  for (auto& c : loaded.checkpoints) {
    if (!known.contains(c.key)) {
      ++report.unknown;
      to_remove.push_back(c.key);
      continue;
    }
    auto too_late = [&](const HistogramCheckpoint& h, std::chrono::nanoseconds half_life) {
      return h.reference_time && *h.reference_time - now > half_life;
    };
    if (too_late(c.cpu, config_.cpu_half_life) || too_late(c.memory, config_.memory_half_life)) {
      report.refused.emplace_back(c.key + std::string(kModelCheckpointSuffix),
                                  "reference time after now by more than a half-life");
      to_remove.push_back(c.key);
      continue;
    }
    Model m = newModel();
    // decodeModelCheckpoint ran the same checks on a scratch histogram: these cannot fail.
    auto cpu = m.cpu.load(c.cpu);
    auto memory = m.memory.load(c.memory);
    if (!cpu || !memory) {
      report.refused.emplace_back(c.key + std::string(kModelCheckpointSuffix),
                                  !cpu ? cpu.error().message : memory.error().message);
      to_remove.push_back(c.key);
      continue;
    }
    m.last_updated = std::min(c.last_updated, now);
    models_.insert_or_assign(c.key, std::move(m));
    ++report.restored;
  }
  lock.unlock();
  for (const auto& key : to_remove) {
    if (auto r = store_.remove(key); !r)
      KOORD_LOG_WARNING("prediction: checkpoint {} not removed: {}", key, r.error().message);
  }
  return report;
}

}  // namespace koord::roles::koordlet::prediction
