#include "qosmanager/cgreconcile/memory_qos_plan.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "koord/cgroup/kubepods_path.h"
#include "metricsadvisor/resource_collector.h"

namespace koord::roles::koordlet::qosmanager {

namespace {

using cgroup::Resource;

constexpr std::string_view kMemory = "memory";
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

std::int64_t quantityOr(const kube::ResourceList& list, std::string_view name,
                        std::int64_t absent) {
  auto it = list.find(name);
  return it == list.end() ? absent : it->second.value();
}

std::int64_t saturatingAdd(std::int64_t a, std::int64_t b) {
  return b > 0 && a > kMax - b ? kMax : a + b;
}

// The values one cgroup gets; unset ones are left as they are. The order of fields is the order
// of the writes.
struct Summary {
  std::optional<std::int64_t> min;
  std::optional<std::int64_t> low;
  std::optional<std::int64_t> high;
  std::optional<std::int64_t> wmark_ratio;
  std::optional<std::int64_t> wmark_scale_factor;
  std::optional<std::int64_t> wmark_min_adj;
  std::optional<std::int64_t> priority;
  std::optional<std::int64_t> use_priority_oom;
  std::optional<std::int64_t> oom_group;
};

void emit(std::vector<MemoryCgroupValue>& out, const std::string& dir, const Summary& s) {
  const std::pair<Resource, const std::optional<std::int64_t>*> fields[] = {
      {Resource::kMemoryMin, &s.min},
      {Resource::kMemoryLow, &s.low},
      {Resource::kMemoryHigh, &s.high},
      {Resource::kMemoryWmarkRatio, &s.wmark_ratio},
      {Resource::kMemoryWmarkScaleFactor, &s.wmark_scale_factor},
      {Resource::kMemoryWmarkMinAdj, &s.wmark_min_adj},
      {Resource::kMemoryPriority, &s.priority},
      {Resource::kMemoryUsePriorityOom, &s.use_priority_oom},
      {Resource::kMemoryOomGroup, &s.oom_group},
  };
  for (const auto& [resource, value] : fields) {
    if (*value)
      out.push_back({dir, resource, **value});
  }
}

// The values a pod's and each of its containers' cgroups take whatever their requests.
Summary configured(const MemoryQOS& q) {
  Summary s;
  s.wmark_ratio = q.wmark_ratio;
  s.wmark_scale_factor = q.wmark_scale_permill;
  s.wmark_min_adj = q.wmark_min_adj;
  s.priority = q.priority;
  s.use_priority_oom = q.priority_enable;
  s.oom_group = q.oom_kill_group;
  return s;
}

// A pod labelled BE is sized by its batch-memory; every other pod by its memory.
bool sizedByBatch(const PodMeta& pod) {
  return apis::podQoSClassRaw(pod.labels) == apis::QoSClass::kBE;
}

std::int64_t podMemoryRequest(const PodMeta& pod) {
  if (!sizedByBatch(pod))
    return std::max<std::int64_t>(0, quantityOr(pod.pod_requests, kMemory, 0));
  std::int64_t sum = 0;
  for (const auto& c : pod.containers) {
    // A container without a batch-memory request counts as none.
    sum = saturatingAdd(sum,
                        std::max<std::int64_t>(0, quantityOr(c.requests, apis::kBatchMemory, 0)));
  }
  return sum;
}

void protect(Summary& s, std::int64_t request, const MemoryQOS& q) {
  s.min = percentOfBytes(request, q.min_limit_percent);
  s.low = percentOfBytes(request, q.low_limit_percent);
  if (*s.low > 0 && *s.low < *s.min)
    s.low = s.min;
}

struct TierSums {
  std::optional<std::int64_t> min;
  std::optional<std::int64_t> low;
};

void addTo(std::optional<std::int64_t>& sum, std::int64_t v) {
  sum = saturatingAdd(sum.value_or(0), v);
}

constexpr apis::KubeQoS kTiers[] = {apis::KubeQoS::kGuaranteed, apis::KubeQoS::kBurstable,
                                    apis::KubeQoS::kBestEffort};

void planContainers(const PodMeta& pod, const std::string& pod_dir, const MemoryQOS& q,
                    const MemoryQOSNode& node, MemoryQOSPlan& plan) {
  auto& out = plan.levels[static_cast<std::size_t>(MemoryQOSLevel::kContainer)];
  const bool batch = sizedByBatch(pod);
  for (const auto& c : pod.containers) {
    if (c.id.empty()) {
      if (!c.id_error.empty())
        plan.errors.push_back(
            fmt::format("pod {} container {}: {}", pod.key(), c.name, c.id_error));
      continue;  // not created yet: the next round sees it
    }
    auto dir = cgroup::containerDir(node.driver, pod_dir, c.runtime, c.id);
    if (!dir) {
      plan.errors.push_back(
          fmt::format("pod {} container {}: {}", pod.key(), c.name, dir.error().message));
      continue;
    }
    const std::string_view name = batch ? apis::kBatchMemory : kMemory;
    const std::int64_t request = std::max<std::int64_t>(0, quantityOr(c.requests, name, 0));
    const std::int64_t limit = quantityOr(c.limits, name, -1);
    Summary s = configured(q);
    protect(s, request, q);
    s.high = containerMemoryHigh(request, limit, node.allocatable_memory, q.throttling_percent,
                                 node.page_size);
    if (!s.high) {
      plan.errors.push_back(fmt::format(
          "pod {} container {}: no memory limit and no node allocatable memory; memory.high left",
          pod.key(), c.name));
    } else if (*s.high > 0 && *s.high < *s.min) {
      s.high = s.min;
    }
    emit(out, *dir, s);
  }
}

}  // namespace

std::int64_t percentOfBytes(std::int64_t bytes, std::int64_t percent) {
  // Split so that no product exceeds `bytes` for a percent up to 100: exact, as Go's
  // bytes * percent / 100 is where that does not overflow.
  return bytes / 100 * percent + bytes % 100 * percent / 100;
}

std::optional<std::int64_t> containerMemoryHigh(std::int64_t request, std::int64_t limit,
                                                std::optional<std::int64_t> node_allocatable,
                                                std::int64_t throttling_percent,
                                                std::int64_t page_size) {
  if (throttling_percent == 0)
    return kMemoryUnlimited;
  std::int64_t ceiling = limit;
  if (ceiling <= 0) {
    if (!node_allocatable || *node_allocatable <= 0)
      return std::nullopt;
    ceiling = *node_allocatable;
  }
  const std::int64_t high = request + percentOfBytes(ceiling - request, throttling_percent);
  const std::int64_t page = std::max<std::int64_t>(1, page_size);
  return high / page * page;
}

MemoryQOSPlan planMemoryQOS(const MemoryQOSStrategy& strategy, const std::vector<PodMeta>& pods,
                            const MemoryQOSNode& node) {
  MemoryQOSPlan plan;
  TierSums sums[std::size(kTiers)];
  auto& pod_level = plan.levels[static_cast<std::size_t>(MemoryQOSLevel::kPod)];
  for (const auto& pod : pods) {
    if (pod.phase != PodPhase::kRunning && pod.phase != PodPhase::kPending)
      continue;
    auto cls = memoryQOSClassOf(pod.qos);
    if (!cls)
      continue;  // no QoS class, no configuration (the informer always gives one)
    std::optional<std::string_view> annotation;
    if (auto it = pod.annotations.find(kAnnotationPodMemoryQOS); it != pod.annotations.end())
      annotation = it->second;
    auto q = podMemoryQOS(strategy.of(*cls).qos, *cls, annotation);
    if (!q) {
      plan.errors.push_back(
          fmt::format("pod {}: {}; its cgroups left as they are", pod.key(), q.error().message));
      continue;
    }
    const std::int64_t request = podMemoryRequest(pod);
    // The tiers sum the pods' values before memory.low is raised to memory.min, as Koordinator.
    auto& tier = sums[static_cast<std::size_t>(pod.kube_qos)];
    addTo(tier.min, percentOfBytes(request, q->min_limit_percent));
    addTo(tier.low, percentOfBytes(request, q->low_limit_percent));
    Summary s = configured(*q);
    protect(s, request, *q);
    auto dir = podCgroupDir(node.driver, pod);
    if (!dir) {
      plan.errors.push_back(fmt::format("pod {}: {}", pod.key(), dir.error().message));
      continue;
    }
    emit(pod_level, *dir, s);
    planContainers(pod, *dir, *q, node, plan);
  }
  // Guaranteed's cgroup is kubepods itself, the parent of the other tiers: it protects them all.
  TierSums& guaranteed = sums[static_cast<std::size_t>(apis::KubeQoS::kGuaranteed)];
  TierSums total;
  for (const auto& t : sums) {
    if (t.min)
      addTo(total.min, *t.min);
    if (t.low)
      addTo(total.low, *t.low);
  }
  guaranteed = total;
  auto& qos_level = plan.levels[static_cast<std::size_t>(MemoryQOSLevel::kQoS)];
  for (auto tier : kTiers) {
    const MemoryQOS& q = strategy.of(memoryQOSClassOfTier(tier)).qos;
    Summary s;
    s.min = sums[static_cast<std::size_t>(tier)].min;
    s.low = sums[static_cast<std::size_t>(tier)].low;
    s.priority = q.priority;
    s.use_priority_oom = q.priority_enable;
    s.oom_group = q.oom_kill_group;
    emit(qos_level, cgroup::qosTierDir(node.driver, qosTierOf(tier)), s);
  }
  return plan;
}

}  // namespace koord::roles::koordlet::qosmanager
