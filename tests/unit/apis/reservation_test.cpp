// The Reservation projection and the reservation annotations: what Koordinator writes decodes
// field by field, bad input is refused with the field's path, and the matchers (owners,
// reservation affinity) accept what Koordinator's accept.
#include "koord/apis/reservation.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include <fmt/format.h>

#include "catch_expected.h"
#include "koord/apis/input_limits.h"
#include "koord/kube/time.h"

using namespace koord::apis;
namespace kube = koord::kube;
namespace json = boost::json;
using std::chrono::hours;

namespace {

std::chrono::system_clock::time_point at(std::string_view text) {
  return kube::parseTime(text).value();
}

kube::Quantity q(std::string_view text) {
  return kube::Quantity::parse(text).value();
}

kube::Expected<Reservation> decode(std::string_view text) {
  return decodeReservation(json::parse(text));
}

/// A reservation whose only content is `owners` (a JSON array).
std::vector<ReservationOwner> ownersOf(const std::string& owners) {
  auto r = decode(R"({"spec": {"owners": )" + owners + "}}");
  REQUIRE(r);
  return r->owners;
}

kube::Labels annotated(std::string_view key, std::string_view value) {
  return kube::Labels{{std::string(key), std::string(value)}};
}

}  // namespace

TEST_CASE("reservation: a full object decodes every field", "[apis][reservation]") {
  auto r = decode(R"({
    "apiVersion": "scheduling.koordinator.sh/v1alpha1", "kind": "Reservation",
    "metadata": {
      "name": "reserve-web", "uid": "0d8e-1", "resourceVersion": "812",
      "labels": {"pool": "web"}, "creationTimestamp": "2024-05-01T10:00:00Z",
      "deletionTimestamp": "2024-05-01T11:00:00Z"
    },
    "spec": {
      "template": {"metadata": {"namespace": "default"},
                   "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}},
      "owners": [
        {"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": "web-0",
                    "uid": "p-1", "fieldPath": "ignored"}},
        {"controller": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                        "uid": "c-1", "controller": true, "namespace": "default"},
         "labelSelector": {"matchLabels": {"app": "web"},
                           "matchExpressions": [{"key": "tier", "operator": "In",
                                                 "values": ["front"]}]}}
      ],
      "ttl": "1h30m", "expires": "2024-05-02T10:00:00Z", "preAllocation": true,
      "allocateOnce": false, "allocatePolicy": "Restricted", "unschedulable": true,
      "taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}]
    },
    "status": {
      "phase": "Available", "nodeName": "node-1",
      "conditions": [
        {"type": "Scheduled", "status": "True", "reason": "Scheduled", "message": "ok",
         "lastProbeTime": "2024-05-01T10:00:01Z", "lastTransitionTime": "2024-05-01T10:00:02Z"},
        {"type": "Ready", "status": "True", "reason": "Available"}
      ],
      "currentOwners": [{"namespace": "default", "name": "web-0", "uid": "p-1"}],
      "allocatable": {"cpu": "2", "memory": "4Gi"},
      "allocated": {"cpu": "500m"}
    }
  })");
  REQUIRE(r);
  CHECK(r->name == "reserve-web");
  CHECK(r->uid == "0d8e-1");
  CHECK(r->resource_version == "812");
  CHECK(r->labels == kube::Labels{{"pool", "web"}});
  CHECK(r->creation_timestamp == at("2024-05-01T10:00:00Z"));
  CHECK(r->terminating);

  REQUIRE(r->pod_template);
  CHECK(r->pod_template->at_pointer("/spec/containers/0/name").as_string() == "c");
  REQUIRE(r->owners.size() == 2);
  CHECK(r->owners[0].object == ObjectReference{"v1", "Pod", "default", "web-0", "p-1"});
  CHECK_FALSE(r->owners[0].controller);
  CHECK_FALSE(r->owners[0].selector);
  CHECK(r->owners[1].controller ==
        ReservationControllerReference{"apps/v1", "StatefulSet", "web", "c-1", true, "default"});
  REQUIRE(r->owners[1].label_selector);
  CHECK(r->owners[1].label_selector->match_labels == kube::Labels{{"app", "web"}});
  REQUIRE(r->owners[1].selector);
  CHECK(r->owners[1].selector->toString() == "app=web,tier in (front)");
  CHECK(r->ttl == std::chrono::minutes(90));
  CHECK(r->expires == at("2024-05-02T10:00:00Z"));
  CHECK(r->pre_allocation);
  CHECK_FALSE(r->allocate_once);
  CHECK(r->allocate_policy == ReservationAllocatePolicy::kRestricted);
  CHECK(r->unschedulable);
  CHECK(r->taints ==
        std::vector<kube::Taint>{{"dedicated", "web", kube::TaintEffect::kNoSchedule}});

  CHECK(r->phase == ReservationPhase::kAvailable);
  CHECK(r->node_name == "node-1");
  CHECK(r->available());
  CHECK_FALSE(r->finished());
  REQUIRE(r->conditions.size() == 2);
  CHECK(r->conditions[0].type == kReservationConditionScheduled);
  CHECK(r->conditions[0].status == "True");
  CHECK(r->conditions[0].reason == kReasonReservationScheduled);
  CHECK(r->conditions[0].message == "ok");
  CHECK(r->conditions[0].last_probe_time == at("2024-05-01T10:00:01Z"));
  CHECK(r->conditions[0].last_transition_time == at("2024-05-01T10:00:02Z"));
  CHECK_FALSE(r->conditions[1].last_probe_time);
  CHECK(r->current_owners == std::vector<ObjectReference>{{"", "", "default", "web-0", "p-1"}});
  CHECK(r->allocatable == kube::ResourceList{{"cpu", q("2")}, {"memory", q("4Gi")}});
  CHECK(r->allocated == kube::ResourceList{{"cpu", q("500m")}});
  // Both deadlines set: the earlier (creation + 90 min) wins.
  CHECK(r->expiry() == at("2024-05-01T11:30:00Z"));
}

