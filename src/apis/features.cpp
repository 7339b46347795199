#include "koord/apis/features.h"

#include <initializer_list>
#include <string>

namespace koord::apis {
namespace {

constexpr FeatureStage kAlpha = FeatureStage::kAlpha;
constexpr FeatureStage kBeta = FeatureStage::kBeta;
constexpr FeatureStage kGA = FeatureStage::kGA;

void addAll(std::vector<FeatureSpec>& out, std::initializer_list<const char*> names, bool def,
            FeatureStage stage) {
  for (const char* n : names)
    out.push_back(FeatureSpec{n, def, stage, false});
}

}  // namespace

std::vector<FeatureSpec> managerFeatures() {
  std::vector<FeatureSpec> f;
  addAll(f,
         {"PodMutatingWebhook", "PodValidatingWebhook", "ElasticMutatingWebhook",
          "ElasticValidatingWebhook", "WebhookFramework"},
         true, kBeta);
  addAll(f,
         {"NodeMutatingWebhook",
          "NodeValidatingWebhook",
          "ConfigMapValidatingWebhook",
          "ReservationMutatingWebhook",
          "ColocationProfileSkipMutatingResources",
          "ColocationProfileSkipValidatingPriority",
          "MultiQuotaTree",
          "ElasticQuotaIgnorePodOverhead",
          "ElasticQuotaGuaranteeUsage",
          "ElasticQuotaEnableUpdateResourceKey",
          "ElasticQuotaEvaluationTransformPod",
          "DisableDefaultQuota",
          "SupportParentQuotaSubmitPod",
          "EnableQuotaAdmission",
          "EnableQuotaAdmissionOnUpdate",
          "EnableSyncGPUSharedResource",
          "ColocationProfileController",
          "ValidatePodDeviceResource",
          "EnablePodEnhancedValidator",
          "DisableExtendedResourceSpec",
          "DisableDeviceResourceSpec",
          "BindingAdmissionWebhook"},
         false, kAlpha);
  addAll(f, {"DisablePVCReservation"}, false, kBeta);
  addAll(f, {"PriorityTransformer", "PreemptionPolicyTransformer", "ReplaceResourcesTransformer"},
         false, kAlpha);
  return f;
}

std::vector<FeatureSpec> koordletFeatures() {
  std::vector<FeatureSpec> f;
  addAll(f, {"BECPUSuppress", "CPUBurst", "RdtResctrl", "NodeTopologyReport"}, true, kBeta);
  addAll(f,
         {"AuditEvents",
          "AuditEventsHTTPHandler",
          "BECPUManager",
          "BECPUEvict",
          "CPUEvict",
          "CPUAllocatableEvict",
          "BEMemoryEvict",
          "MemoryEvict",
          "MemoryAllocatableEvict",
          "SystemConfig",
          "ResctrlCollector",
          "CgroupReconcile",
          "Accelerators",
          "RDMADevices",
          "CPICollector",
          "Libpfm4",
          "PSICollector",
          "BlkIOReconcile",
          "ColdPageCollector",
          "HugePageReport",
          "PodResourcesProxy",
          "HamiCoreVGPUMonitor",
          "PerCPUMetric",
          "NodeMetricPromMetrics"},
         false, kAlpha);
  // Runtime-hook gates: registered on the same gate, set by the same -feature-gates flag.
  addAll(f, {"GroupIdentity", "CPUSetAllocator", "BatchResource"}, true, kBeta);
  addAll(f,
         {"GPUEnvInject", "RDMADeviceInject", "CPUNormalization", "CoreSched", "TerwayQoS",
          "TCNetworkQoS", "Resctrl", "OOMScoreAdj"},
         false, kAlpha);
  return f;
}

std::vector<FeatureSpec> schedulerFeatures() {
  std::vector<FeatureSpec> f;
  addAll(f,
         {"CompatibleCSIStorageCapacity",
          "DisableCSIStorageCapacityInformer",
          "CompatiblePodDisruptionBudget",
          "DisablePodDisruptionBudgetInformer",
          "DisableDynamicResourceAllocationInformer",
          "ResizePod",
          "MultiQuotaTree",
          "ElasticQuotaIgnorePodOverhead",
          "ElasticQuotaIgnoreTerminatingPod",
          "ElasticQuotaImmediateIgnoreTerminatingPod",
          "ElasticQuotaGuaranteeUsage",
          "DisableDefaultQuota",
          "SupportParentQuotaSubmitPod",
          "LazyReservationRestore",
          "OmitNodeLabelsForReservation",
          "SkipReservationFitsNode",
          "DevicePluginAdaption",
          "CleanExpiredReservationAllocated",
          "SkipFilterWithNominatedPods",
          "SyncBarrier",
          "CrossSchedulerNomination",
          "EnableInlineBatchSchedule",
          "PriorityTransformer",
          "PreemptionPolicyTransformer",
          "ReplaceResourcesTransformer"},
         false, kAlpha);
  addAll(f, {"DynamicSchedulerCheck"}, true, kAlpha);
  addAll(f, {"GangPendingPodsConditionPatch", "EnableBatchScheduleNodeSnapshot"}, true, kBeta);
  addAll(f, {"CSIStorageCapacity", "GenericEphemeralVolume", "PodDisruptionBudget"}, true, kGA);
  return f;
}

}  // namespace koord::apis
