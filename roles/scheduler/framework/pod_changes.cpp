#include "pod_changes.h"

#include <boost/json.hpp>

#include <algorithm>
#include <iterator>

#include "koord/apis/extension.h"

namespace koord::roles::scheduler {

namespace {

const StateKey kPodChangesKey("koord/PodChanges");

}  // namespace

void PodChanges::setAnnotation(std::string_view key, std::string value) {
  annotations_[std::string(key)] = std::move(value);
}

const std::string* PodChanges::annotation(std::string_view key) const {
  auto it = annotations_.find(key);
  return it == annotations_.end() ? nullptr : &it->second;
}

void PodChanges::removeAnnotation(std::string_view key) {
  if (auto it = annotations_.find(key); it != annotations_.end())
    annotations_.erase(it);
}

void PodChanges::applyTo(PodInfo& pod) const {
  for (const auto& [key, value] : annotations_)
    pod.annotations[key] = value;
  refreshReservationAnnotations(pod);
}

boost::json::value PodChanges::mergePatch(const PodInfo& pod) const {
  boost::json::object annotations;
  for (const auto& [key, value] : annotations_)
    annotations[key] = value;
  return boost::json::object{
      {"metadata", boost::json::object{{"uid", pod.uid}, {"annotations", std::move(annotations)}}}};
}

PodChanges& podChanges(CycleState& state) {
  if (auto* existing = state.readMutable<PodChanges>(kPodChangesKey))
    return *existing;
  state.write(kPodChangesKey, std::make_unique<PodChanges>());
  return *state.readMutable<PodChanges>(kPodChangesKey);
}

const PodChanges* findPodChanges(const CycleState& state) {
  return state.read<PodChanges>(kPodChangesKey);
}

void applyPodChanges(const ClusterView& cluster, const std::shared_ptr<CycleState>& state,
                     const std::shared_ptr<const PodInfo>& pod, StatusCallback done) {
  auto* changes = state->readMutable<PodChanges>(kPodChangesKey);
  if (changes == nullptr || changes->empty() || changes->applied || pod->reserve_pod) {
    done(Status::success());
    return;
  }
  changes->applied = true;
  // The scheduler's own annotations ride on the Binding (ClusterView::bindPod carries those of
  // the assumed pod, which has the changes applied): one write fewer per pod, and none where
  // the pod could be seen annotated but unbound.
  bool owned_only = true;
  for (const auto& [key, value] : changes->annotations()) {
    owned_only = owned_only && std::find(std::begin(apis::kSchedulerOwnedPodAnnotations),
                                         std::end(apis::kSchedulerOwnedPodAnnotations),
                                         key) != std::end(apis::kSchedulerOwnedPodAnnotations);
  }
  if (owned_only) {
    done(Status::success());
    return;
  }
  cluster.patchPod(pod, changes->mergePatch(*pod),
                   [done = std::move(done)](kube::Expected<void> r) {
                     done(r ? Status::success() : Status::error(r.error().message));
                   });
}

}  // namespace koord::roles::scheduler