TEST_CASE("reservation: defaults and expiry", "[apis][reservation]") {
  auto bare = decode(R"({"metadata": {"name": "r", "creationTimestamp": "2024-05-01T10:00:00Z"},
                         "status": {"phase": ""}})");
  REQUIRE(bare);
  CHECK(bare->allocate_once);
  CHECK(bare->phase == ReservationPhase::kPending);
  CHECK(bare->allocate_policy == ReservationAllocatePolicy::kDefault);
  CHECK_FALSE(bare->pod_template);
  CHECK_FALSE(bare->terminating);
  CHECK_FALSE(bare->available());
  CHECK(bare->owners.empty());
  CHECK(bare->expiry() == at("2024-05-01T10:00:00Z") + kDefaultReservationTTL);

  struct Case {
    const char* name;
    const char* spec;
    std::optional<std::string> expiry;
  };
  const Case cases[] = {
      {"ttl 0 never expires", R"({"ttl": "0s"})", std::nullopt},
      {"ttl 0 wins over expires", R"({"ttl": "0s", "expires": "2024-05-01T12:00:00Z"})",
       std::nullopt},
      {"ttl", R"({"ttl": "2h"})", "2024-05-01T12:00:00Z"},
      {"expires alone", R"({"expires": "2024-06-01T00:00:00Z"})", "2024-06-01T00:00:00Z"},
      {"expires before the ttl", R"({"ttl": "48h", "expires": "2024-05-01T11:00:00Z"})",
       "2024-05-01T11:00:00Z"},
      {"null fields are absent", R"({"ttl": null, "expires": null, "allocateOnce": null})",
       "2024-05-02T10:00:00Z"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto r = decode(fmt::format(R"({{"metadata": {{"creationTimestamp": "2024-05-01T10:00:00Z"}},
                          "spec": {}}})",
                                  c.spec));
      REQUIRE(r);
      if (c.expiry)
        CHECK(r->expiry() == at(*c.expiry));
      else
        CHECK_FALSE(r->expiry());
      CHECK(r->allocate_once);
    }
  }

  SECTION("a ttl of centuries saturates instead of wrapping") {
    auto r = decode(R"({"metadata": {"creationTimestamp": "2024-05-01T10:00:00Z"},
                        "spec": {"ttl": "2562047h"}})");
    REQUIRE(r);
    CHECK(r->expiry() == std::chrono::system_clock::time_point::max());
  }
}

