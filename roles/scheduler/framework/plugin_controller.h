// For plugins that run a controller of their own beside the scheduling loop (Coscheduling's
// PodGroup status, ElasticQuota's revoke loop), as Koordinator's frameworkext ControllerProvider.
#pragma once

namespace koord::roles::scheduler {

/// The scheduler starts every built plugin implementing this once it leads with synced caches,
/// and stops it before the plugins are destroyed. Writes go out only while leading.
class PluginController {
 public:
  virtual ~PluginController() = default;
  virtual void startController() = 0;
  /// Joins whatever startController() started; called at most once after it, and harmless
  /// without it.
  virtual void stopController() = 0;
};

}  // namespace koord::roles::scheduler
