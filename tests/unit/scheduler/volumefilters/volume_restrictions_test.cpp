// VolumeRestrictions against kube-scheduler 1.20's volume_restrictions_test.go cases: GCE PD,
// AWS EBS, RBD and iSCSI conflicts, read-only sharing, and the PreFilter Skip.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "plugins/upstream/volumerestrictions/volume_restrictions.h"
#include "volume_fixtures.h"

namespace koord::roles::scheduler {
namespace {

using upstream::kErrReasonDiskConflict;
using upstream::VolumeRestrictions;
using volumetest::inlineVolume;
using volumetest::nodeWith;
using volumetest::podWith;
using volumetest::rbdVolume;
using K = VolumeSourceKind;

struct Case {
  const char* name;
  PodInfo pod;
  std::vector<PodInfo> existing;
  bool conflict;
};

void runCases(const std::vector<Case>& cases) {
  VolumeRestrictions plugin;
  for (const Case& c : cases) {
    INFO(c.name);
    const NodeInfo node = nodeWith(c.existing);
    const Status s = volumetest::runFilter(plugin, c.pod, node);
    if (c.conflict) {
      CHECK(s.code() == Code::kUnschedulable);
      CHECK(s.message() == kErrReasonDiskConflict);
    } else {
      CHECK(s.ok());
    }
  }
}

TEST_CASE("VolumeRestrictions: the same GCE PD conflicts unless every mount is read-only",
          "[volumefilters][volumerestrictions]") {
  const PodVolume foo = inlineVolume(K::kGCEPersistentDisk, "foo");
  const PodVolume bar = inlineVolume(K::kGCEPersistentDisk, "bar");
  const PodVolume foo_ro = inlineVolume(K::kGCEPersistentDisk, "foo", true);
  runCases({
      {"nothing on the node", podWith({foo}), {}, false},
      {"a pod without volumes on the node", podWith({foo}), {podWith({})}, false},
      {"one state", podWith({foo}), {podWith({foo, bar})}, true},
      {"another disk", podWith({foo}), {podWith({bar})}, false},
      {"read-only on one side", podWith({foo_ro}), {podWith({foo})}, true},
      {"read-only on both sides", podWith({foo_ro}), {podWith({foo_ro})}, false},
  });
}

TEST_CASE("VolumeRestrictions: the same AWS EBS volume always conflicts",
          "[volumefilters][volumerestrictions]") {
  const PodVolume foo = inlineVolume(K::kAWSElasticBlockStore, "foo");
  const PodVolume bar = inlineVolume(K::kAWSElasticBlockStore, "bar");
  const PodVolume foo_ro = inlineVolume(K::kAWSElasticBlockStore, "foo", true);
  runCases({
      {"nothing on the node", podWith({foo}), {}, false},
      {"one state", podWith({foo}), {podWith({foo, bar})}, true},
      {"another volume", podWith({foo}), {podWith({bar})}, false},
      {"read-only on both sides still conflicts", podWith({foo_ro}), {podWith({foo_ro})}, true},
      {"same id, other kind",
       podWith({foo}),
       {podWith({inlineVolume(K::kGCEPersistentDisk, "foo")})},
       false},
  });
}

TEST_CASE("VolumeRestrictions: an RBD image conflicts by monitor, pool and image",
          "[volumefilters][volumerestrictions]") {
  const PodVolume ab = rbdVolume({"a", "b"}, "foo", "bar");
  const PodVolume cd = rbdVolume({"c", "d"}, "foo", "bar");
  const PodVolume bc = rbdVolume({"b", "c"}, "foo", "bar");
  const PodVolume other_pool = rbdVolume({"a"}, "baz", "bar");
  const PodVolume other_image = rbdVolume({"a"}, "foo", "qux");
  const PodVolume ab_ro = rbdVolume({"a", "b"}, "foo", "bar", true);
  runCases({
      {"nothing on the node", podWith({ab}), {}, false},
      {"a shared monitor", podWith({ab}), {podWith({bc})}, true},
      {"no shared monitor", podWith({ab}), {podWith({cd})}, false},
      {"another pool", podWith({ab}), {podWith({other_pool})}, false},
      {"another image", podWith({ab}), {podWith({other_image})}, false},
      {"read-only on one side", podWith({ab_ro}), {podWith({bc})}, true},
      {"read-only on both sides", podWith({ab_ro}), {podWith({ab_ro})}, false},
  });
}

TEST_CASE("VolumeRestrictions: the same iSCSI IQN conflicts unless every mount is read-only",
          "[volumefilters][volumerestrictions]") {
  const PodVolume foo = inlineVolume(K::kISCSI, "iqn.2016-12.server:storage.target01");
  const PodVolume bar = inlineVolume(K::kISCSI, "iqn.2017-12.server:storage.target01");
  const PodVolume foo_ro = inlineVolume(K::kISCSI, "iqn.2016-12.server:storage.target01", true);
  runCases({
      {"nothing on the node", podWith({foo}), {}, false},
      {"one state", podWith({foo}), {podWith({foo, bar})}, true},
      {"another IQN", podWith({foo}), {podWith({bar})}, false},
      {"read-only on one side", podWith({foo}), {podWith({foo_ro})}, true},
      {"read-only on both sides", podWith({foo_ro}), {podWith({foo_ro})}, false},
  });
}

TEST_CASE("VolumeRestrictions: PreFilter skips pods without a restricted volume",
          "[volumefilters][volumerestrictions]") {
  VolumeRestrictions plugin;
  CycleState state;
  CHECK(plugin.preFilter(state, podWith({})).isSkip());
  CHECK(plugin
            .preFilter(state,
                       podWith({volumetest::claimVolume("data"), inlineVolume(K::kAzureDisk, "d"),
                                inlineVolume(K::kCSI, "driver")}))
            .isSkip());
  CHECK(plugin.preFilter(state, podWith({inlineVolume(K::kISCSI, "iqn")})).ok());
  CHECK(plugin.preFilter(state, podWith({rbdVolume({"m"}, "rbd", "img")})).ok());
  // The framework's per-cycle question gives the same answers, for profiles without PreFilter.
  CHECK(plugin.passesEveryNode(podWith({})));
  CHECK(plugin.passesEveryNode(podWith({volumetest::claimVolume("data")})));
  CHECK_FALSE(plugin.passesEveryNode(podWith({inlineVolume(K::kISCSI, "iqn")})));
  CHECK_FALSE(plugin.passesEveryNode(podWith({rbdVolume({"m"}, "rbd", "img")})));
}

}  // namespace
}  // namespace koord::roles::scheduler