TEST_CASE("reservation: enums print as the API spells them", "[apis][reservation]") {
  CHECK(toString(ReservationPhase::kPending) == "Pending");
  CHECK(toString(ReservationPhase::kAvailable) == "Available");
  CHECK(toString(ReservationPhase::kSucceeded) == "Succeeded");
  CHECK(toString(ReservationPhase::kWaiting) == "Waiting");
  CHECK(toString(ReservationPhase::kFailed) == "Failed");
  CHECK(toString(ReservationAllocatePolicy::kDefault) == "");
  CHECK(toString(ReservationAllocatePolicy::kAligned) == "Aligned");
  CHECK(toString(ReservationAllocatePolicy::kRestricted) == "Restricted");
  for (auto phase : {ReservationPhase::kSucceeded, ReservationPhase::kFailed}) {
    Reservation r;
    r.phase = phase;
    CHECK(r.finished());
  }
}

TEST_CASE("reservation: bad objects are refused with the field's path", "[apis][reservation]") {
  std::string many_owners = "[";
  for (int i = 0; i <= static_cast<int>(kMaxReservationOwners); ++i)
    many_owners += i == 0 ? "{}" : ",{}";
  many_owners += "]";
  struct Case {
    std::string name;
    std::string object;
    std::string error;
  };
  const Case cases[] = {
      {"not an object", R"([])", "Reservation: expected object"},
      {"labels not a map", R"({"metadata": {"labels": []}})", "metadata.labels"},
      {"bad creation time", R"({"metadata": {"creationTimestamp": "yesterday"}})",
       "metadata.creationTimestamp"},
      {"spec not an object", R"({"spec": "x"})", "spec: expected object"},
      {"template not an object", R"({"spec": {"template": []}})", "spec.template: expected object"},
      {"owners not a list", R"({"spec": {"owners": {}}})", "spec.owners: expected array"},
      {"owner not an object", R"({"spec": {"owners": [1]}})", "spec.owners[0]: expected object"},
      {"too many owners", R"({"spec": {"owners": )" + many_owners + "}}",
       "spec.owners: 257 items, more than the 256 allowed"},
      {"object uid not a string", R"({"spec": {"owners": [{"object": {"uid": 7}}]}})",
       "spec.owners[0].object.uid: expected string"},
      {"controller flag not a boolean",
       R"({"spec": {"owners": [{"controller": {"controller": "yes"}}]}})",
       "spec.owners[0].controller.controller: expected boolean"},
      {"bad selector operator",
       R"({"spec": {"owners": [{}, {"labelSelector": {"matchExpressions":
           [{"key": "a", "operator": "Near"}]}}]}})",
       "spec.owners[1].labelSelector.matchExpressions[0].operator: unsupported value \"Near\""},
      {"bad selector key",
       R"({"spec": {"owners": [{"labelSelector": {"matchLabels": {"a b": "c"}}}]}})",
       "spec.owners[0].labelSelector: "},
      {"ttl not a string", R"({"spec": {"ttl": 60}})", "spec.ttl: expected duration string"},
      {"bad ttl", R"({"spec": {"ttl": "1 day"}})", "spec.ttl: invalid duration \"1 day\""},
      {"bad expires", R"({"spec": {"expires": "soon"}})", "spec.expires"},
      {"allocateOnce not a boolean", R"({"spec": {"allocateOnce": "true"}})",
       "spec.allocateOnce: expected boolean"},
      {"bad allocatePolicy", R"({"spec": {"allocatePolicy": "Loose"}})",
       "spec.allocatePolicy: unsupported value \"Loose\": supported values: \"Aligned\", "
       "\"Restricted\""},
      {"bad taint effect", R"({"spec": {"taints": [{"key": "a", "effect": "Never"}]}})",
       "spec.taints[0].effect: unsupported value \"Never\""},
      {"bad phase", R"({"status": {"phase": "Running"}})",
       "status.phase: unsupported value \"Running\""},
      {"phase not a string", R"({"status": {"phase": 1}})", "status.phase: expected string"},
      {"bad condition time",
       R"({"status": {"conditions": [{"type": "Ready", "lastTransitionTime": "now"}]}})",
       "status.conditions[0].lastTransitionTime"},
      {"current owner not an object", R"({"status": {"currentOwners": ["p"]}})",
       "status.currentOwners[0]: expected object"},
      {"bad quantity", R"({"status": {"allocatable": {"cpu": "two"}}})",
       "status.allocatable[cpu]: "},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto r = decode(c.object);
      REQUIRE_FALSE(r);
      CHECK_THAT(r.error().message, Catch::StartsWith(c.error));
    }
  }
}

