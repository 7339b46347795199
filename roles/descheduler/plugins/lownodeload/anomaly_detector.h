// Whether a node has been over its thresholds long enough to act on: Koordinator's basic anomaly
// detector (consecutive counts with an expiring anomalous state), kept per node across passes.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "framework/types.h"
#include "plugins/lownodeload/args.h"

namespace koord::roles::descheduler::lownodeload {

/// One node's detector. Time is the pass's snapshot time, so passes replay deterministically.
class AnomalyDetector {
 public:
  enum class State { kOk, kAnomaly };

  AnomalyDetector(LoadAnomalyCondition condition, TimePoint now);

  /// Records one pass (normal or not) and answers the state after it.
  State mark(bool normal, TimePoint now);
  /// Ends an anomaly with fresh counts (the node was seen under its thresholds). An OK
  /// detector keeps its counts, as Koordinator's does.
  void reset(TimePoint now);

  std::uint32_t consecutiveAbnormalities() const { return abnormalities_; }

 private:
  State current(TimePoint now);
  void setState(State s, TimePoint now);
  void newGeneration(TimePoint now);
  // Koordinator's conditions are strict comparisons: a count must pass the configured one.
  bool anomalous() const { return abnormalities_ > condition_.consecutive_abnormalities; }
  bool recovered() const { return normalities_ > condition_.consecutive_normalities; }

  LoadAnomalyCondition condition_;
  State state_ = State::kOk;
  std::uint32_t abnormalities_ = 0;
  std::uint32_t normalities_ = 0;
  std::optional<TimePoint> expiration_;
};

/// Detectors by node name; one not touched by markAbnormal for the cache timeout is forgotten
/// (Koordinator keeps them in an expiring cache).
class AnomalyDetectors {
 public:
  explicit AnomalyDetectors(std::chrono::nanoseconds cache_timeout)
      : cache_timeout_(cache_timeout) {}

  /// A pass saw `node` over its high thresholds: true when that makes it anomalous. With a
  /// condition of one abnormality there is no detector, every such node is.
  bool markAbnormal(std::string_view node, const LoadAnomalyCondition& condition, TimePoint now);
  /// The node was seen normal after its pods were moved.
  void markNormal(std::string_view node, TimePoint now);
  /// The node is under its thresholds: its counts start over.
  void reset(std::string_view node, TimePoint now);
  /// The node's detector, for tests; nullptr when none is kept.
  const AnomalyDetector* find(std::string_view node, TimePoint now);

 private:
  struct Entry {
    AnomalyDetector detector;
    TimePoint last_set;
  };
  Entry* live(std::string_view node, TimePoint now);

  std::chrono::nanoseconds cache_timeout_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace koord::roles::descheduler::lownodeload
