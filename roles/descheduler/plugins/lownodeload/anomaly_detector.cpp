// The anomaly detector's state machine: counts pile up in OK until they pass the condition, the
// anomalous state lasts for the timeout unless enough normal passes end it sooner.
#include "plugins/lownodeload/anomaly_detector.h"

namespace koord::roles::descheduler::lownodeload {

AnomalyDetector::AnomalyDetector(LoadAnomalyCondition condition, TimePoint now)
    : condition_(condition) {
  newGeneration(now);
}

void AnomalyDetector::newGeneration(TimePoint now) {
  abnormalities_ = 0;
  normalities_ = 0;
  if (state_ == State::kAnomaly)
    expiration_ = now + std::chrono::duration_cast<TimePoint::duration>(condition_.timeout);
  else
    expiration_.reset();
}

void AnomalyDetector::setState(State s, TimePoint now) {
  if (state_ == s)
    return;
  state_ = s;
  newGeneration(now);
}

AnomalyDetector::State AnomalyDetector::current(TimePoint now) {
  if (state_ == State::kOk) {
    if (expiration_ && *expiration_ < now)
      newGeneration(now);
  } else if ((expiration_ && *expiration_ < now) || recovered()) {
    setState(State::kOk, now);
  }
  return state_;
}

AnomalyDetector::State AnomalyDetector::mark(bool normal, TimePoint now) {
  const State s = current(now);
  if (normal) {
    ++normalities_;
    abnormalities_ = 0;
    if (s == State::kAnomaly && recovered())
      setState(State::kOk, now);
  } else {
    ++abnormalities_;
    normalities_ = 0;
    if (s == State::kOk && anomalous())
      setState(State::kAnomaly, now);
  }
  return current(now);
}

void AnomalyDetector::reset(TimePoint now) {
  setState(State::kOk, now);
}

AnomalyDetectors::Entry* AnomalyDetectors::live(std::string_view node, TimePoint now) {
  auto it = entries_.find(node);
  if (it == entries_.end())
    return nullptr;
  if (now - it->second.last_set > cache_timeout_) {
    entries_.erase(it);
    return nullptr;
  }
  return &it->second;
}

bool AnomalyDetectors::markAbnormal(std::string_view node, const LoadAnomalyCondition& condition,
                                    TimePoint now) {
  if (condition.consecutive_abnormalities == 1)
    return true;
  Entry* e = live(node, now);
  if (e == nullptr)
    e = &entries_.insert_or_assign(std::string(node), Entry{AnomalyDetector(condition, now), now})
             .first->second;
  const bool anomalous = e->detector.mark(false, now) == AnomalyDetector::State::kAnomaly;
  e->last_set = now;
  return anomalous;
}

void AnomalyDetectors::markNormal(std::string_view node, TimePoint now) {
  if (Entry* e = live(node, now))
    e->detector.mark(true, now);
}

void AnomalyDetectors::reset(std::string_view node, TimePoint now) {
  if (Entry* e = live(node, now))
    e->detector.reset(now);
}

const AnomalyDetector* AnomalyDetectors::find(std::string_view node, TimePoint now) {
  Entry* e = live(node, now);
  return e == nullptr ? nullptr : &e->detector;
}

}  // namespace koord::roles::descheduler::lownodeload