TEST_CASE("reservation: owners match as Koordinator's MatchReservationOwners",
          "[apis][reservation]") {
  const kube::Labels labels{{"app", "web"}, {"tier", "front"}};
  OwnerMatchPod pod{.namespace_ = "default",
                    .name = "web-0",
                    .uid = "p-1",
                    .labels = &labels,
                    .controller_api_version = "apps/v1",
                    .controller_kind = "StatefulSet",
                    .controller_name = "web",
                    .controller_uid = "c-1"};
  struct Case {
    const char* name;
    const char* owners;
    bool matches;
  };
  const Case cases[] = {
      {"no owners", "[]", false},
      {"an empty owner matches every pod", "[{}]", true},
      {"object by uid", R"([{"object": {"uid": "p-1"}}])", true},
      {"object by other uid", R"([{"object": {"uid": "p-2"}}])", false},
      {"object by name and namespace", R"([{"object": {"name": "web-0", "namespace": "default"}}])",
       true},
      {"object in another namespace", R"([{"object": {"name": "web-0", "namespace": "kube"}}])",
       false},
      {"object kind is not compared", R"([{"object": {"kind": "Deployment", "uid": "p-1"}}])",
       true},
      {"object apiVersion v1", R"([{"object": {"apiVersion": "v1", "uid": "p-1"}}])", true},
      {"object apiVersion of another group", R"([{"object": {"apiVersion": "apps/v1"}}])", false},
      {"controller by uid", R"([{"controller": {"uid": "c-1"}}])", true},
      {"controller by kind and name",
       R"([{"controller": {"kind": "StatefulSet", "name": "web", "apiVersion": "apps/v1"}}])",
       true},
      {"controller of another kind", R"([{"controller": {"kind": "ReplicaSet", "name": "web"}}])",
       false},
      {"controller by other name", R"([{"controller": {"name": "api"}}])", false},
      {"controller in the pod's namespace",
       R"([{"controller": {"name": "web", "namespace": "default"}}])", true},
      {"controller in another namespace",
       R"([{"controller": {"name": "web", "namespace": "kube"}}])", false},
      {"controller flag true", R"([{"controller": {"uid": "c-1", "controller": true}}])", true},
      {"controller flag false", R"([{"controller": {"uid": "c-1", "controller": false}}])", false},
      {"labelSelector matching", R"([{"labelSelector": {"matchLabels": {"app": "web"}}}])", true},
      {"labelSelector not matching", R"([{"labelSelector": {"matchLabels": {"app": "api"}}}])",
       false},
      {"labelSelector by expression",
       R"([{"labelSelector": {"matchExpressions": [{"key": "tier", "operator": "NotIn",
                                                    "values": ["back"]}]}}])",
       true},
      {"AND within an owner: one part fails",
       R"([{"object": {"name": "web-0"}, "labelSelector": {"matchLabels": {"app": "api"}}}])",
       false},
      {"AND within an owner: all parts pass",
       R"([{"object": {"name": "web-0"}, "controller": {"uid": "c-1"},
            "labelSelector": {"matchLabels": {"app": "web"}}}])",
       true},
      {"OR across owners",
       R"([{"object": {"name": "other"}}, {"labelSelector": {"matchLabels": {"app": "web"}}}])",
       true},
      {"no owner matches", R"([{"object": {"name": "other"}}, {"controller": {"uid": "c-9"}}])",
       false},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      CHECK(matchesOwners(ownersOf(c.owners), pod) == c.matches);
    }
  }

  SECTION("a pod without a controller matches no controller owner") {
    OwnerMatchPod bare;
    bare.namespace_ = "default";
    bare.name = "web-0";
    bare.uid = "p-1";
    CHECK_FALSE(matchesOwners(ownersOf(R"([{"controller": {"namespace": "default"}}])"), bare));
    // No labels reads as the empty set.
    CHECK(matchesOwners(ownersOf(R"([{"labelSelector": {"matchExpressions": [{"key": "app",
                                                               "operator": "DoesNotExist"}]}}])"),
                        bare));
  }
}

