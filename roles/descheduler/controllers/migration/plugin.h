// Koordinator's MigrationController as a descheduler plugin: its Evict point turns an eviction
// into a PodMigrationJob (which its controller then carries out), its Filter point refuses pods
// its args exclude, pods with a job already, and pods the migration caps hold back.
#pragma once

#include <memory>
#include <string_view>

#include "controllers/migration/args.h"
#include "controllers/migration/controller.h"
#include "framework/plugin.h"
#include "framework/plugin_registry.h"

namespace koord::roles::descheduler::migration {

class MigrationControllerPlugin final : public EvictPlugin, public FilterPlugin {
 public:
  /// Without a cluster (unit tests, benchmarks) there is no controller: Filter applies the
  /// args' rules alone and Evict refuses.
  MigrationControllerPlugin(std::shared_ptr<const MigrationControllerArgs> args,
                            FrameworkHandle& handle, metrics::Registry& metrics);

  std::string_view name() const override { return kMigrationControllerName; }
  bool filter(const Pod& pod) const override;
  bool evict(const Pod& pod, const EvictOptions& options) override;

  MigrationJobController* controller() { return controller_.get(); }

 private:
  std::shared_ptr<const MigrationControllerArgs> args_;
  std::optional<kube::Selector> selector_;
  std::shared_ptr<MigrationJobController> controller_;
};

/// Koordinator's evictor rules as MigrationControllerArgs states them (the ones that never change
/// for a pod): mirror, static, DaemonSet, terminating pods never; bare pods only when failed and
/// evictFailedBarePods; system-critical pods only with evictSystemCriticalPods; local storage
/// only with evictLocalStoragePods; PVC pods not with ignorePvcPods; pods above the priority
/// threshold never; the namespaces and labelSelector. `why` names the refusal.
bool migratable(const MigrationControllerArgs& args, const std::optional<kube::Selector>& selector,
                const Pod& pod, std::string* why = nullptr);

/// Adds "MigrationController" to a descheduler plugin registry.
void registerMigrationController(PluginRegistry& registry);

}  // namespace koord::roles::descheduler::migration
