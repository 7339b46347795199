// The PodMigrationJob projection and the bodies the MigrationController writes: a full job
// decodes field by field, every bad field is refused by its path, and the status patch, new job
// and Reservation are the JSON Koordinator's controller would send.
#include "koord/apis/pod_migration_job.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "catch_expected.h"
#include "koord/kube/time.h"

using namespace koord::apis;
namespace kube = koord::kube;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

std::chrono::system_clock::time_point at(std::string_view text) {
  return kube::parseTime(text).value();
}

kube::Expected<PodMigrationJob> decode(std::string_view text) {
  return decodePodMigrationJob(json::parse(text));
}

const char* const kFullJob = R"({
  "apiVersion": "scheduling.koordinator.sh/v1alpha1", "kind": "PodMigrationJob",
  "metadata": {
    "name": "6f1c", "uid": "job-uid", "resourceVersion": "77",
    "labels": {"koordinator.sh/evict-policy": "Delete"},
    "annotations": {"koordinator.sh/evict-reason": "hot node",
                    "descheduler.koordinator.sh/passed-arbitration": "true"},
    "creationTimestamp": "2024-05-01T10:00:00Z", "deletionTimestamp": "2024-05-01T10:30:00Z"
  },
  "spec": {
    "paused": true, "ttl": "5m", "mode": "EvictDirectly",
    "podRef": {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": "web-0",
               "uid": "pod-uid", "resourceVersion": "1", "fieldPath": ""},
    "reservationOptions": {
      "reservationRef": {"kind": "Reservation", "apiVersion": "v1alpha1", "name": "r1",
                         "uid": "r-uid"},
      "template": {"metadata": {"name": "tmpl"}, "spec": {"ttl": "1h"}},
      "preemptionOptions": {}
    },
    "deleteOptions": {"gracePeriodSeconds": 30, "preconditions": {"uid": "pod-uid",
                      "resourceVersion": "9"}, "orphanDependents": false,
                      "propagationPolicy": "Foreground", "dryRun": ["All"]}
  },
  "status": {
    "phase": "Running", "status": "Eviction", "reason": "Evicting", "message": "evicting web-0",
    "conditions": [{"type": "Eviction", "status": "False", "reason": "Evicting",
                    "message": "m", "lastProbeTime": null,
                    "lastTransitionTime": "2024-05-01T10:01:00Z"}],
    "nodeName": "node-b",
    "podRef": {"namespace": "default", "name": "web-1", "uid": "new-uid"},
    "preemptedPodsRef": [{"namespace": "default", "name": "low-0"}],
    "preemptedPodsReservation": [{"namespace": "", "name": "rp", "nodeName": "node-c",
                                  "phase": "Available",
                                  "preemptedPodRef": {"name": "low-0"},
                                  "podsRef": [{"name": "low-1"}]}]
  }
})";

}  // namespace

