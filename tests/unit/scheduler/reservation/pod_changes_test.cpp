// The cycle's pod changes: applied to the assumed pod, sent once, and the scheduler's own
// annotations carried by the Binding rather than a patch of their own.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "fixture.h"
#include "framework/pod_changes.h"
#include "kube_scheduler_api.h"

using namespace reservation_test;

namespace {

struct PatchRecorder final : ClusterView {
  void patchPod(std::shared_ptr<const PodInfo> pod, boost::json::value patch,
                ApiCallback done) const override {
    patches.push_back(pod->key() + " " + boost::json::serialize(patch));
    done({});
  }
  mutable std::vector<std::string> patches;
};

Status apply(const ClusterView& cluster, const std::shared_ptr<CycleState>& state,
             const std::shared_ptr<const PodInfo>& pod) {
  Status out = Status::error("not answered");
  applyPodChanges(cluster, state, pod, [&](Status s) { out = std::move(s); });
  return out;
}

}  // namespace

TEST_CASE("the scheduler's own annotations ride on the Binding, others go as one patch") {
  PatchRecorder cluster;
  auto p = owner("web-1", 1000);
  auto state = std::make_shared<CycleState>();
  CHECK(apply(cluster, state, p).ok());  // no changes: nothing sent

  podChanges(*state).setAnnotation(apis::kAnnotationReservationAllocated,
                                   apis::reservationAllocatedValue("r1", "uid-r1"));
  podChanges(*state).applyTo(*p);
  CHECK(p->reservation_uid == "uid-r1");
  CHECK(apply(cluster, state, p).ok());
  CHECK(cluster.patches.empty());
  auto binding = koord::roles::scheduler::bindingBody(*p, "n1");
  CHECK(binding.at("metadata").at("annotations").at(apis::kAnnotationReservationAllocated) ==
        R"({"name":"r1","uid":"uid-r1"})");

  auto other = std::make_shared<CycleState>();
  podChanges(*other).setAnnotation("example.com/note", "x");
  CHECK(apply(cluster, other, p).ok());
  REQUIRE(cluster.patches.size() == 1);
  CHECK(cluster.patches[0] ==
        R"(default/web-1 {"metadata":{"uid":"uid-web-1","annotations":{"example.com/note":"x"}}})");
  CHECK(apply(cluster, other, p).ok());  // sent once
  CHECK(cluster.patches.size() == 1);

  // Without an API client the patch fails, and so does the binding cycle.
  auto failing = std::make_shared<CycleState>();
  podChanges(*failing).setAnnotation("example.com/note", "y");
  CHECK_FALSE(apply(ClusterView{}, failing, p).ok());
}