TEST_CASE("reservation: affinity accepts reservations as Koordinator does", "[apis][reservation]") {
  Reservation plain;
  plain.name = "r1";
  plain.labels = {{"pool", "a"}};
  Reservation tainted = plain;
  tainted.taints = {{"dedicated", "gpu", kube::TaintEffect::kNoSchedule},
                    {"soft", "", kube::TaintEffect::kPreferNoSchedule}};

  struct Case {
    const char* name;
    const char* affinity;
    bool plain;
    bool tainted;
  };
  const Case cases[] = {
      {"empty value accepts any untainted reservation", "", true, false},
      {"null is the empty affinity", "null", true, false},
      {"name", R"({"name": "r1"})", true, true},
      {"other name", R"({"name": "r2", "reservationSelector": {"pool": "a"}})", false, false},
      {"selector", R"({"reservationSelector": {"pool": "a"}})", true, false},
      {"selector not matching", R"({"reservationSelector": {"pool": "a", "zone": "z"}})", false,
       false},
      {"required expression",
       R"({"requiredDuringSchedulingIgnoredDuringExecution": {"reservationSelectorTerms": [
           {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a", "b"]}]}]}})",
       true, false},
      {"required expression not matching",
       R"({"requiredDuringSchedulingIgnoredDuringExecution": {"reservationSelectorTerms": [
           {"matchExpressions": [{"key": "pool", "operator": "NotIn", "values": ["a"]}]}]}})",
       false, false},
      {"terms are ORed",
       R"({"requiredDuringSchedulingIgnoredDuringExecution": {"reservationSelectorTerms": [
           {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["x"]}]},
           {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["r1"]}]}]}})",
       true, false},
      {"name field not matching",
       R"({"requiredDuringSchedulingIgnoredDuringExecution": {"reservationSelectorTerms": [
           {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["r2"]}]}]}})",
       false, false},
      {"required without terms matches nothing",
       R"({"requiredDuringSchedulingIgnoredDuringExecution": {}})", false, false},
      {"toleration of the NoSchedule taint",
       R"({"tolerations": [{"key": "dedicated", "operator": "Exists"}]})", true, true},
      {"toleration of another value",
       R"({"tolerations": [{"key": "dedicated", "value": "cpu", "effect": "NoSchedule"}]})", true,
       false},
      {"unknown fields are ignored", R"({"future": 1, "reservationSelector": null})", true, false},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto a = reservationAffinity(annotated(kAnnotationReservationAffinity, c.affinity));
      REQUIRE(a);
      REQUIRE(*a);
      CHECK((*a)->matches(plain) == c.plain);
      CHECK((*a)->matches(tainted) == c.tainted);
    }
  }

  SECTION("no annotation") {
    auto a = reservationAffinity(kube::Labels{{"other", "x"}});
    REQUIRE(a);
    CHECK_FALSE(*a);
  }

  SECTION("the node's labels, overlaid by the reservation's") {
    auto a = reservationAffinity(annotated(kAnnotationReservationAffinity,
                                           R"({"reservationSelector": {"zone": "z1",
                                                                       "pool": "a"}})"));
    REQUIRE(a);
    REQUIRE(*a);
    CHECK_FALSE((*a)->matches(plain));
    CHECK((*a)->matches(plain, kube::Labels{{"zone", "z1"}}));
    CHECK_FALSE((*a)->matches(plain, kube::Labels{{"zone", "z2"}}));
    CHECK((*a)->matches(plain, kube::Labels{{"zone", "z1"}, {"pool", "b"}}));
  }

  SECTION("tolerating the unschedulable taint") {
    auto tolerant = reservationAffinity(annotated(
        kAnnotationReservationAffinity,
        R"({"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]})"));
    REQUIRE(tolerant);
    CHECK((*tolerant)->toleratesUnschedulable());
    auto strict = reservationAffinity(annotated(kAnnotationReservationAffinity, "{}"));
    REQUIRE(strict);
    CHECK_FALSE((*strict)->toleratesUnschedulable());
  }
}

