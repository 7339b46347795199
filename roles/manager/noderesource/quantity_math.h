// Quantity arithmetic for the noderesource calculation: sums that saturate instead of throwing
// (the inputs are whatever the API server holds), and Koordinator's percentage scaling.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "koord/kube/quantity.h"
#include "noderesource/node_view.h"

namespace koord::roles::manager::noderesource {

/// The largest magnitude a Quantity holds, just under kube::Quantity::kLimit.
inline const kube::Quantity& quantityMax() {
  static const kube::Quantity q = kube::Quantity::fromScaled(999'999'999'999'999'999, 3);
  return q;
}

/// a += b; on overflow a sticks at +/- quantityMax() rather than throwing: a pod or metric with
/// absurd figures must not take the controller down, and any batch result from it is zero anyway.
inline void addSat(kube::Quantity& a, const kube::Quantity& b) {
  if (!a.add(b))
    a = b.sign() > 0 ? quantityMax() : -quantityMax();
}
inline void subSat(kube::Quantity& a, const kube::Quantity& b) {
  if (!a.sub(b))
    a = b.sign() < 0 ? quantityMax() : -quantityMax();
}
inline void addSat(CpuMemory& a, const CpuMemory& b) {
  addSat(a.cpu, b.cpu);
  addSat(a.memory, b.memory);
}
inline void subSat(CpuMemory& a, const CpuMemory& b) {
  subSat(a.cpu, b.cpu);
  subSat(a.memory, b.memory);
}
inline const kube::Quantity& maxQ(const kube::Quantity& a, const kube::Quantity& b) {
  return b > a ? b : a;
}
inline const kube::Quantity& minQ(const kube::Quantity& a, const kube::Quantity& b) {
  return a >= b ? b : a;
}
inline CpuMemory maxCM(const CpuMemory& a, const CpuMemory& b) {
  return {maxQ(a.cpu, b.cpu), maxQ(a.memory, b.memory)};
}

/// The cpu and memory of a resource list; absent ones are zero.
inline CpuMemory cpuMemoryOf(const kube::ResourceList& list) {
  CpuMemory out;
  if (auto it = list.find("cpu"); it != list.end())
    out.cpu = it->second;
  if (auto it = list.find("memory"); it != list.end())
    out.memory = it->second;
  return out;
}

/// Go's int64(f) for the values Koordinator produces; NaN is 0 and out-of-range values saturate
/// (Go leaves those to the platform, C++ leaves them undefined).
inline std::int64_t truncToInt64(double f) {
  if (std::isnan(f))
    return 0;
  if (f >= 9.2233720368547758e18)
    return std::numeric_limits<std::int64_t>::max();
  if (f <= -9.2233720368547758e18)
    return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(f);
}

/// Koordinator's MultiplyMilliQuant: int64(float64(q.MilliValue()) * factor) milli-units, q's
/// format. Done in float64 like Koordinator so results match a Go manager to the unit.
inline kube::Quantity multiplyMilli(const kube::Quantity& q, double factor) {
  return kube::Quantity::fromMilli(truncToInt64(static_cast<double>(q.milliValue()) * factor),
                                   q.format());
}

/// Koordinator's MultiplyQuant: int64(float64(q.Value()) * factor) units, q's format.
inline kube::Quantity multiplyValue(const kube::Quantity& q, double factor) {
  return kube::Quantity::fromInt(truncToInt64(static_cast<double>(q.value()) * factor), q.format());
}

/// Koordinator's getReserveRatio: float64(100 - reclaimThresholdPercent) / 100.
inline double reserveRatio(std::int64_t reclaim_threshold_percent) {
  constexpr std::int64_t kBound = std::int64_t{1} << 52;
  reclaim_threshold_percent = std::clamp(reclaim_threshold_percent, -kBound, kBound);
  return static_cast<double>(100 - reclaim_threshold_percent) / 100.0;
}

/// float64(p) / 100 for a percentage from the colocation strategy; the clamp keeps hostile
/// config values away from signed overflow before the conversion.
inline double percentRatio(std::int64_t percent) {
  constexpr std::int64_t kBound = std::int64_t{1} << 53;
  if (percent > kBound)
    percent = kBound;
  if (percent < -kBound)
    percent = -kBound;
  return static_cast<double>(percent) / 100.0;
}

}  // namespace koord::roles::manager::noderesource