TEST_CASE("pod migration job: a full object decodes every field", "[apis][podmigrationjob]") {
  auto j = decode(kFullJob);
  REQUIRE(j);
  CHECK(j->name == "6f1c");
  CHECK(j->uid == "job-uid");
  CHECK(j->resource_version == "77");
  CHECK(j->labels.at("koordinator.sh/evict-policy") == "Delete");
  CHECK(j->annotations.at(std::string(kAnnotationEvictReason)) == "hot node");
  CHECK(j->passedArbitration());
  CHECK(j->creation_timestamp == at("2024-05-01T10:00:00Z"));
  CHECK(j->terminating);

  CHECK(j->paused);
  CHECK(j->ttl == std::chrono::nanoseconds(5min));
  CHECK(j->mode == PodMigrationJobMode::kEvictDirectly);
  CHECK(j->effectiveMode(PodMigrationJobMode::kReservationFirst) ==
        PodMigrationJobMode::kEvictDirectly);
  REQUIRE(j->pod_ref);
  CHECK(*j->pod_ref == ObjectReference{"v1", "Pod", "default", "web-0", "pod-uid"});
  CHECK(j->has_reservation_options);
  REQUIRE(j->reservation_ref);
  CHECK(j->reservation_ref->name == "r1");
  CHECK(j->reservation_ref->uid == "r-uid");
  REQUIRE(j->reservation_template);
  CHECK(j->reservation_template->at("metadata").at("name") == "tmpl");
  CHECK(j->preemption_allowed);
  REQUIRE(j->delete_options);
  CHECK(j->delete_options->grace_period_seconds == 30);
  CHECK(j->delete_options->precondition_uid == "pod-uid");
  CHECK(j->delete_options->precondition_resource_version == "9");
  CHECK(j->delete_options->orphan_dependents == false);
  CHECK(j->delete_options->propagation_policy == "Foreground");
  CHECK(j->delete_options->dry_run == std::vector<std::string>{"All"});

  const auto& s = j->status;
  CHECK(s.phase == PodMigrationJobPhase::kRunning);
  CHECK(j->active());
  CHECK(s.status == "Eviction");
  CHECK(s.reason == "Evicting");
  CHECK(s.message == "evicting web-0");
  REQUIRE(s.conditions.size() == 1);
  CHECK(s.conditions[0].type == "Eviction");
  CHECK(s.conditions[0].status == "False");
  CHECK_FALSE(s.conditions[0].last_probe_time);
  CHECK(s.conditions[0].last_transition_time == at("2024-05-01T10:01:00Z"));
  REQUIRE(j->condition(kPodMigrationJobConditionEviction) != nullptr);
  CHECK(j->condition(kPodMigrationJobConditionBoundPodReady) == nullptr);
  CHECK(s.node_name == "node-b");
  REQUIRE(s.pod_ref);
  CHECK(s.pod_ref->name == "web-1");
  REQUIRE(s.preempted_pods_ref.size() == 1);
  CHECK(s.preempted_pods_ref[0].name == "low-0");
  REQUIRE(s.preempted_pods_reservations.size() == 1);
  const auto& r = s.preempted_pods_reservations[0];
  CHECK(r.name == "rp");
  CHECK(r.node_name == "node-c");
  CHECK(r.phase == "Available");
  REQUIRE(r.preempted_pod_ref);
  CHECK(r.preempted_pod_ref->name == "low-0");
  REQUIRE(r.pods_ref.size() == 1);
  CHECK(r.pods_ref[0].name == "low-1");
}

TEST_CASE("pod migration job: absent and empty members take their defaults",
          "[apis][podmigrationjob]") {
  auto j = decode(R"({"metadata": {"name": "j"}, "spec": {"podRef": {"name": "p"}, "mode": "",
                      "reservationOptions": null}, "status": {"phase": ""}})");
  REQUIRE(j);
  CHECK_FALSE(j->paused);
  CHECK_FALSE(j->ttl);
  CHECK_FALSE(j->mode);
  CHECK(j->effectiveMode(PodMigrationJobMode::kReservationFirst) ==
        PodMigrationJobMode::kReservationFirst);
  CHECK_FALSE(j->has_reservation_options);
  CHECK_FALSE(j->reservation_template);
  CHECK_FALSE(j->preemption_allowed);
  CHECK_FALSE(j->delete_options);
  CHECK(j->status.phase == PodMigrationJobPhase::kPending);
  CHECK_FALSE(j->passedArbitration());
  CHECK_FALSE(j->terminating);
}

