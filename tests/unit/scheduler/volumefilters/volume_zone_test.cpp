// VolumeZone against kube-scheduler 1.20's volume_zone_test.go (single zone, multiple zones,
// late binding), with the not-found answers of the 1.20 branch's fix, and its label parsing.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "plugins/upstream/volumezone/volume_zone.h"
#include "volume_fixtures.h"

namespace koord::roles::scheduler {
namespace {

using upstream::kErrReasonVolumeZoneConflict;
using upstream::VolumeZone;
using volumetest::claimVolume;
using volumetest::makePV;
using volumetest::nodeWith;
using volumetest::podWith;
using K = VolumeSourceKind;

constexpr const char* kZone = "failure-domain.beta.kubernetes.io/zone";
constexpr const char* kRegion = "failure-domain.beta.kubernetes.io/region";
constexpr const char* kStableZone = "topology.kubernetes.io/zone";
constexpr const char* kStableRegion = "topology.kubernetes.io/region";

struct Case {
  const char* name;
  std::vector<std::string> claims;
  kube::Labels node_labels;
  Code code = Code::kSuccess;
  std::string reason = {};
};

// The volumes and claims 1.20's tests declare, plus the classes of its late-binding test.
void fill(volumetest::StorageFixture& f, bool multi_zone) {
  auto pv = [&](const char* name, kube::Labels labels) {
    f.volume(makePV(name, K::kGCEPersistentDisk, name, {}, std::move(labels)));
  };
  pv("Vol_1", {{kZone, "us-west1-a"}});
  if (multi_zone) {
    pv("Vol_2", {{kZone, "us-west1-b"}, {"uselessLabel", "none"}});
    pv("Vol_3", {{kZone, "us-west1-c__us-west1-a"}});
    pv("Vol_Stable_1", {{kStableZone, "us-west1-a"}});
    pv("Vol_Stable_2", {{kStableZone, "us-west1-c__us-west1-a"}});
  } else {
    pv("Vol_2", {{kRegion, "us-west1-b"}, {"uselessLabel", "none"}});
    pv("Vol_3", {{kRegion, "us-west1-c"}});
    pv("Vol_Stable_1", {{kStableZone, "us-west1-a"}});
    pv("Vol_Stable_2", {{kStableRegion, "us-west1-b"}, {"uselessLabel", "none"}});
  }
  pv("Vol_Malformed", {{kZone, "us-west1-a____us-west1-b"}});
  f.claim("PVC_1", "Vol_1");
  f.claim("PVC_2", "Vol_2");
  f.claim("PVC_3", "Vol_3");
  f.claim("PVC_4", "Vol_not_exist");
  f.claim("PVC_Stable_1", "Vol_Stable_1");
  f.claim("PVC_Stable_2", "Vol_Stable_2");
  f.claim("PVC_Malformed", "Vol_Malformed");
  f.storageClass("Class_Wait", "kubernetes.io/gce-pd",
                 storage::VolumeBindingMode::kWaitForFirstConsumer);
  f.storageClass("Class_Immediate", "kubernetes.io/gce-pd");
  f.claim("PVC_NoSC", "");
  f.claim("PVC_WaitSC", "", "Class_Wait");
  f.claim("PVC_ImmediateSC", "", "Class_Immediate");
  f.claim("PVC_NonExistentSC", "", "Class_DoesNotExist");
}

void runCases(bool multi_zone, const std::vector<Case>& cases) {
  volumetest::StorageFixture f;
  fill(f, multi_zone);
  VolumeZone plugin(f.handle);
  for (const Case& c : cases) {
    INFO(c.name);
    std::vector<PodVolume> volumes;
    for (const auto& claim : c.claims)
      volumes.push_back(claimVolume(claim));
    const PodInfo pod = podWith(volumes);
    const NodeInfo node = nodeWith({}, c.node_labels);
    const Status s = volumetest::runFilter(plugin, pod, node);
    CHECK(s.code() == c.code);
    if (c.code != Code::kSuccess)
      CHECK(s.message() == c.reason);
  }
}

const std::string kConflict(kErrReasonVolumeZoneConflict);

TEST_CASE("VolumeZone: a volume's zone or region label must match the node's",
          "[volumefilters][volumezone]") {
  runCases(
      false,
      {
          {"pod without volume", {}, {{kZone, "us-west1-a"}}},
          {"node without labels", {"PVC_1"}, {}},
          {"label zone failure domain matched",
           {"PVC_1"},
           {{kZone, "us-west1-a"}, {"uselessLabel", "none"}}},
          {"label zone region matched",
           {"PVC_2"},
           {{kRegion, "us-west1-b"}, {"uselessLabel", "none"}}},
          {"label zone region failed match",
           {"PVC_2"},
           {{kRegion, "no_us-west1-b"}},
           Code::kUnschedulableAndUnresolvable,
           kConflict},
          {"label zone failure domain failed match",
           {"PVC_1"},
           {{kZone, "no_us-west1-a"}},
           Code::kUnschedulableAndUnresolvable,
           kConflict},
          {"label stable zone matched", {"PVC_Stable_1"}, {{kStableZone, "us-west1-a"}}},
          {"label stable region matched", {"PVC_Stable_2"}, {{kStableRegion, "us-west1-b"}}},
          {"label stable region failed match",
           {"PVC_Stable_2"},
           {{kStableRegion, "no_us-west1-b"}},
           Code::kUnschedulableAndUnresolvable,
           kConflict},
          {"label stable zone failed match",
           {"PVC_Stable_1"},
           {{kStableZone, "no_us-west1-a"}},
           Code::kUnschedulableAndUnresolvable,
           kConflict},
          {"the node lacks the volume's label",
           {"PVC_2"},
           {{kZone, "us-west1-b"}},
           Code::kUnschedulableAndUnresolvable,
           kConflict},
          // 1.20 compares each label under its own key.
          {"beta volume label, stable node label only",
           {"PVC_1"},
           {{kStableZone, "us-west1-a"}},
           Code::kUnschedulableAndUnresolvable,
           kConflict},
          {"every volume must match",
           {"PVC_1", "PVC_3"},
           {{kZone, "us-west1-a"}, {kRegion, "us-west1-b"}},
           Code::kUnschedulableAndUnresolvable,
           kConflict},
          {"a label that does not parse is ignored", {"PVC_Malformed"}, {{kZone, "elsewhere"}}},
      });
}

TEST_CASE("VolumeZone: a multi-zone volume label fits any of its zones",
          "[volumefilters][volumezone]") {
  runCases(true, {
                     {"pod without volume", {}, {{kZone, "us-west1-a"}}},
                     {"node without labels", {"PVC_1"}, {}},
                     {"label zone failure domain matched",
                      {"PVC_3"},
                      {{kZone, "us-west1-a"}, {"uselessLabel", "none"}}},
                     {"label zone failure domain failed match",
                      {"PVC_1"},
                      {{kZone, "us-west1-b"}},
                      Code::kUnschedulableAndUnresolvable,
                      kConflict},
                     {"label stable zone matched", {"PVC_Stable_2"}, {{kStableZone, "us-west1-a"}}},
                     {"label stable zone failed match",
                      {"PVC_Stable_2"},
                      {{kStableZone, "us-west1-b"}},
                      Code::kUnschedulableAndUnresolvable,
                      kConflict},
                     {"one of two volumes fails",
                      {"PVC_3", "PVC_2"},
                      {{kZone, "us-west1-a"}},
                      Code::kUnschedulableAndUnresolvable,
                      kConflict},
                 });
}

TEST_CASE("VolumeZone: claims without a volume yet, and objects that are missing",
          "[volumefilters][volumezone]") {
  const kube::Labels zoned = {{kZone, "us-west1-a"}, {"uselessLabel", "none"}};
  runCases(
      false,
      {
          {"bound claim matched", {"PVC_1"}, zoned},
          {"unbound claim without a class",
           {"PVC_NoSC"},
           zoned,
           Code::kUnschedulableAndUnresolvable,
           "PersistentVolumeClaim had no pv name and storageClass name"},
          {"unbound claim, immediate binding",
           {"PVC_ImmediateSC"},
           zoned,
           Code::kUnschedulableAndUnresolvable,
           "PersistentVolume had no name"},
          {"unbound claim, binding waits for the first consumer", {"PVC_WaitSC"}, zoned},
          {"unbound claim, class not found",
           {"PVC_NonExistentSC"},
           zoned,
           Code::kUnschedulableAndUnresolvable,
           "storageclass.storage.k8s.io \"Class_DoesNotExist\" not found"},
          {"claim not found",
           {"PVC_missing"},
           zoned,
           Code::kUnschedulableAndUnresolvable,
           "persistentvolumeclaim \"PVC_missing\" not found"},
          {"volume not found",
           {"PVC_4"},
           zoned,
           Code::kUnschedulableAndUnresolvable,
           "persistentvolume \"Vol_not_exist\" not found"},
          {"claim without a name",
           {""},
           zoned,
           Code::kUnschedulableAndUnresolvable,
           "PersistentVolumeClaim had no name"},
          // Resolved in order: a mismatch before the missing claim decides.
          {"mismatch before a missing claim",
           {"PVC_1", "PVC_missing"},
           {{kZone, "us-west1-b"}},
           Code::kUnschedulableAndUnresolvable,
           kConflict},
          {"match, then a missing claim",
           {"PVC_1", "PVC_missing"},
           zoned,
           Code::kUnschedulableAndUnresolvable,
           "persistentvolumeclaim \"PVC_missing\" not found"},
          // A node without zone labels resolves no claim.
          {"missing claim, node without zone labels", {"PVC_missing"}, {{"uselessLabel", "none"}}},
      });
}

TEST_CASE("VolumeZone: PreFilter skips pods whose claims constrain no zone",
          "[volumefilters][volumezone]") {
  volumetest::StorageFixture f;
  fill(f, false);
  f.volume(makePV("Vol_Plain", K::kCSI, "driver", "h1"));
  f.claim("PVC_Plain", "Vol_Plain");
  VolumeZone plugin(f.handle);
  CycleState state;
  CHECK(plugin.preFilter(state, podWith({})).isSkip());
  CHECK(plugin.preFilter(state, podWith({volumetest::inlineVolume(K::kGCEPersistentDisk, "pd")}))
            .isSkip());
  CHECK(plugin.preFilter(state, podWith({claimVolume("PVC_Plain")})).isSkip());
  CHECK(plugin.preFilter(state, podWith({claimVolume("PVC_WaitSC")})).isSkip());
  CHECK(plugin.preFilter(state, podWith({claimVolume("PVC_1")})).ok());
  // The missing claim is reported by Filter, on zoned nodes only.
  CHECK(plugin.preFilter(state, podWith({claimVolume("PVC_missing")})).ok());
  // Asked once per cycle without PreFilter: only a claim can have a zone.
  CHECK(plugin.passesEveryNode(podWith({})));
  CHECK(plugin.passesEveryNode(podWith({volumetest::inlineVolume(K::kGCEPersistentDisk, "pd")})));
  CHECK_FALSE(plugin.passesEveryNode(podWith({claimVolume("PVC_1")})));
  CHECK_FALSE(plugin.passesEveryNode(podWith({claimVolume("PVC_missing")})));
}

TEST_CASE("VolumeZone: a label value is a \"__\"-separated zone set",
          "[volumefilters][volumezone]") {
  using upstream::labelZonesToSet;
  CHECK(labelZonesToSet("us-west1-a") == std::vector<std::string>{"us-west1-a"});
  CHECK(labelZonesToSet("a__b__a") == std::vector<std::string>{"a", "b"});
  CHECK(labelZonesToSet(" a __ b ") == std::vector<std::string>{"a", "b"});
  CHECK_FALSE(labelZonesToSet("").has_value());
  CHECK_FALSE(labelZonesToSet("a____b").has_value());
  CHECK_FALSE(labelZonesToSet("a__").has_value());
  CHECK_FALSE(labelZonesToSet("a__ ").has_value());
}

}  // namespace
}  // namespace koord::roles::scheduler
