#include "qosmanager/cpusuppress/cpu_suppress.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "koord/cgroup/cgroup_reader.h"
#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "koord/kube/quantity.h"
#include "metriccache/metric_cache.h"
#include "qosmanager/cpusuppress/cfs_quota_policy.h"
#include "qosmanager/cpusuppress/cpuset_policy.h"
#include "statesinformer/node_reservation.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::qosmanager {

namespace mc = metriccache;
using cgroup::Resource;

namespace {

std::int64_t milliOf(const kube::ResourceList& list, std::string_view name) {
  // Not find() on an empty map: libstdc++ then treats the map's header as a node of
  // Quantity's 16-byte alignment, which UBSan (-O1) reports when the map sits at 8 mod 16.
  if (list.empty())
    return 0;
  auto it = list.find(std::string(name));
  return it == list.end() ? 0 : it->second.milliValue();
}

std::int64_t toMilli(double cores) {
  return static_cast<std::int64_t>(std::llround(cores * 1000));
}

}  // namespace

CPUSuppress::CPUSuppress(const mc::MetricCache& cache, cgroup::ResourceExecutor& cgroups,
                         cgroup::CpuTopology topology, std::chrono::milliseconds collect_interval,
                         metrics::Registry& registry)
    : cache_(cache),
      cgroups_(cgroups),
      be_quota_tree_(cgroups,
                     cgroup::qosTierDir(cgroups.root().driver, cgroup::QoSTier::kBestEffort)),
      topology_(std::move(topology)),
      collect_interval_(collect_interval),
      // Koordinator's name and labels, so existing dashboards keep working.
      suppress_cores_(registry.gauge("koordlet_be_suppress_cpu_cores",
                                     "Number of cores suppress by koordlet", {"node", "type"})) {}

// A write that keeps failing (no kubelet yet, say) is worth one line, not one per second. The
// refusals (the kernel's and the range check's) the executor has logged and counted already.
void CPUSuppress::warnOnce(const kube::Error& error, std::string_view context) {
  std::string message =
      context.empty() ? error.message : fmt::format("{}: {}", context, error.message);
  if (message != last_write_error_ && !cgroup::isRefusedWrite(error))
    KOORD_LOG_WARNING("cpu suppress: {}", message);
  last_write_error_ = std::move(message);
}

// The pods' own quotas are the reconcilers' to get right; a child that cannot follow the tier is
// worth a line at high verbosity (it is often a pod that just went away).
kube::Expected<void> CPUSuppress::applyBEQuota(std::int64_t quota) {
  std::vector<cgroup::QuotaWriteError> child_errors;
  auto r = be_quota_tree_.apply(quota, &child_errors);
  for (const auto& e : child_errors)
    KOORD_VLOG(4, "cpu suppress: {}", e.error.message);
  return r;
}

void CPUSuppress::recoverCFSQuota() {
  if (cfs_quota_recovered_)
    return;
  auto r = applyBEQuota(kCFSQuotaUnlimited);
  if (!r) {
    warnOnce(r.error(), "recover besteffort cfs quota");
    return;
  }
  cfs_quota_recovered_ = true;
}

void CPUSuppress::recoverCPUSet() {
  if (cpuset_recovered_)
    return;
  std::vector<int> all;
  for (const auto& c : topology_.cpus)
    all.push_back(c.cpu_id);
  auto be = cgroup::qosTierDir(cgroups_.root().driver, cgroup::QoSTier::kBestEffort);
  auto old = cgroup::readCpuSet(cgroups_, be);
  if (writeBECPUSet(all, old ? *old : std::vector<int>{}))
    cpuset_recovered_ = true;
}

// Every BE cgroup down to the containers gets the set. v1 requires a child's cpuset to be a
// subset of its parent's, so first the union goes in top-down, then the new set bottom-up.
bool CPUSuppress::writeBECPUSet(const std::vector<int>& cpus, const std::vector<int>& old_cpus) {
  if (cpus.empty())
    return false;
  const auto be = cgroup::qosTierDir(cgroups_.root().driver, cgroup::QoSTier::kBestEffort);
  std::vector<std::string> dirs{be};
  if (auto pods = cgroups_.listChildren(be, Resource::kCpusetCpus)) {
    for (const auto& pod : *pods) {
      dirs.push_back(pod);
      if (auto containers = cgroups_.listChildren(pod, Resource::kCpusetCpus))
        dirs.insert(dirs.end(), containers->begin(), containers->end());
    }
  }
  std::vector<int> merged = cpus;
  merged.insert(merged.end(), old_cpus.begin(), old_cpus.end());
  std::sort(merged.begin(), merged.end());
  merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  const auto loose = cgroup::formatCpuList(merged);
  const auto tight = cgroup::formatCpuList(cpus);
  bool ok = true;
  for (const auto& d : dirs) {
    auto r = cgroups_.write(d, Resource::kCpusetCpus, loose);
    if (!r)
      KOORD_VLOG(4, "cpu suppress: {}", r.error().message);  // a pod that just went away
  }
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
    auto r = cgroups_.write(*it, Resource::kCpusetCpus, tight);
    if (!r) {
      if (*it == be) {
        ok = false;
        warnOnce(r.error());
      } else {
        KOORD_VLOG(4, "cpu suppress: {}", r.error().message);
      }
    }
  }
  return ok;
}

