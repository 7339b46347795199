// The PodGroup projection and its status patch: a full group decodes field by field, a bare one
// takes the vendored type's zero values, every bad field is refused by its path, and the patch
// is the merge patch Koordinator's controller sends.
#include "koord/apis/pod_group.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include <fmt/format.h>

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

kube::Expected<PodGroup> decode(std::string_view text) {
  return decodePodGroup(json::parse(text));
}

const char* const kFullGroup = R"({
  "apiVersion": "scheduling.sigs.k8s.io/v1alpha1", "kind": "PodGroup",
  "metadata": {
    "namespace": "team-a", "name": "train", "uid": "pg-uid", "resourceVersion": "12",
    "labels": {"app": "train"},
    "annotations": {"gang.scheduling.koordinator.sh/mode": "NonStrict"},
    "creationTimestamp": "2024-05-01T10:00:00Z", "deletionTimestamp": "2024-05-01T11:00:00Z"
  },
  "spec": {"minMember": 4, "minResources": {"cpu": "8", "memory": "16Gi", "nvidia.com/gpu": 4},
           "scheduleTimeoutSeconds": 30},
  "status": {"phase": "Scheduling", "occupiedBy": "team-a/train-job", "scheduled": 2,
             "running": 1, "succeeded": 0, "failed": 1,
             "scheduleStartTime": "2024-05-01T10:00:05Z", "notInTheType": true}
})";

}  // namespace

TEST_CASE("pod group: a full object decodes every field", "[apis][podgroup]") {
  auto g = decode(kFullGroup);
  REQUIRE(g.has_value());
  CHECK(g->namespace_ == "team-a");
  CHECK(g->name == "train");
  CHECK(g->id() == "team-a/train");
  CHECK(g->uid == "pg-uid");
  CHECK(g->resource_version == "12");
  CHECK(g->labels.at("app") == "train");
  CHECK(g->annotations.at("gang.scheduling.koordinator.sh/mode") == "NonStrict");
  CHECK(g->creation_timestamp == at("2024-05-01T10:00:00Z"));
  CHECK(g->terminating);

  CHECK(g->min_member == 4);
  REQUIRE(g->min_resources.has_value());
  CHECK(g->min_resources->size() == 3);
  CHECK(g->min_resources->at("cpu") == kube::Quantity::fromInt(8));
  CHECK(g->min_resources->at("memory").toString() == "16Gi");
  CHECK(g->min_resources->at("nvidia.com/gpu") == kube::Quantity::fromInt(4));
  CHECK(g->schedule_timeout_seconds == 30);
  CHECK(g->waitTime(10min) == 30s);

  CHECK(g->status.phase == PodGroupPhase::kScheduling);
  CHECK(g->status.occupied_by == "team-a/train-job");
  CHECK(g->status.scheduled == 2);
  CHECK(g->status.running == 1);
  CHECK(g->status.succeeded == 0);
  CHECK(g->status.failed == 1);
  CHECK(g->status.schedule_start_time == at("2024-05-01T10:00:05Z"));
}

TEST_CASE("pod group: a bare object takes the zero values", "[apis][podgroup]") {
  auto g = decode(R"({"metadata": {"namespace": "ns", "name": "g"}})");
  REQUIRE(g.has_value());
  CHECK(g->min_member == 0);
  CHECK_FALSE(g->min_resources.has_value());
  CHECK_FALSE(g->schedule_timeout_seconds.has_value());
  CHECK(g->status == PodGroupStatus{});
  CHECK(g->status.phase == PodGroupPhase::kNone);
  CHECK_FALSE(g->terminating);

  // Nulls read as absent; an empty minResources is set, unlike a missing one.
  auto nulls = decode(R"({"spec": {"minMember": null, "minResources": {},
                                   "scheduleTimeoutSeconds": null},
                          "status": {"phase": null, "scheduleStartTime": null}})");
  REQUIRE(nulls.has_value());
  REQUIRE(nulls->min_resources.has_value());
  CHECK(nulls->min_resources->empty());
  CHECK_FALSE(nulls->schedule_timeout_seconds.has_value());
  CHECK(nulls->status.phase == PodGroupPhase::kNone);
  CHECK_FALSE(nulls->status.schedule_start_time.has_value());
}

TEST_CASE("pod group: the wait time is Koordinator's GetWaitTimeDuration", "[apis][podgroup]") {
  PodGroup g;
  CHECK(g.waitTime(600s) == 600s);
  g.schedule_timeout_seconds = 0;
  CHECK(g.waitTime(600s) == 0s);
  g.schedule_timeout_seconds = 90;
  CHECK(g.waitTime(600s) == 90s);
  g.schedule_timeout_seconds = -1;
  CHECK(g.waitTime(600s) == 600s);
}

