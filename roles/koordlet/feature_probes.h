// Which koordlet features this host cannot serve: each gate whose code is built but whose kernel
// interface is missing is marked unavailable, so the startup warning and the metric say so.
#pragma once

#include "koord/cgroup/resource_executor.h"
#include "koord/core/feature_gate.h"

namespace koord::roles::koordlet {

struct KoordletOptions;

/// Runs the probe of every enabled gate that has one (table in feature_probes.cpp) and marks
/// the gate unavailable with the missing file's path. Call before app::reportGateEffects.
void markUnavailableFeatures(const FeatureGate& gates, const KoordletOptions& options,
                             const cgroup::CgroupRoot& root);

}  // namespace koord::roles::koordlet