CPUSuppressRound CPUSuppress::runOnce(const StatesSnapshot& states,
                                      std::chrono::system_clock::time_point now) {
  CPUSuppressRound round;
  auto skip = [&](std::string why) {
    round.skipped_because = std::move(why);
    if (round.skipped_because != last_error_)
      KOORD_VLOG(3, "cpu suppress: skipped: {}", round.skipped_because);
    last_error_ = round.skipped_because;
    return round;
  };
  const auto& slo = states.node_slo;
  CPUSuppressStrategy strategy;
  if (slo && slo->resource_used_threshold_with_be) {
    auto decoded = decodeCPUSuppressStrategy(*slo->resource_used_threshold_with_be);
    if (!decoded)
      return skip("NodeSLO resourceUsedThresholdWithBE: " + decoded.error().message);
    strategy = *decoded;
  }
  if (!slo || !strategy.enable) {
    // Disabled (or no NodeSLO yet): BE pods get the whole node back.
    recoverCFSQuota();
    recoverCPUSet();
    return skip(slo ? "disabled by the NodeSLO" : "no NodeSLO for this node yet");
  }
  const auto& node = states.node;
  const auto& pods = states.pods;
  if (node == nullptr || pods == nullptr || !states.synced)
    return skip("node or pods not synced yet");
  // The latest samples only: suppression reacts within a collect interval or two.
  const auto max_age = collect_interval_ * 2 + std::chrono::milliseconds(500);
  auto node_used = cache_.lastWithin(mc::MetricKind::kNodeCPUUsage, "", max_age, now);
  if (!node_used)
    return skip("no recent node CPU usage");

  SuppressInput in;
  in.node_capacity_milli = milliOf(node->capacity, "cpu");
  in.node_used_milli = toMilli(node_used->value);
  auto parsed_reservation = nodeReservation(*node);
  std::string reservation_error;
  if (!parsed_reservation)
    reservation_error = parsed_reservation.error().message;
  if (reservation_error != last_reservation_error_ && !reservation_error.empty())
    KOORD_LOG_WARNING("cpu suppress: node {}: annotation {} ignored: {}", node->name,
                      apis::kAnnotationNodeReservation, reservation_error);
  last_reservation_error_ = reservation_error;
  const NodeReservation reservation =
      parsed_reservation ? std::move(*parsed_reservation) : NodeReservation{};
  in.node_reserved_milli = nodeReservedCPUMilli(*node, reservation);
  in.threshold_percent = strategy.threshold_percent;
  in.min_percent = strategy.min_percent;
  for (const auto& p : *pods) {
    auto used = cache_.lastWithin(mc::MetricKind::kPodCPUUsage, p.uid, max_age, now);
    if (!used)
      continue;
    PodCPUUsage u;
    u.used_milli = toMilli(used->value);
    u.koord_qos = apis::podQoSClassRaw(p.labels);
    u.kube_qos = p.kube_qos;
    in.pods.push_back(u);
  }
  // Host apps without a recent sample are left out, as pods are: their usage, if any, then
  // falls to the system's share, which the formula subtracts all the same.
  for (const auto& app : slo->host_applications.apps) {
    auto used = cache_.lastWithin(mc::MetricKind::kHostAppCPUUsage, app.name, max_age, now);
    if (!used)
      continue;
    in.host_apps.push_back({toMilli(used->value), app.qos, app.under_kube_besteffort});
  }
  round.calculation = calculateBESuppressCPU(in);
  round.policy = strategy.policy;
  round.ran = true;
  last_error_.clear();

  const auto be = cgroup::qosTierDir(cgroups_.root().driver, cgroup::QoSTier::kBestEffort);
  if (strategy.policy == CPUSuppressPolicy::kCFSQuota) {
    auto current = cgroup::readInt64(cgroups_, be, Resource::kCpuCfsQuota);
    const std::int64_t quota = current ? *current : kCFSQuotaUnlimited;
    round.be_cfs_quota = quota;
    if (auto next =
            nextBECFSQuota(quota, round.calculation.suppress_milli, in.node_capacity_milli)) {
      // The period is ours to set too: the quota means nothing against another period, so
      // without it the quota is not written either.
      auto r = cgroups_.write(be, Resource::kCpuCfsPeriod, std::to_string(kBECFSPeriodMicros));
      kube::Expected<void> applied;
      if (r)
        applied = applyBEQuota(*next);
      if (!r) {
        warnOnce(r.error());
      } else if (!applied) {
        warnOnce(applied.error());
      } else {
        round.be_cfs_quota = *next;
        KOORD_VLOG(3, "cpu suppress: besteffort cfs quota {} (suppress {}m)", *next,
                   round.calculation.suppress_milli);
      }
    }
    cfs_quota_recovered_ = false;
    suppress_cores_.with({node->name, "cfsQuota"})
        .set(static_cast<double>(round.be_cfs_quota) / static_cast<double>(kBECFSPeriodMicros));
    recoverCPUSet();
    return round;
  }

  auto current_cpus = cgroup::readCpuSet(cgroups_, be);
  const std::vector<int> old_cpus = current_cpus ? *current_cpus : std::vector<int>{};
  CPUSetSuppressInput cin;
  cin.suppress_milli = round.calculation.suppress_milli;
  cin.current_be_cpus = old_cpus;
  cin.excluded_cpus = reservation.reserved_cpus;
  auto cpus = nextBECPUSet(topology_, cin);
  if (!cpus.empty() && writeBECPUSet(cpus, old_cpus)) {
    round.be_cpus = cpus;
    cpuset_recovered_ = false;
    suppress_cores_.with({node->name, "cpuset"}).set(static_cast<double>(cpus.size()));
  }
  recoverCFSQuota();
  return round;
}

}  // namespace koord::roles::koordlet::qosmanager
