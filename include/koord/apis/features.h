// Koordinator's feature gates with their upstream names, defaults and stages, one set per
// --feature-gates flag (manager and descheduler share koordinator's pkg/features gate).
#pragma once

#include <vector>

#include "koord/core/feature_gate.h"

namespace koord::apis {

/// koord-manager and koord-descheduler (pkg/features/features.go).
std::vector<FeatureSpec> managerFeatures();
/// koordlet: pkg/features/koordlet_features.go plus the runtime-hook gates, one flag.
std::vector<FeatureSpec> koordletFeatures();
/// koord-scheduler's own gates (pkg/features/scheduler_features.go).
std::vector<FeatureSpec> schedulerFeatures();

}  // namespace koord::apis
