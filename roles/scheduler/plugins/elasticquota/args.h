// ElasticQuotaArgs: the ElasticQuota plugin's pluginConfig args with Koordinator's field names
// and defaults (revocation timing, the default and system quotas' maxima), decoded strictly.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <string>
#include <string_view>

#include "framework/plugin.h"
#include "koord/kube/error.h"
#include "koord/kube/quantity.h"

namespace koord::roles::scheduler::elasticquota {

inline constexpr std::string_view kPluginName = "ElasticQuota";
inline constexpr std::string_view kArgsKind = "ElasticQuotaArgs";

/// Koordinator's default for both quotas' max, cpu and memory: large enough never to bind, small
/// enough that sums of a few stay inside int64.
kube::ResourceList defaultQuotaGroupMaxDefault();
kube::ResourceList systemQuotaGroupMaxDefault();

/// Default-constructed, it holds Koordinator's defaults (what decoding `null` gives).
struct ElasticQuotaArgs : PluginArgs {
  /// How long a quota's used must stay above its runtime before its pods are revoked: short
  /// bursts while runtimes settle are not worth an eviction.
  std::chrono::nanoseconds delay_evict_time = std::chrono::seconds(120);
  /// How often the revoke controller looks at every quota.
  std::chrono::nanoseconds revoke_pod_interval = std::chrono::seconds(1);
  kube::ResourceList default_quota_group_max = defaultQuotaGroupMaxDefault();
  kube::ResourceList system_quota_group_max = systemQuotaGroupMaxDefault();
  /// Where the scheduler creates the root, system and default quotas.
  std::string quota_group_namespace = "koordinator-system";
  /// Revoke pods of quotas over their runtime (the revoke controller runs only when set).
  bool monitor_all_quotas = false;
  /// PreFilter checks every ancestor quota too, not only the pod's own.
  bool enable_check_parent_quota = false;
  /// false: every check uses max instead of the runtime quota.
  bool enable_runtime_quota = true;
};

/// Errors name the field ("delayEvictTime: ..."); unknown fields are errors; negative durations
/// and negative maxima are refused, as Koordinator's validation refuses them.
kube::Expected<ElasticQuotaArgs> decodeElasticQuotaArgs(const boost::json::value* args,
                                                        std::string_view api_version);

}  // namespace koord::roles::scheduler::elasticquota
