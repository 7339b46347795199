// InterPodAffinity's pluginConfig args (InterPodAffinityArgs): how much an existing pod's
// required affinity term adds to the score of nodes where the incoming pod would satisfy it.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <memory>
#include <string_view>

#include "framework/plugin.h"
#include "koord/kube/error.h"

namespace koord::roles::scheduler::upstream::interpodaffinity {

inline constexpr std::int32_t kDefaultHardPodAffinityWeight = 1;
inline constexpr std::int32_t kMinHardPodAffinityWeight = 0;
inline constexpr std::int32_t kMaxHardPodAffinityWeight = 100;

struct InterPodAffinityArgs final : PluginArgs {
  /// 0 turns the symmetric scoring of existing pods' required affinity off.
  std::int32_t hard_pod_affinity_weight = kDefaultHardPodAffinityWeight;
};

/// Strict decoding (every config version, v1beta1 included, has the same one field) with the
/// default for an absent or null weight, then validateInterPodAffinityArgs.
kube::Expected<std::shared_ptr<const InterPodAffinityArgs>> decodeInterPodAffinityArgs(
    const boost::json::value* args, std::string_view api_version);

/// hardPodAffinityWeight within [0, 100], as kube-scheduler's ValidateInterPodAffinityArgs.
kube::Expected<void> validateInterPodAffinityArgs(const InterPodAffinityArgs& args);

}  // namespace koord::roles::scheduler::upstream::interpodaffinity