TEST_CASE("pod group: phases print as the vendored type spells them", "[apis][podgroup]") {
  CHECK(toString(PodGroupPhase::kNone).empty());
  CHECK(toString(PodGroupPhase::kPending) == "Pending");
  CHECK(toString(PodGroupPhase::kPreScheduling) == "PreScheduling");
  CHECK(toString(PodGroupPhase::kScheduling) == "Scheduling");
  CHECK(toString(PodGroupPhase::kScheduled) == "Scheduled");
  CHECK(toString(PodGroupPhase::kRunning) == "Running");
  CHECK(toString(PodGroupPhase::kFinished) == "Finished");
  CHECK(toString(PodGroupPhase::kFailed) == "Failed");
  CHECK(toString(PodGroupPhase::kUnknown) == "Unknown");
  for (std::string_view phase : {"Pending", "PreScheduling", "Scheduling", "Scheduled", "Running",
                                 "Finished", "Failed", "Unknown"}) {
    auto g = decode(fmt::format(R"({{"status": {{"phase": "{}"}}}})", phase));
    REQUIRE(g.has_value());
    CHECK(toString(g->status.phase) == phase);
  }
}

TEST_CASE("pod group: bad objects are refused with the field's path", "[apis][podgroup]") {
  std::string many = "{";
  for (std::size_t i = 0; i <= kMaxPodGroupResourceNames; ++i)
    many += fmt::format("{}\"r{}\": 1", i == 0 ? "" : ",", i);
  many += "}";
  struct Case {
    std::string name;
    std::string object;
    std::string error;
  };
  const Case cases[] = {
      {"not an object", R"([])", "PodGroup: expected object"},
      {"namespace not a string", R"({"metadata": {"namespace": 1}})", "metadata.namespace"},
      {"annotations not a map", R"({"metadata": {"annotations": []}})", "metadata.annotations"},
      {"spec not an object", R"({"spec": 1})", "spec: expected object"},
      {"minMember not an integer", R"({"spec": {"minMember": "4"}})",
       "spec.minMember: expected integer"},
      {"minMember a fraction", R"({"spec": {"minMember": 1.5}})",
       "spec.minMember: expected integer"},
      {"minMember past int32", R"({"spec": {"minMember": 2147483648}})",
       "spec.minMember: 2147483648 overflows int32"},
      {"minResources not a map", R"({"spec": {"minResources": ["cpu"]}})",
       "spec.minResources: expected object"},
      {"bad quantity", R"({"spec": {"minResources": {"cpu": "lots"}}})",
       "spec.minResources[cpu]: "},
      {"too many resources", R"({"spec": {"minResources": )" + many + "}}",
       "spec.minResources: 257 resources, more than the 256 allowed"},
      {"timeout not an integer", R"({"spec": {"scheduleTimeoutSeconds": "30s"}})",
       "spec.scheduleTimeoutSeconds: expected integer"},
      {"status not an object", R"({"status": []})", "status: expected object"},
      {"unknown phase", R"({"status": {"phase": "Done"}})",
       "status.phase: unsupported value \"Done\": supported values: \"Pending\""},
      {"occupiedBy not a string", R"({"status": {"occupiedBy": 1}})",
       "status.occupiedBy: expected string"},
      {"count not an integer", R"({"status": {"running": true}})",
       "status.running: expected integer"},
      {"count past int32", R"({"status": {"failed": -2147483649}})",
       "status.failed: -2147483649 overflows int32"},
      {"bad start time", R"({"status": {"scheduleStartTime": "soon"}})",
       "status.scheduleStartTime"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto r = decode(c.object);
      REQUIRE_FALSE(r.has_value());
      CHECK_THAT(r.error().message, Catch::StartsWith(c.error));
    }
  }
}

TEST_CASE("pod group: the status patch leaves status exactly as given", "[apis][podgroup]") {
  PodGroupStatus s;
  s.phase = PodGroupPhase::kRunning;
  s.occupied_by = "ns/job";
  s.scheduled = 3;
  s.running = 3;
  s.schedule_start_time = at("2024-05-01T10:00:05Z");
  json::value patch = podGroupStatusPatch(s, "41");
  CHECK(patch == json::parse(R"({
    "status": {"phase": "Running", "occupiedBy": "ns/job", "scheduled": 3, "running": 3,
               "succeeded": null, "failed": null, "scheduleStartTime": "2024-05-01T10:00:05Z"},
    "metadata": {"resourceVersion": "41"}})"));

  // Everything zero clears everything; no resource version, no metadata.
  CHECK(podGroupStatusPatch(PodGroupStatus{}) == json::parse(R"({
    "status": {"phase": null, "occupiedBy": null, "scheduled": null, "running": null,
               "succeeded": null, "failed": null, "scheduleStartTime": null}})"));

  // What the patch writes reads back as the same status.
  json::object object{{"metadata", {{"namespace", "ns"}, {"name", "g"}}}};
  object["status"] = patch.at("status");
  // A merge patch's nulls remove members; the decoder reads them as absent alike.
  auto g = decodePodGroup(object);
  REQUIRE(g.has_value());
  CHECK(g->status == s);
}
