#include "noderesource_reconciler.h"

#include <boost/json.hpp>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "koord/kube/rest_client.h"
#include "manager_informers.h"
#include "noderesource/batch_resource.h"
#include "noderesource/need_sync.h"
#include "noderesource/node_status_patch.h"
#include "sloconfig/slo_config_source.h"

namespace koord::roles::manager {

NodeResourceReconciler::NodeResourceReconciler(kube::RestClient& client,
                                               ManagerInformers& informers, SloConfigSource& config,
                                               metrics::Registry& registry,
                                               noderesource::NodeResourcePlugins resource_plugins)
    : client_(client),
      informers_(informers),
      config_(config),
      resource_plugins_(resource_plugins),
      writes_(registry.counter("koord_manager_noderesource_node_updates_total",
                               "node.status writes of batch resources by the reason",
                               {"state", "result"})) {}

ReconcileResult NodeResourceReconciler::reconcile(const std::string& name) {
  auto node = informers_.nodes.store().get(name);
  if (!node) {
    std::lock_guard lock(mu_);
    last_write_.erase(name);
    return ReconcileResult::done();
  }
  auto cfg = config_.current();
  if (!cfg)
    return ReconcileResult::done();
  const auto strategy = apis::colocationStrategyForNode((*cfg)->colocation, node->view.labels,
                                                        node->view.annotations);
  const auto pods = informers_.pods.store().byIndex(kube::indexes::kNodeName, name);
  std::vector<const noderesource::PodView*> pod_ptrs;
  pod_ptrs.reserve(pods.size());
  for (const auto& p : pods)
    pod_ptrs.push_back(p.get());
  const auto metric = informers_.node_metrics.store().get(name);
  const auto now = std::chrono::system_clock::now();
  auto result =
      noderesource::calculateBatchResource(node->view, pod_ptrs, metric.get(), strategy, now);
  // MidResource, when --noderesource-plugins has it; off, the node's mid resources stay as
  // they are, as Koordinator leaves a disabled plugin's resources.
  std::optional<noderesource::MidResult> mid;
  if (resource_plugins_.mid)
    mid = noderesource::calculateMidResource(node->view, metric.get(), strategy, now);

  std::optional<std::chrono::system_clock::time_point> last;
  {
    std::lock_guard lock(mu_);
    if (auto it = last_write_.find(name); it != last_write_.end())
      last = it->second;
  }
  auto decision =
      noderesource::needSync(node->view.current_batch, result.desired, strategy, last, now);
  if (!decision.need && mid)
    decision = noderesource::needMidSync(node->view.current_mid, mid->desired, strategy);
  // The device plugins change nothing while colocation is off for the node (Koordinator's reset
  // runs only the plugins' Reset, and theirs return nothing), nor where the API server serves
  // no Device.
  noderesource::DeviceResourceSync devices;
  if (result.state != noderesource::BatchState::kReset) {
    if (const auto* store = informers_.devices.store()) {
      auto device = store->get(name);
      devices =
          noderesource::syncDeviceResources(node->view, device.get(), resource_plugins_, strategy);
      if (device && !device->error.empty())
        KOORD_LOG_WARNING("node {}: device resources left as they are: {}", name, devices.message);
    }
  }
  // Come back when the metric turns stale (degrade) or the age threshold forces a write, since
  // neither sends an event.
  std::chrono::nanoseconds requeue = std::chrono::seconds(strategy.update_time_threshold_seconds);
  if (metric && metric->update_time && result.state == noderesource::BatchState::kCalculated) {
    // Clamped: degradeTimeMinutes has no upper bound in the configuration, and a huge one must
    // not overflow the clock's arithmetic.
    auto degrade_after = std::chrono::minutes(
        std::min<std::int64_t>(strategy.degrade_time_minutes, 60LL * 24 * 365));
    auto to_degrade = *metric->update_time + degrade_after - now + std::chrono::seconds(1);
    requeue = std::min<std::chrono::nanoseconds>(requeue, to_degrade);
  }
  requeue = std::max<std::chrono::nanoseconds>(requeue, std::chrono::seconds(1));

  const bool need_meta = !devices.changed_labels.empty();
  if (!decision.need && !devices.need_status && !need_meta)
    return ReconcileResult::after(requeue);
  if (decision.need || devices.need_status) {
    if (auto failed = writeStatus(name, result, mid ? &*mid : nullptr, devices,
                                  decision.need ? decision.reason : devices.status_reason, now))
      return *failed;
  }
  if (need_meta) {
    kube::ResourceRef ref{"", "v1", "nodes", "", name, ""};
    auto r = client_.patchSync(ref, kube::PatchType::kMergePatch,
                               noderesource::buildNodeLabelsPatch(devices.changed_labels));
    if (!r) {
      if (kube::isNotFound(r.error()))
        return ReconcileResult::done();
      return ReconcileResult::fail(fmt::format("patching node {} GPU labels: {} {}: {}", name,
                                               r.error().code, r.error().reason,
                                               r.error().message));
    }
    std::string labels;
    for (const auto& [key, value] : devices.changed_labels)
      labels += fmt::format("{}{}={}", labels.empty() ? "" : ", ", key, value);
    KOORD_LOG_INFO("node {}: GPU labels copied from its Device: {}", name, labels);
  }
  return ReconcileResult::after(requeue);
}

std::optional<ReconcileResult> NodeResourceReconciler::writeStatus(
    const std::string& name, const noderesource::BatchResult& result,
    const noderesource::MidResult* mid, const noderesource::DeviceResourceSync& devices,
    const std::string& reason, std::chrono::system_clock::time_point now) {
  const std::string state(noderesource::batchStateName(result.state));
  kube::ResourceRef ref{"", "v1", "nodes", "", name, "status"};
  auto patch = noderesource::buildNodeStatusPatch(result.desired);
  if (mid)
    noderesource::addMidResourcesToPatch(patch, mid->desired);
  noderesource::addDeviceResourcesToPatch(patch, devices);
  auto r = client_.patchSync(ref, kube::PatchType::kMergePatch, patch);
  if (!r) {
    writes_.with({state, "error"}).inc();
    if (kube::isNotFound(r.error()))
      return ReconcileResult::done();
    return ReconcileResult::fail(fmt::format("patching node {} status: {} {}: {}", name,
                                             r.error().code, r.error().reason, r.error().message));
  }
  writes_.with({state, "success"}).inc();
  {
    std::lock_guard lock(mu_);
    last_write_[name] = now;
  }
  if (result.state == noderesource::BatchState::kCalculated)
    KOORD_LOG_INFO("node {}: batch resources written ({}): {}; {}", name, reason,
                   result.cpu_message, result.memory_message);
  else
    KOORD_LOG_INFO("node {}: batch resources removed: {}", name, result.reason);
  if (mid && mid->state == noderesource::BatchState::kCalculated)
    KOORD_LOG_INFO("node {}: mid resources written: {}; {}", name, mid->cpu_message,
                   mid->memory_message);
  else if (mid)
    KOORD_LOG_INFO("node {}: mid resources removed: {}", name, mid->reason);
  if (!devices.resources.empty()) {
    std::string written;
    for (const auto& [resource, value] : devices.resources)
      written += fmt::format("{}{}={}", written.empty() ? "" : ", ", resource,
                             value ? value->toString() : "removed");
    KOORD_LOG_INFO("node {}: device resources written ({}): {}", name, devices.message, written);
  }
  return std::nullopt;
}

}  // namespace koord::roles::manager
