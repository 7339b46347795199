// Every plugin this build carries, by name: upstream's and Koordinator's. One line per plugin;
// each plugin folder's register.h declares its function.
#include "framework/plugin_registry.h"
#include "plugins/coscheduling/register.h"
#include "plugins/defaultprebind/register.h"
#include "plugins/deviceshare/register.h"
#include "plugins/elasticquota/register.h"
#include "plugins/loadaware/register.h"
#include "plugins/nodenumaresource/register.h"
#include "plugins/reservation/register.h"
#include "plugins/upstream/defaultbinder/register.h"
#include "plugins/upstream/defaultpreemption/register.h"
#include "plugins/upstream/dynamicresources/register.h"
#include "plugins/upstream/imagelocality/register.h"
#include "plugins/upstream/interpodaffinity/register.h"
#include "plugins/upstream/nodeaffinity/register.h"
#include "plugins/upstream/nodename/register.h"
#include "plugins/upstream/nodeports/register.h"
#include "plugins/upstream/nodepreferavoidpods/register.h"
#include "plugins/upstream/noderesources/register.h"
#include "plugins/upstream/nodeunschedulable/register.h"
#include "plugins/upstream/nodevolumelimits/register.h"
#include "plugins/upstream/podtopologyspread/register.h"
#include "plugins/upstream/queuesort/register.h"
#include "plugins/upstream/schedulinggates/register.h"
#include "plugins/upstream/selectorspread/register.h"
#include "plugins/upstream/tainttoleration/register.h"
#include "plugins/upstream/volumebinding/register.h"
#include "plugins/upstream/volumerestrictions/register.h"
#include "plugins/upstream/volumezone/register.h"

namespace koord::roles::scheduler {

const PluginRegistry& inTreeRegistry() {
  static const PluginRegistry registry = [] {
    PluginRegistry r;
    upstream::registerPrioritySort(r);
    upstream::registerNodeUnschedulable(r);
    upstream::registerNodeName(r);
    upstream::registerNodePorts(r);
    upstream::registerNodeAffinity(r);
    upstream::registerTaintToleration(r);
    upstream::registerNodeResourcesFit(r);
    upstream::registerNodeResourcesLeastAllocated(r);
    upstream::registerNodeResourcesMostAllocated(r);
    upstream::registerNodeResourcesBalancedAllocation(r);
    upstream::registerDefaultBinder(r);
    upstream::registerInterPodAffinity(r);
    upstream::registerPodTopologySpread(r);
    upstream::registerSelectorSpread(r);
    upstream::registerDefaultPreemption(r);
    upstream::registerSchedulingGates(r);
    upstream::registerDynamicResources(r);
    upstream::registerNodePreferAvoidPods(r);
    upstream::registerImageLocality(r);
    upstream::registerVolumeRestrictions(r);
    upstream::registerVolumeZone(r);
    upstream::registerNodeVolumeLimits(r);
    upstream::registerEBSLimits(r);
    upstream::registerGCEPDLimits(r);
    upstream::registerAzureDiskLimits(r);
    upstream::registerCinderLimits(r);
    upstream::registerVolumeBinding(r);
    registerLoadAwareScheduling(r);
    reservation::registerReservation(r);
    defaultprebind::registerDefaultPreBind(r);
    coscheduling::registerCoscheduling(r);
    elasticquota::registerElasticQuota(r);
    deviceshare::registerDeviceShare(r);
    nodenumaresource::registerNodeNUMAResource(r);
    return r;
  }();
  return registry;
}

}  // namespace koord::roles::scheduler
