#include "prediction/prod_reclaimable.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koord/kube/quantity.h"

namespace koord::roles::koordlet::prediction {

namespace json = boost::json;

namespace {

std::int64_t truncToInt64(double f) {
  if (std::isnan(f))
    return 0;
  if (f >= 9.2233720368547758e18)
    return std::numeric_limits<std::int64_t>::max();
  if (f <= -9.2233720368547758e18)
    return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(f);
}

std::int64_t satAdd(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out))
    return b > 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  return out;
}

std::int64_t satSub(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_sub_overflow(a, b, &out))
    return b < 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  return out;
}

Reclaimable requestOf(const PodMeta& pod) {
  Reclaimable r;
  if (auto it = pod.pod_requests.find("cpu"); it != pod.pod_requests.end())
    r.cpu_milli = it->second.milliValue();
  if (auto it = pod.pod_requests.find("memory"); it != pod.pod_requests.end())
    r.memory_bytes = it->second.value();
  return r;
}

bool finished(const PodMeta& pod) {
  return pod.terminating || pod.phase == PodPhase::kSucceeded || pod.phase == PodPhase::kFailed;
}

}  // namespace

Expected<ProdReclaimableResult> predictProdReclaimable(const PeakPredictServer& server,
                                                       std::span<const PodMeta* const> pods,
                                                       TimePoint now) {
  const PredictionConfig& cfg = server.config();
  const double ratio = static_cast<double>(100 + cfg.safety_margin_percent) / 100;
  ProdReclaimableResult out;
  Reclaimable request;  // the priority estimate's request sum
  std::unordered_set<std::string_view> seen;
  for (const PodMeta* pod : pods) {
    if (pod == nullptr || !reclaimableForProd(pod->priority))
      continue;
    if (!seen.insert(pod->uid).second) {
      KOORD_VLOG(4, "prediction: pod {} listed twice, counted once", pod->key());
      continue;
    }
    const Reclaimable req = requestOf(*pod);
    const bool cold = pod->creation_time && now - *pod->creation_time <= cfg.cold_start;
    if (cold) {
      ++out.pods_cold;
    } else if (!finished(*pod)) {
      auto predicted = server.prediction(pod->uid);
      if (!predicted) {
        // As Koordinator's min predictor: a pod it cannot predict is left out of both sums.
        ++out.pods_unpredicted;
        KOORD_VLOG(5, "prediction: no model for pod {} yet", pod->key());
        continue;
      }
      ++out.pods_counted;
      std::int64_t cpu = satSub(
          req.cpu_milli, truncToInt64(static_cast<double>(predicted->p95.cpu_milli) * ratio));
      std::int64_t memory = satSub(
          req.memory_bytes, truncToInt64(static_cast<double>(predicted->p98.memory_bytes) * ratio));
      if (cpu > 0)
        out.by_pods.cpu_milli = satAdd(out.by_pods.cpu_milli, cpu);
      if (memory > 0)
        out.by_pods.memory_bytes = satAdd(out.by_pods.memory_bytes, memory);
    }
    if (finished(*pod))
      continue;
    request.cpu_milli = satAdd(request.cpu_milli, req.cpu_milli);
    request.memory_bytes = satAdd(request.memory_bytes, req.memory_bytes);
  }

  const std::string sys_key = nodeItemKey(kSystemItem);
  auto sys = server.prediction(sys_key);
  if (!sys)
    return invalidArgument(fmt::format("no prediction for {} yet", sys_key));
  std::int64_t peak_cpu = sys->p95.cpu_milli;
  std::int64_t peak_memory = sys->p98.memory_bytes;
  for (auto priority : kKnownPriorityClasses) {
    if (!reclaimableForProd(priority))
      continue;
    const std::string key = priorityItemKey(priority);
    auto item = server.prediction(key);
    if (!item)
      return invalidArgument(fmt::format("no prediction for {} yet", key));
    peak_cpu = satAdd(peak_cpu, item->p95.cpu_milli);
    peak_memory = satAdd(peak_memory, item->p98.memory_bytes);
  }
  peak_cpu = truncToInt64(static_cast<double>(peak_cpu) * ratio);
  peak_memory = truncToInt64(static_cast<double>(peak_memory) * ratio);
  out.by_priority.cpu_milli = std::max<std::int64_t>(satSub(request.cpu_milli, peak_cpu), 0);
  out.by_priority.memory_bytes =
      std::max<std::int64_t>(satSub(request.memory_bytes, peak_memory), 0);

  out.reclaimable.cpu_milli = std::min(out.by_pods.cpu_milli, out.by_priority.cpu_milli);
  out.reclaimable.memory_bytes = std::min(out.by_pods.memory_bytes, out.by_priority.memory_bytes);
  return out;
}

json::object prodReclaimableMetricJson(const Expected<ProdReclaimableResult>& result) {
  if (!result)
    return json::object{{"resource", json::object{{"resources", nullptr}}}};
  auto cpu = kube::Quantity::fromMilli(result->reclaimable.cpu_milli);
  auto memory =
      kube::Quantity::fromInt(result->reclaimable.memory_bytes, kube::Quantity::Format::kBinarySI);
  return json::object{
      {"resource", json::object{{"resources", json::object{{"cpu", cpu.toString()},
                                                           {"memory", memory.toString()}}}}}};
}

}  // namespace koord::roles::koordlet::prediction
