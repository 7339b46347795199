#include "prediction/training_round.h"

namespace koord::roles::koordlet::prediction {

namespace mc = metriccache;

namespace {

std::optional<double> p90(const mc::MetricCache& cache, mc::MetricKind kind, std::string_view key,
                          TimePoint start, TimePoint end) {
  auto a = cache.aggregate(kind, key, start, end);
  if (!a)
    return std::nullopt;
  return a->p90;
}

}  // namespace

TrainingRound collectTrainingRound(const mc::MetricCache& cache, const std::vector<PodMeta>& pods,
                                   TimePoint now, std::chrono::nanoseconds window) {
  const TimePoint start = now - std::chrono::duration_cast<TimePoint::duration>(window);
  TrainingRound round;
  round.pods.reserve(pods.size());
  for (const auto& pod : pods) {
    auto cpu = p90(cache, mc::MetricKind::kPodCPUUsage, pod.uid, start, now);
    if (!cpu)
      continue;
    auto memory = p90(cache, mc::MetricKind::kPodMemoryUsage, pod.uid, start, now);
    if (!memory)
      continue;
    round.pods.push_back(PodUsage{pod.uid, pod.priority, Usage{*cpu, *memory}});
  }
  round.node_cpu = p90(cache, mc::MetricKind::kNodeCPUUsage, "", start, now);
  round.node_memory = p90(cache, mc::MetricKind::kNodeMemoryUsage, "", start, now);
  return round;
}

}  // namespace koord::roles::koordlet::prediction