TEST_CASE("reservation: bad affinity annotations name the field", "[apis][reservation]") {
  const std::string key(kAnnotationReservationAffinity);
  struct Case {
    const char* name;
    const char* value;
    std::string error;
  };
  const Case cases[] = {
      {"not JSON", "{", key + ": not JSON"},
      {"not an object", "[]", key + ": expected object, got array"},
      {"name not a string", R"({"name": 1})", key + ": name: expected string"},
      {"selector not a map", R"({"reservationSelector": ["a"]})", key + ": reservationSelector"},
      {"bad toleration operator", R"({"tolerations": [{"operator": "Maybe"}]})",
       key + ": tolerations[0].operator: unsupported value \"Maybe\""},
      {"bad term operator",
       R"({"requiredDuringSchedulingIgnoredDuringExecution": {"reservationSelectorTerms": [
           {"matchExpressions": [{"key": "a", "operator": "Near"}]}]}})",
       key + ": requiredDuringSchedulingIgnoredDuringExecution.reservationSelectorTerms[0]"
             ".matchExpressions[0].operator: unsupported value \"Near\""},
      {"invalid requirement",
       R"({"requiredDuringSchedulingIgnoredDuringExecution": {"reservationSelectorTerms": [
           {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]}]}})",
       key + ": requiredDuringSchedulingIgnoredDuringExecution.reservationSelectorTerms[0]"
             ".matchExpressions[0]"},
      {"field with an unsupported operator",
       R"({"requiredDuringSchedulingIgnoredDuringExecution": {"reservationSelectorTerms": [
           {"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}]}})",
       key + ": requiredDuringSchedulingIgnoredDuringExecution.reservationSelectorTerms[0]"
             ".matchFields[0].operator"},
      {"field with two values",
       R"({"requiredDuringSchedulingIgnoredDuringExecution": {"reservationSelectorTerms": [
           {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]}})",
       key + ": requiredDuringSchedulingIgnoredDuringExecution.reservationSelectorTerms[0]"
             ".matchFields[0].values: must have one element"},
      {"terms not a list",
       R"({"requiredDuringSchedulingIgnoredDuringExecution": {"reservationSelectorTerms": 1}})",
       key + ": requiredDuringSchedulingIgnoredDuringExecution.reservationSelectorTerms: expected "
             "array"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto a = reservationAffinity(annotated(kAnnotationReservationAffinity, c.value));
      REQUIRE_FALSE(a);
      CHECK_THAT(a.error().message, Catch::StartsWith(c.error));
    }
  }
}

TEST_CASE("reservation: the reservation-allocated annotation", "[apis][reservation]") {
  const std::string key = "scheduling.koordinator.sh/reservation-allocated";
  CHECK(reservationAllocatedValue("r1", "0d8e-1") == R"({"name":"r1","uid":"0d8e-1"})");
  CHECK(reservationAllocatedValue("", "u") == R"({"uid":"u"})");

  SECTION("round trip, escaping included") {
    const std::string odd = "a\"b\\c\n";
    auto back = reservationAllocated(annotated(key, reservationAllocatedValue(odd, "u-1")));
    REQUIRE(back);
    REQUIRE(*back);
    CHECK((*back)->name == odd);
    CHECK((*back)->uid == "u-1");
  }
  SECTION("absent") {
    auto none = reservationAllocated({});
    REQUIRE(none);
    CHECK_FALSE(*none);
  }
  SECTION("unknown fields are ignored") {
    auto r = reservationAllocated(annotated(key, R"({"name":"r","uid":"u","extra":[1]})"));
    REQUIRE(r);
    CHECK((*r)->name == "r");
  }
  struct Case {
    const char* name;
    std::string value;
    std::string error;
  };
  const Case cases[] = {
      {"empty", "", key + ": expected object, got null"},
      {"not JSON", "r1", key + ": not JSON"},
      {"null", "null", key + ": expected object, got null"},
      {"a list", R"(["r1"])", key + ": expected object, got array"},
      {"name not a string", R"({"name": 1})", key + ": name: expected string"},
      {"uid not a string", R"({"uid": {}})", key + ": uid: expected string"},
      {"too long", std::string(2048, ' '), key + ": 2048 bytes, more than the 1024 allowed"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto r = reservationAllocated(annotated(key, c.value));
      REQUIRE_FALSE(r);
      CHECK_THAT(r.error().message, Catch::StartsWith(c.error));
    }
  }
}