TEST_CASE("pod migration job: each bad field is refused by its path", "[apis][podmigrationjob]") {
  struct Case {
    const char* json;
    const char* error;
  };
  const Case cases[] = {
      {R"([])", "PodMigrationJob: expected object"},
      {R"({"metadata": {"name": 1}})", "metadata.name"},
      {R"({"metadata": {"creationTimestamp": "yesterday"}})", "metadata.creationTimestamp"},
      {R"({"spec": []})", "spec: expected object"},
      {R"({"spec": {"paused": "yes"}})", "spec.paused"},
      {R"({"spec": {"ttl": 300}})", "spec.ttl: expected duration string"},
      {R"({"spec": {"ttl": "5 minutes"}})", "spec.ttl: invalid duration"},
      {R"({"spec": {"mode": "Teleport"}})", R"(spec.mode: unsupported value "Teleport")"},
      {R"({"spec": {"mode": 1}})", "spec.mode"},
      {R"({"spec": {"podRef": "web-0"}})", "spec.podRef: expected object"},
      {R"({"spec": {"podRef": {"uid": 7}}})", "spec.podRef.uid"},
      {R"({"spec": {"reservationOptions": 1}})", "spec.reservationOptions: expected object"},
      {R"({"spec": {"reservationOptions": {"reservationRef": {"name": false}}}})",
       "spec.reservationOptions.reservationRef.name"},
      {R"({"spec": {"reservationOptions": {"template": "r"}}})",
       "spec.reservationOptions.template"},
      {R"({"spec": {"reservationOptions": {"preemptionOptions": []}}})",
       "spec.reservationOptions.preemptionOptions"},
      {R"({"spec": {"deleteOptions": []}})", "spec.deleteOptions: expected object"},
      {R"({"spec": {"deleteOptions": {"gracePeriodSeconds": "30"}}})",
       "spec.deleteOptions.gracePeriodSeconds"},
      {R"({"spec": {"deleteOptions": {"preconditions": {"uid": 1}}}})",
       "spec.deleteOptions.preconditions.uid"},
      {R"({"spec": {"deleteOptions": {"orphanDependents": "no"}}})",
       "spec.deleteOptions.orphanDependents"},
      {R"({"spec": {"deleteOptions": {"propagationPolicy": "Sideways"}}})",
       "spec.deleteOptions.propagationPolicy: unsupported value"},
      {R"({"spec": {"deleteOptions": {"dryRun": [1]}}})", "spec.deleteOptions.dryRun[0]"},
      {R"({"status": 1})", "status: expected object"},
      {R"({"status": {"phase": "Done"}})", R"(status.phase: unsupported value "Done")"},
      {R"({"status": {"reason": 3}})", "status.reason"},
      {R"({"status": {"message": []}})", "status.message"},
      {R"({"status": {"nodeName": {}}})", "status.nodeName"},
      {R"({"status": {"conditions": {}}})", "status.conditions: expected array"},
      {R"({"status": {"conditions": [1]}})", "status.conditions[0]: expected object"},
      {R"({"status": {"conditions": [{"type": 1}]}})", "status.conditions[0].type"},
      {R"({"status": {"conditions": [{"lastTransitionTime": "noon"}]}})",
       "status.conditions[0].lastTransitionTime"},
      {R"({"status": {"podRef": {"name": 1}}})", "status.podRef.name"},
      {R"({"status": {"preemptedPodsRef": [{}, {"kind": 2}]}})", "status.preemptedPodsRef[1].kind"},
      {R"({"status": {"preemptedPodsReservation": [{"phase": 1}]}})",
       "status.preemptedPodsReservation[0].phase"},
      {R"({"status": {"preemptedPodsReservation": [{"preemptedPodRef": 1}]}})",
       "status.preemptedPodsReservation[0].preemptedPodRef"},
      {R"({"status": {"preemptedPodsReservation": [{"podsRef": [{"uid": []}]}]}})",
       "status.preemptedPodsReservation[0].podsRef[0].uid"},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    auto j = decode(c.json);
    REQUIRE_FALSE(j);
    CHECK_THAT(j.error().message, Catch::Contains(c.error));
  }
}

TEST_CASE("pod migration job: lists longer than the bound are refused", "[apis][podmigrationjob]") {
  json::array conditions;
  for (std::size_t i = 0; i <= kMaxPodMigrationJobListItems; ++i)
    conditions.push_back(json::object{{"type", "Eviction"}});
  auto j = decodePodMigrationJob(json::object{{"status", {{"conditions", conditions}}}});
  REQUIRE_FALSE(j);
  CHECK_THAT(j.error().message,
             Catch::Contains("status.conditions") && Catch::Contains("more than the"));
}

