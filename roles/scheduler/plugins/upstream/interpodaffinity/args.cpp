#include "plugins/upstream/interpodaffinity/args.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::upstream::interpodaffinity {

namespace {

constexpr std::string_view kWeightField = "hardPodAffinityWeight";

kube::Error outOfRange(std::int64_t weight) {
  return kube::makeKubeError(fmt::format("{}: Invalid value: {}: not in valid range [{}-{}]",
                                         kWeightField, weight, kMinHardPodAffinityWeight,
                                         kMaxHardPodAffinityWeight));
}

}  // namespace

kube::Expected<std::shared_ptr<const InterPodAffinityArgs>> decodeInterPodAffinityArgs(
    const boost::json::value* args, std::string_view /*api_version*/) {
  auto out = std::make_shared<InterPodAffinityArgs>();
  auto o = argsObject(args);
  if (!o)
    return o.error();
  if (*o != nullptr) {
    if (auto known = checkKnownFields(**o, {kWeightField}, ""); !known)
      return known.error();
    if (const boost::json::value* v = kube::jsonfields::field(**o, kWeightField)) {
      auto weight = intValue(*v, kWeightField);
      if (!weight)
        return weight.error();
      // Checked here on the int64 so that a value beyond int32 is refused, not truncated.
      if (*weight < kMinHardPodAffinityWeight || *weight > kMaxHardPodAffinityWeight)
        return outOfRange(*weight);
      out->hard_pod_affinity_weight = static_cast<std::int32_t>(*weight);
    }
  }
  if (auto valid = validateInterPodAffinityArgs(*out); !valid)
    return valid.error();
  return std::shared_ptr<const InterPodAffinityArgs>(std::move(out));
}

kube::Expected<void> validateInterPodAffinityArgs(const InterPodAffinityArgs& args) {
  if (args.hard_pod_affinity_weight < kMinHardPodAffinityWeight ||
      args.hard_pod_affinity_weight > kMaxHardPodAffinityWeight)
    return outOfRange(args.hard_pod_affinity_weight);
  return {};
}

}  // namespace koord::roles::scheduler::upstream::interpodaffinity