TEST_CASE("reservation: the node reservation annotation", "[apis][reservation]") {
  const std::string key = "node.koordinator.sh/reservation";
  auto parse = [&](std::string_view value) { return nodeReservation(annotated(key, value)); };

  SECTION("resources only") {
    auto n = parse(R"({"resources": {"cpu": "1500m", "memory": "2Gi"}})");
    REQUIRE(n);
    REQUIRE(*n);
    CHECK((*n)->trimsAllocatable());
    CHECK((*n)->reserved_cpus.empty());
    CHECK((*n)->reservedResources() ==
          kube::ResourceList{{"cpu", q("1500m")}, {"memory", q("2Gi")}});
  }
  SECTION("reservedCPUs replace resources' cpu") {
    auto n = parse(R"({"resources": {"cpu": "1", "memory": "1Gi"}, "reservedCPUs": "0-3,8",
                       "applyPolicy": "Default"})");
    REQUIRE(n);
    REQUIRE(*n);
    CHECK((*n)->reserved_cpus == "0-3,8");
    CHECK((*n)->reserved_cpu_ids == std::vector<int>{0, 1, 2, 3, 8});
    CHECK((*n)->trimsAllocatable());
    CHECK((*n)->reservedResources() == kube::ResourceList{{"cpu", q("5")}, {"memory", q("1Gi")}});
  }
  SECTION("ReservedCPUsOnly does not trim") {
    auto n = parse(R"({"reservedCPUs": "2", "applyPolicy": "ReservedCPUsOnly"})");
    REQUIRE(n);
    REQUIRE(*n);
    CHECK((*n)->apply_policy == NodeReservationApplyPolicy::kReservedCPUsOnly);
    CHECK_FALSE((*n)->trimsAllocatable());
    CHECK((*n)->reservedResources() == kube::ResourceList{{"cpu", q("1")}});
  }
  SECTION("absent, empty and null are no reservation") {
    for (const char* value : {"", "null"}) {
      auto n = parse(value);
      REQUIRE(n);
      CHECK_FALSE(*n);
    }
    auto none = nodeReservation({});
    REQUIRE(none);
    CHECK_FALSE(*none);
  }
  struct Case {
    const char* name;
    const char* value;
    std::string error;
  };
  const Case cases[] = {
      {"bad JSON", R"({"resources":)", key + ": not JSON"},
      {"not an object", R"("2")", key + ": expected object, got string"},
      {"bad quantity", R"({"resources": {"cpu": "lots"}})", key + ": resources[cpu]: "},
      {"negative quantity", R"({"resources": {"memory": "-1Gi"}})",
       key + ": resources[memory]: must be greater than or equal to 0"},
      {"reservedCPUs not a string", R"({"reservedCPUs": 3})",
       key + ": reservedCPUs: expected string"},
      {"bad cpu list", R"({"reservedCPUs": "3-1"})", key + ": reservedCPUs: "},
      {"cpu list with a sign", R"({"reservedCPUs": "-1"})", key + ": reservedCPUs: "},
      {"bad policy", R"({"applyPolicy": "Sometimes"})",
       key + ": applyPolicy: unsupported value \"Sometimes\""},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto n = parse(c.value);
      REQUIRE_FALSE(n);
      CHECK_THAT(n.error().message, Catch::StartsWith(c.error));
    }
  }
}