TEST_CASE("pod migration job: the status patch makes status exactly what was given",
          "[apis][podmigrationjob]") {
  PodMigrationJobStatus s;
  s.phase = PodMigrationJobPhase::kFailed;
  s.reason = std::string(kPodMigrationJobReasonTimeout);
  s.message = "Abort job caused by timeout";
  s.conditions.push_back(
      {"Eviction", "True", "EvictComplete", "", std::nullopt, at("2024-05-01T10:01:00Z")});
  s.pod_ref = ObjectReference{"", "", "default", "web-1", "u"};

  auto patch = podMigrationJobStatusPatch(s, "77");
  auto expected = json::parse(R"({
    "metadata": {"resourceVersion": "77"},
    "status": {
      "phase": "Failed", "status": null, "reason": "Timeout",
      "message": "Abort job caused by timeout",
      "conditions": [{"type": "Eviction", "status": "True", "reason": "EvictComplete",
                      "message": null, "lastProbeTime": null,
                      "lastTransitionTime": "2024-05-01T10:01:00Z"}],
      "nodeName": null, "podRef": {"namespace": "default", "name": "web-1", "uid": "u"},
      "preemptedPodsRef": null, "preemptedPodsReservation": null
    }})");
  CHECK(patch == expected);

  // Without a resourceVersion no precondition is sent; what it decodes back to is the status.
  auto plain = podMigrationJobStatusPatch(s);
  CHECK_FALSE(plain.as_object().contains("metadata"));
  auto back = decodePodMigrationJob(plain);
  REQUIRE(back);
  CHECK(back->status == s);
}

TEST_CASE("pod migration job: a new job is what CreatePodMigrationJob creates",
          "[apis][podmigrationjob]") {
  NewPodMigrationJob n;
  n.name = "0b7d";
  n.pod_namespace = "default";
  n.pod_name = "web-0";
  n.pod_uid = "pod-uid";
  n.mode = PodMigrationJobMode::kReservationFirst;
  n.ttl = 5min;
  DeleteOptions del;
  del.grace_period_seconds = 0;
  n.delete_options = del;
  n.trigger = "LowNodeLoad";
  n.reason = "node is overused";
  n.labels = {{"team", "a"}};
  n.annotations = {{"extra", "1"}};

  auto body = newPodMigrationJobBody(n);
  auto expected = json::parse(R"({
    "apiVersion": "scheduling.koordinator.sh/v1alpha1", "kind": "PodMigrationJob",
    "metadata": {"name": "0b7d", "labels": {"team": "a"},
                 "annotations": {"koordinator.sh/evict-reason": "node is overused",
                                 "koordinator.sh/evict-trigger": "LowNodeLoad", "extra": "1"}},
    "spec": {"podRef": {"namespace": "default", "name": "web-0", "uid": "pod-uid"},
             "mode": "ReservationFirst", "ttl": "5m0s",
             "deleteOptions": {"gracePeriodSeconds": 0}}})");
  CHECK(body == expected);

  auto back = decodePodMigrationJob(body);
  REQUIRE(back);
  CHECK(back->ttl == std::chrono::nanoseconds(5min));
  CHECK(back->delete_options == n.delete_options);
}

namespace {

const char* const kRunningPod = R"({
  "metadata": {"name": "web-0", "namespace": "default", "uid": "pod-uid",
               "resourceVersion": "5", "creationTimestamp": "2024-05-01T09:00:00Z",
               "labels": {"app": "web"}, "annotations": {"a": "b"},
               "ownerReferences": [
                 {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "cm-uid"},
                 {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-rs",
                  "uid": "rs-uid", "controller": true, "blockOwnerDeletion": true}]},
  "spec": {"nodeName": "node-a", "schedulerName": "koord-scheduler",
           "containers": [{"name": "c", "image": "nginx"}],
           "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "d"}},
                       {"name": "tmp", "emptyDir": {}}]},
  "status": {"phase": "Running"}
})";

}  // namespace

