#include "controllers/migration/plugin.h"

#include <algorithm>

#include "framework/plugin_registry.h"
#include "koord/core/log.h"

namespace koord::roles::descheduler::migration {

namespace {

// Kubernetes' SystemCriticalPriority: system-cluster-critical and system-node-critical.
constexpr std::int32_t kSystemCriticalPriority = 2'000'000'000;

}  // namespace

bool migratable(const MigrationControllerArgs& args, const std::optional<kube::Selector>& selector,
                const Pod& pod, std::string* why) {
  auto refuse = [&](std::string_view reason) {
    if (why != nullptr)
      *why = std::string(reason);
    return false;
  };
  if (pod.mirror)
    return refuse("a mirror pod");
  if (pod.static_pod)
    return refuse("a static pod");
  if (pod.daemonSetPod())
    return refuse("a DaemonSet pod");
  if (pod.deletion_timestamp)
    return refuse("being deleted");
  if (pod.owner_refs.empty() && !(args.evict_failed_bare_pods && pod.phase == PodPhase::kFailed))
    return refuse("a pod without an owner");
  if (!args.evict_system_critical_pods && pod.priorityOrZero() >= kSystemCriticalPriority)
    return refuse("a system-critical pod");
  if (args.priority_threshold && args.priority_threshold->value &&
      pod.priorityOrZero() >= *args.priority_threshold->value)
    return refuse("at or above the priority threshold");
  if (pod.has_local_storage && !args.evict_local_storage_pods)
    return refuse("a pod with local storage");
  if (pod.has_pvc && args.ignore_pvc_pods)
    return refuse("a pod with a PersistentVolumeClaim");
  if (args.namespaces) {
    const auto& in = args.namespaces->include;
    const auto& out = args.namespaces->exclude;
    if (!in.empty() && std::find(in.begin(), in.end(), pod.namespace_) == in.end())
      return refuse("outside the included namespaces");
    if (std::find(out.begin(), out.end(), pod.namespace_) != out.end())
      return refuse("in an excluded namespace");
  }
  if (selector && !selector->matches(pod.labels))
    return refuse("not matching the labelSelector");
  return true;
}

MigrationControllerPlugin::MigrationControllerPlugin(
    std::shared_ptr<const MigrationControllerArgs> args, FrameworkHandle& handle,
    metrics::Registry& metrics)
    : args_(std::move(args)) {
  if (args_->label_selector) {
    if (auto s = kube::toSelector(*args_->label_selector))
      selector_ = std::move(*s);
  }
  if (ClusterServices* cluster = handle.cluster()) {
    controller_ = std::make_shared<MigrationJobController>(args_, *cluster, metrics);
    if (cluster->dry_run || args_->dry_run) {
      // dryRun makes no mutating call: jobs are neither created (Evict only logs) nor run.
      KOORD_LOG_INFO(
          "descheduler: dry run: MigrationController creates and runs no "
          "PodMigrationJob");
      return;
    }
    std::weak_ptr<MigrationJobController> weak = controller_;
    cluster->add_controller({std::string(kMigrationControllerName),
                             [weak] {
                               if (auto c = weak.lock())
                                 c->start();
                             },
                             [weak] {
                               if (auto c = weak.lock())
                                 c->stop();
                             },
                             [weak] {
                               auto c = weak.lock();
                               return c == nullptr || c->synced();
                             }});
  }
}

bool MigrationControllerPlugin::filter(const Pod& pod) const {
  std::string why;
  if (!migratable(*args_, selector_, pod, &why)) {
    KOORD_VLOG(4, "descheduler: MigrationController keeps {}: {}", pod.key(), why);
    return false;
  }
  if (controller_ && controller_->hasActiveJob(pod.uid))
    return false;
  return true;
}

bool MigrationControllerPlugin::evict(const Pod& pod, const EvictOptions& options) {
  if (!controller_)
    return false;
  return controller_->createJob(pod, options.plugin_name, options.reason);
}

void registerMigrationController(PluginRegistry& registry) {
  registry.add(
      std::string(kMigrationControllerName),
      makePluginFactory<MigrationControllerArgs>(
          [](const boost::json::value* args) { return decodeMigrationControllerArgs(args); },
          [](std::shared_ptr<const MigrationControllerArgs> args, FrameworkHandle& h) {
            return std::make_shared<MigrationControllerPlugin>(std::move(args), h,
                                                               metrics::Registry::global());
          },
          "MigrationController: args are not MigrationControllerArgs"));
}

}  // namespace koord::roles::descheduler::migration
