// The peak predictor's settings (Koordinator's prediction-* koordlet flags) and the model keys
// it trains beside the pods' UIDs: the node, the system overhead and each priority class.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include "koord/apis/extension.h"

namespace koord::roles::koordlet::prediction {

struct PredictionConfig {
  /// A directory: one checkpoint file per model.
  std::filesystem::path checkpoint_dir = "/prediction-checkpoints";
  /// A pod younger than this is left out of the pod-by-pod reclaimable sum.
  std::chrono::nanoseconds cold_start = std::chrono::hours(24);
  /// Headroom above the predicted peak: peak * (100 + margin) / 100.
  int safety_margin_percent = 10;
  std::chrono::nanoseconds memory_half_life = std::chrono::hours(24);
  std::chrono::nanoseconds cpu_half_life = std::chrono::hours(12);
  /// Each round adds one sample per model: the p90 of the usage over this long.
  std::chrono::nanoseconds training_interval = std::chrono::minutes(1);
  /// A model not trained for this long is dropped with its checkpoint.
  std::chrono::nanoseconds model_expiration = std::chrono::minutes(30);
  /// A model is checkpointed again once this long has passed since its last checkpoint.
  std::chrono::nanoseconds checkpoint_interval = std::chrono::minutes(10);
  /// At most this many models are written per checkpoint step (one step a minute).
  int checkpoint_max_per_step = 12;
};

/// Koordinator's model keys (UIDType): a pod's is its metadata.uid; these are the node's.
inline constexpr std::string_view kNodeModelKey = "__node__";
/// The node's usage less all pods' usage, floored at zero.
inline constexpr std::string_view kSystemItem = "sys";

/// "__node-<item>__": "__node-sys__", "__node-koord-prod__", and "__node-__" for pods without
/// a priority class.
std::string nodeItemKey(std::string_view item);
/// The node item of a priority class (its label value; "" for none).
std::string priorityItemKey(apis::PriorityClass priority);

/// Koordinator's KnownPriorityClasses, in its order: prod, mid, batch, free, none.
inline constexpr apis::PriorityClass kKnownPriorityClasses[] = {
    apis::PriorityClass::kProd, apis::PriorityClass::kMid, apis::PriorityClass::kBatch,
    apis::PriorityClass::kFree, apis::PriorityClass::kNone};

/// The classes whose pods' unused requests Koordinator reclaims for Mid: prod and none.
inline bool reclaimableForProd(apis::PriorityClass p) {
  return p == apis::PriorityClass::kProd || p == apis::PriorityClass::kNone;
}

}  // namespace koord::roles::koordlet::prediction