TEST_CASE("pod migration job: the Reservation for a running pod", "[apis][podmigrationjob]") {
  auto job = decode(R"({"metadata": {"name": "j", "uid": "job-uid"},
                        "spec": {"ttl": "5m", "podRef": {"namespace": "default",
                                                         "name": "web-0"}}})");
  REQUIRE(job);
  const json::value pod = json::parse(kRunningPod);
  const auto now = at("2024-05-01T10:00:00Z");
  auto body = migrationReservationBody({&*job, &pod, now, false});
  REQUIRE(body);
  auto expected = json::parse(R"({
    "apiVersion": "scheduling.koordinator.sh/v1alpha1", "kind": "Reservation",
    "metadata": {"name": "job-uid",
                 "labels": {"app.kubernetes.io/created-by": "koord-descheduler",
                            "scheduling.koordinator.sh/reservation-order": "1714557600000"}},
    "spec": {
      "template": {
        "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"},
                     "annotations": {"a": "b"},
                     "ownerReferences": [
                       {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "cm-uid"},
                       {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-rs",
                        "uid": "rs-uid", "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"schedulerName": "koord-scheduler",
                 "containers": [{"name": "c", "image": "nginx"}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "d"}},
                             {"name": "tmp", "emptyDir": {}}],
                 "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                   {"nodeSelectorTerms": [{"matchFields": [
                     {"key": "metadata.name", "operator": "NotIn", "values": ["node-a"]}]}]}}}}
      },
      "owners": [{"controller": {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": "web-rs", "uid": "rs-uid", "controller": true,
                                 "blockOwnerDeletion": true, "namespace": "default"}}],
      "allocateOnce": true,
      "ttl": "5m0s"
    }})");
  CHECK(*body == expected);

  // The Reservation decodes, and its owners accept a pod of the same ReplicaSet.
  auto r = decodeReservation(*body);
  REQUIRE(r);
  CHECK(r->allocate_once);
  OwnerMatchPod other;
  other.namespace_ = "default";
  other.name = "web-1";
  other.controller_api_version = "apps/v1";
  other.controller_kind = "ReplicaSet";
  other.controller_name = "web-rs";
  other.controller_uid = "rs-uid";
  CHECK(matchesOwners(r->owners, other));

  // The DisablePVCReservation gate drops the claim and keeps the rest.
  auto dropped = migrationReservationBody({&*job, &pod, now, true});
  REQUIRE(dropped);
  CHECK(dropped->at("spec").at("template").at("spec").at("volumes") ==
        json::parse(R"([{"name": "tmp", "emptyDir": {}}])"));
}

TEST_CASE("pod migration job: the Reservation for a pending unschedulable pod",
          "[apis][podmigrationjob]") {
  auto job = decode(R"({"metadata": {"uid": "job-uid"}, "spec": {"podRef": {"name": "p"}}})");
  REQUIRE(job);
  const json::value pod = json::parse(R"({
    "metadata": {"name": "p", "namespace": "ns", "uid": "p-uid",
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                      "name": "rs", "uid": "rs-uid", "controller": true}]},
    "spec": {"containers": []},
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]}
  })");
  auto body = migrationReservationBody({&*job, &pod, {}, false});
  REQUIRE(body);
  CHECK(body->at("spec").at("owners") ==
        json::parse(R"([{"object": {"uid": "p-uid", "name": "p", "namespace": "ns",
                                    "kind": "Pod"}}])"));
  // Not bound to a node: no affinity is added; no ttl on the job, none on the Reservation.
  CHECK_FALSE(body->at("spec").at("template").at("spec").as_object().contains("affinity"));
  CHECK_FALSE(body->at("spec").as_object().contains("ttl"));
}

