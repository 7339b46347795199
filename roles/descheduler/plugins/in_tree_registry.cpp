// Every descheduler plugin this build carries, by name. One line per plugin; each plugin folder's
// register.h declares its function.
#include "controllers/migration/plugin.h"
#include "framework/plugin_registry.h"
#include "plugins/defaultevictor/register.h"
#include "plugins/lownodeload/register.h"
#include "plugins/nodeutilization/register.h"
#include "plugins/podlifetime/register.h"
#include "plugins/removeduplicates/register.h"
#include "plugins/removefailedpods/register.h"
#include "plugins/removepodshavingtoomanyrestarts/register.h"
#include "plugins/removepodsviolatinginterpodantiaffinity/register.h"
#include "plugins/removepodsviolatingnodeaffinity/register.h"
#include "plugins/removepodsviolatingnodetaints/register.h"
#include "plugins/removepodsviolatingtopologyspreadconstraint/register.h"

namespace koord::roles::descheduler {

const PluginRegistry& inTreeRegistry() {
  static const PluginRegistry registry = [] {
    PluginRegistry r;
    // Koordinator's own.
    migration::registerMigrationController(r);
    registerLowNodeLoad(r);
    // The community descheduler's, as Koordinator embeds them.
    registerDefaultEvictor(r);
    registerHighNodeUtilization(r);
    registerLowNodeUtilization(r);
    registerPodLifeTime(r);
    registerRemoveDuplicates(r);
    registerRemoveFailedPods(r);
    registerRemovePodsHavingTooManyRestarts(r);
    registerRemovePodsViolatingInterPodAntiAffinity(r);
    registerRemovePodsViolatingNodeAffinity(r);
    registerRemovePodsViolatingNodeTaints(r);
    registerRemovePodsViolatingTopologySpreadConstraint(r);
    return r;
  }();
  return registry;
}

}  // namespace koord::roles::descheduler
