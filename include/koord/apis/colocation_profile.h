// ClusterColocationProfile (config.koordinator.sh/v1alpha1): which pods the manager's mutating
// webhook turns into co-located ones, and what it sets on them. Projected once from JSON.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::apis {

/// A profile annotation: present (any value) means the webhook must leave the pod's cpu/memory
/// alone even when the priority class would turn them into batch-* or mid-* resources.
inline constexpr std::string_view kAnnotationSkipUpdateResources =
    "config.koordinator.sh/skip-update-resources";

struct ClusterColocationProfile {
  std::string name;
  /// Absent means "no constraint" (every namespace / every pod), unlike a nil selector elsewhere.
  std::optional<kube::LabelSelector> namespace_selector;
  std::optional<kube::LabelSelector> selector;
  /// spec.probability resolved to a percentage: an integer as given, or "N%" as N. Absent means
  /// always (100). Values outside 0..100 are kept: above 100 never skips, below 0 always does.
  std::optional<std::int32_t> probability_percent;
  std::string qos_class;            // "" or one of LSE LSR LS BE SYSTEM
  std::string priority_class_name;  // a PriorityClass object's name
  std::optional<std::int32_t> koordinator_priority;
  kube::Labels labels;
  kube::Labels annotations;
  kube::Labels label_keys_mapping;       // old key -> new key
  kube::Labels annotation_keys_mapping;  // old key -> new key
  kube::Labels label_suffixes;           // key -> suffix appended to the existing value
  std::string scheduler_name;
  /// spec.patch, a partial Pod merged over the pod; null when absent.
  boost::json::value patch;
  /// metadata.annotations carries kAnnotationSkipUpdateResources.
  bool skip_update_resources = false;
};

/// Decodes a whole ClusterColocationProfile object. Errors name the field ("spec.probability:
/// ..."). Selectors are checked as the API would use them, so a profile that decodes can always
/// be matched; qosClass must be one of the CRD's enum values.
kube::Expected<ClusterColocationProfile> decodeClusterColocationProfile(
    const boost::json::value& v);

}  // namespace koord::apis