TEST_CASE("pod migration job: a template wins where it says something", "[apis][podmigrationjob]") {
  auto job = decode(R"({"metadata": {"uid": "job-uid"}, "spec": {
    "ttl": "5m", "podRef": {"name": "web-0"},
    "reservationOptions": {"template": {
      "metadata": {"name": "mine", "labels": {"keep": "me"}},
      "spec": {"expires": "2030-01-01T00:00:00Z", "allocateOnce": false,
               "owners": [{"labelSelector": {"matchLabels": {"app": "web"}}}],
               "template": {"spec": {"nodeName": "x", "affinity": {"nodeAffinity": {
                 "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                   {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                   {"matchFields": [{"key": "metadata.name", "operator": "In",
                                     "values": ["n1"]}]}]}}}}}}}}}})");
  REQUIRE(job);
  const json::value pod = json::parse(kRunningPod);
  auto body = migrationReservationBody({&*job, &pod, {}, false});
  REQUIRE(body);
  const auto& meta = body->at("metadata");
  CHECK(meta.at("name") == "mine");
  CHECK(meta.at("labels").at("keep") == "me");
  CHECK(meta.at("labels").at("app.kubernetes.io/created-by") == "koord-descheduler");
  const auto& spec = body->at("spec");
  CHECK(spec.at("owners") ==
        json::parse(R"([{"labelSelector": {"matchLabels": {"app": "web"}}}])"));
  CHECK(spec.at("allocateOnce") == true);
  CHECK_FALSE(spec.as_object().contains("ttl"));  // expires is set
  const auto& tspec = spec.at("template").at("spec");
  CHECK_FALSE(tspec.as_object().contains("nodeName"));
  CHECK(tspec.at("affinity")
            .at("nodeAffinity")
            .at("requiredDuringSchedulingIgnoredDuringExecution") ==
        json::parse(R"({"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
           "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-a"]}]},
          {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]},
                           {"key": "metadata.name", "operator": "NotIn",
                            "values": ["node-a"]}]}]})"));
}

TEST_CASE("pod migration job: a Reservation nobody could own, or a bad input, is an error",
          "[apis][podmigrationjob]") {
  auto job = decode(R"({"metadata": {"uid": "u"}, "spec": {"podRef": {"name": "p"}}})");
  REQUIRE(job);
  struct Case {
    const char* pod;
    const char* error;
  };
  const Case cases[] = {
      {R"({"metadata": {"name": "bare"}, "spec": {}, "status": {"phase": "Running"}})", "no owner"},
      {R"({"metadata": {"ownerReferences": [{"kind": "ReplicaSet", "controller": "yes"}]}})",
       "controller"},
      {R"({"spec": "x"})", "pod.spec"},
      {R"({"spec": {"nodeName": 5}})", "pod.spec.nodeName"},
      {R"({"status": {"phase": 1}})", "pod.status.phase"},
      {R"([])", "pod: expected object"},
  };
  for (const auto& c : cases) {
    INFO(c.pod);
    const json::value pod = json::parse(c.pod);
    auto body = migrationReservationBody({&*job, &pod, {}, false});
    REQUIRE_FALSE(body);
    CHECK_THAT(body.error().message, Catch::Contains(c.error));
  }
}

TEST_CASE("pod migration job: enum spellings and the reservation reference",
          "[apis][podmigrationjob]") {
  CHECK(toString(PodMigrationJobMode::kEvictDirectly) == "EvictDirectly");
  CHECK(toString(PodMigrationJobPhase::kAborted) == "Aborted");
  CHECK(podMigrationJobModeByName("ReservationFirst") == PodMigrationJobMode::kReservationFirst);
  CHECK_FALSE(podMigrationJobModeByName(""));
  CHECK_FALSE(podMigrationJobModeByName("reservationfirst"));
  CHECK(toJson(reservationRefFor("r", "u")) ==
        json::parse(R"({"apiVersion": "v1alpha1", "kind": "Reservation", "name": "r",
                        "uid": "u"})"));
}
