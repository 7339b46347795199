// NodeVolumeLimits against the cases of kube-scheduler 1.20's csi_test.go: limits from the
// CSINode and from node allocatable, pending and dangling claims counted by class, shared
// volumes counted once, in-tree volumes counted under their CSI driver where migrated.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plugins/upstream/nodevolumelimits/csi_limits.h"
#include "plugins/upstream/nodevolumelimits/volume_limits_common.h"
#include "volume_fixtures.h"

namespace koord::roles::scheduler {
namespace {

using upstream::NodeVolumeLimits;
using volumetest::claimVolume;
using volumetest::makePV;
using volumetest::nodeWith;
using volumetest::podWith;
using K = VolumeSourceKind;

constexpr const char* kEBS = "ebs.csi.aws.com";
constexpr const char* kOther = "other.csi.io";
const std::string kEBSKey = std::string("attachable-volumes-csi-") + kEBS;
constexpr std::string_view kExceeded = "node(s) exceed max volume count";

void fill(volumetest::StorageFixture& f) {
  f.storageClass("csi-sc", kEBS, storage::VolumeBindingMode::kWaitForFirstConsumer);
  f.storageClass("other-sc", kOther, storage::VolumeBindingMode::kWaitForFirstConsumer);
  f.storageClass("gp2", "kubernetes.io/aws-ebs", storage::VolumeBindingMode::kWaitForFirstConsumer);
  f.storageClass("azure-file", "kubernetes.io/azure-file");
  for (int i = 0; i < 4; ++i) {
    const std::string n = std::to_string(i);
    f.volume(makePV("pv-ebs-" + n, K::kCSI, kEBS, "h" + n));
    f.claim("ebs-" + n, "pv-ebs-" + n, "csi-sc");
  }
  f.volume(makePV("pv-other-0", K::kCSI, kOther, "o0"));
  f.claim("other-0", "pv-other-0", "other-sc");
  f.claim("pending-0", "", "csi-sc");
  f.claim("pending-1", "", "csi-sc");
  f.claim("pending-0", "", "csi-sc", "other");
  f.claim("pending-nosc", "");
  f.claim("pending-azure-file", "", "azure-file");
  f.claim("dangling", "pv-missing", "csi-sc");
  f.claim("dangling-nosc", "pv-missing");
  f.volume(makePV("pv-intree-0", K::kAWSElasticBlockStore, "aws://us-east-1a/vol-0"));
  f.volume(makePV("pv-intree-1", K::kAWSElasticBlockStore, "vol-1"));
  f.volume(makePV("pv-intree-bad", K::kAWSElasticBlockStore, "aws://us-east-1a/not-a-volume"));
  f.claim("intree-0", "pv-intree-0", "gp2");
  f.claim("intree-1", "pv-intree-1", "gp2");
  f.claim("intree-bad", "pv-intree-bad", "gp2");
  f.claim("intree-pending", "", "gp2");
  // The same disk as intree-0, as a CSI volume.
  f.volume(makePV("pv-ebs-vol-0", K::kCSI, kEBS, "vol-0"));
  f.claim("ebs-vol-0", "pv-ebs-vol-0", "csi-sc");
}

PodInfo claims(std::vector<std::string> names, std::string namespace_ = "default") {
  std::vector<PodVolume> volumes;
  for (auto& n : names)
    volumes.push_back(claimVolume(std::move(n)));
  return podWith(std::move(volumes), "pod", std::move(namespace_));
}

using Drivers = std::vector<std::pair<std::string, std::optional<std::int32_t>>>;

struct Case {
  const char* name;
  PodInfo pod;
  std::vector<PodInfo> existing;
  std::optional<Drivers> csi_node;  // nullopt: no CSINode object
  std::vector<std::string> migrated = {};
  std::vector<std::pair<std::string, std::int64_t>> allocatable = {};
  Code code = Code::kSuccess;
};

void runCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    INFO(c.name);
    volumetest::StorageFixture f;
    fill(f);
    if (c.csi_node)
      f.csiNode("node-1", *c.csi_node, c.migrated);
    NodeVolumeLimits plugin(f.handle);
    const NodeInfo node = nodeWith(c.existing, {}, c.allocatable);
    const Status s = volumetest::runFilter(plugin, c.pod, node);
    CHECK(s.code() == c.code);
    if (c.code == Code::kUnschedulable)
      CHECK(s.message() == kExceeded);
  }
}

const Drivers ebsLimit(std::int32_t n) {
  return {{kEBS, n}};
}

TEST_CASE("NodeVolumeLimits: a driver's unique volumes against the CSINode's count",
          "[volumefilters][nodevolumelimits]") {
  runCases({
      {"fits when the limit exceeds the volumes",
       claims({"ebs-0"}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(4)},
      {"fits exactly at the limit", claims({"ebs-0"}), {claims({"ebs-1", "ebs-2"})}, ebsLimit(3)},
      {"refused past the limit",
       claims({"ebs-0"}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(2),
       {},
       {},
       Code::kUnschedulable},
      {"refused past the limit, volumes over several pods",
       claims({"ebs-0", "ebs-3"}),
       {claims({"ebs-1"}), claims({"ebs-2"})},
       ebsLimit(3),
       {},
       {},
       Code::kUnschedulable},
      {"a volume already on the node counts once",
       claims({"ebs-1"}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(2)},
      {"a volume named twice by the pod counts once",
       claims({"ebs-0", "ebs-0"}),
       {claims({"ebs-1"})},
       ebsLimit(2)},
      {"a pod already over the limit, nothing new",
       claims({"ebs-1"}),
       {claims({"ebs-1", "ebs-2", "ebs-3"})},
       ebsLimit(2)},
      {"a driver without a count has no limit",
       claims({"ebs-0"}),
       {claims({"ebs-1", "ebs-2"})},
       Drivers{{kEBS, std::nullopt}}},
      {"another driver's limit does not apply",
       claims({"ebs-0"}),
       {claims({"ebs-1", "ebs-2"})},
       Drivers{{kOther, 0}}},
      {"volumes of another driver do not count",
       claims({"ebs-0"}),
       {claims({"other-0", "ebs-1"})},
       ebsLimit(2)},
      {"each driver against its own limit",
       claims({"other-0"}),
       {claims({"ebs-1", "ebs-2"})},
       Drivers{{kEBS, 2}, {kOther, 0}},
       {},
       {},
       Code::kUnschedulable},
      {"a pod without claims",
       podWith({volumetest::inlineVolume(K::kCSI, kEBS)}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(0)},
  });
}

TEST_CASE("NodeVolumeLimits: the node's allocatable stands in for a CSINode count",
          "[volumefilters][nodevolumelimits]") {
  runCases({
      {"node allocatable, no CSINode",
       claims({"ebs-0"}),
       {claims({"ebs-1", "ebs-2"})},
       std::nullopt,
       {},
       {{kEBSKey, 2}},
       Code::kUnschedulable},
      {"node allocatable, room left",
       claims({"ebs-0"}),
       {claims({"ebs-1"})},
       std::nullopt,
       {},
       {{kEBSKey, 2}}},
      {"the CSINode's count wins over node allocatable",
       claims({"ebs-0"}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(5),
       {},
       {{kEBSKey, 2}}},
      {"a CSINode driver without count leaves node allocatable",
       claims({"ebs-0"}),
       {claims({"ebs-1", "ebs-2"})},
       Drivers{{kEBS, std::nullopt}},
       {},
       {{kEBSKey, 2}},
       Code::kUnschedulable},
      {"no limit anywhere", claims({"ebs-0"}), {claims({"ebs-1", "ebs-2"})}, std::nullopt},
  });
}

TEST_CASE("NodeVolumeLimits: claims without a readable volume count by their class",
          "[volumefilters][nodevolumelimits]") {
  runCases({
      {"a pending claim counts towards the limit",
       claims({"pending-0"}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(2),
       {},
       {},
       Code::kUnschedulable},
      {"pending claims on the node count",
       claims({"ebs-0"}),
       {claims({"pending-0", "pending-1"})},
       ebsLimit(2),
       {},
       {},
       Code::kUnschedulable},
      {"a pending claim shared with a pod on the node counts once",
       claims({"pending-0"}),
       {claims({"pending-0", "ebs-1"})},
       ebsLimit(2)},
      {"the same claim name in another namespace is another volume",
       claims({"pending-0"}),
       {claims({"pending-0"}, "other"), claims({"ebs-1"})},
       ebsLimit(2),
       {},
       {},
       Code::kUnschedulable},
      {"a claim bound to a missing volume counts by its class",
       claims({"dangling"}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(2),
       {},
       {},
       Code::kUnschedulable},
      {"a pending claim without class does not count",
       claims({"pending-nosc"}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(2)},
      {"a dangling claim without class does not count",
       claims({"dangling-nosc"}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(2)},
      {"a missing claim does not count",
       claims({"no-such-claim"}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(2)},
      {"missing claims on the node do not count",
       claims({"ebs-0"}),
       {claims({"no-such-claim", "ebs-1"})},
       ebsLimit(2)},
      {"azure-file claims count for no driver",
       claims({"pending-azure-file"}),
       {},
       Drivers{{"file.csi.azure.com", 0}, {"kubernetes.io/azure-file", 0}},
       {"kubernetes.io/azure-file"}},
  });
}

TEST_CASE("NodeVolumeLimits: in-tree volumes count under their CSI driver where migrated",
          "[volumefilters][nodevolumelimits]") {
  const std::vector<std::string> migrated = {"kubernetes.io/aws-ebs"};
  runCases({
      {"migrated: an in-tree volume counts",
       claims({"intree-0"}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(2),
       migrated,
       {},
       Code::kUnschedulable},
      {"not migrated: an in-tree volume does not count",
       claims({"intree-0"}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(2)},
      {"migrated: in-tree volumes on the node count",
       claims({"ebs-0"}),
       {claims({"intree-0", "intree-1"})},
       ebsLimit(2),
       migrated,
       {},
       Code::kUnschedulable},
      {"not migrated: in-tree volumes on the node do not count",
       claims({"ebs-0"}),
       {claims({"intree-0", "intree-1"})},
       ebsLimit(2)},
      {"migrated: a pending in-tree claim counts",
       claims({"intree-pending"}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(2),
       migrated,
       {},
       Code::kUnschedulable},
      {"migrated: the in-tree and CSI volume of one disk count once",
       claims({"ebs-vol-0"}),
       {claims({"intree-0", "ebs-1"})},
       ebsLimit(2),
       migrated},
      {"migrated: a volume ID the translation refuses does not count",
       claims({"intree-bad"}),
       {claims({"ebs-1", "ebs-2"})},
       ebsLimit(2),
       migrated},
      {"migrated, limit from node allocatable",
       claims({"intree-0"}),
       {claims({"ebs-1"})},
       Drivers{},
       migrated,
       {{kEBSKey, 1}},
       Code::kUnschedulable},
  });
}

TEST_CASE("NodeVolumeLimits: a claim without a name is an error",
          "[volumefilters][nodevolumelimits]") {
  runCases({
      {"on the pod", claims({""}), {}, ebsLimit(2), {}, {}, Code::kError},
      {"on the node, once counting is needed",
       claims({"ebs-0"}),
       {claims({"", "ebs-1"})},
       ebsLimit(1),
       {},
       {},
       Code::kError},
  });
}

TEST_CASE("NodeVolumeLimits: PreFilter skips pods with nothing to count",
          "[volumefilters][nodevolumelimits]") {
  volumetest::StorageFixture f;
  fill(f);
  NodeVolumeLimits plugin(f.handle);
  CycleState state;
  CHECK(plugin.preFilter(state, podWith({})).isSkip());
  CHECK(plugin.preFilter(state, podWith({volumetest::inlineVolume(K::kCSI, kEBS)})).isSkip());
  CHECK(plugin.preFilter(state, claims({"no-such-claim", "pending-nosc"})).isSkip());
  CHECK(plugin.preFilter(state, claims({"pending-0"})).ok());
  // Counts only where migrated: decided per node.
  CHECK(plugin.preFilter(state, claims({"intree-0"})).ok());
  CHECK(plugin.preFilter(state, claims({""})).code() == Code::kError);
  // Asked once per cycle without PreFilter: only claims can count.
  CHECK(plugin.passesEveryNode(podWith({})));
  CHECK(plugin.passesEveryNode(podWith({volumetest::inlineVolume(K::kCSI, kEBS)})));
  CHECK_FALSE(plugin.passesEveryNode(claims({"pending-0"})));
  CHECK_FALSE(plugin.passesEveryNode(claims({""})));  // Filter reports the error
}

TEST_CASE("NodeVolumeLimits: a long driver name's limit key is shortened with its SHA-1",
          "[volumefilters][nodevolumelimits]") {
  std::string key;
  upstream::volumelimits::csiAttachLimitKey(kEBS, key);
  CHECK(key == kEBSKey);
  upstream::volumelimits::csiAttachLimitKey(std::string(39, 'a'), key);
  CHECK(key == "attachable-volumes-csi-" + std::string(39, 'a'));
  upstream::volumelimits::csiAttachLimitKey(std::string(40, 'a'), key);
  CHECK(key == "attachable-volumes-csi-" + std::string(23, 'a') + "a56559418dc7908c");
  upstream::volumelimits::csiAttachLimitKey(
      "com.example.csi.very-long-driver-name.storage.vendor.io", key);
  CHECK(key == "attachable-volumes-csi-com.example.csi.very-lo1bfd143fa187a5e0");

  // The node's allocatable under that key is the driver's limit.
  const std::string driver = "com.example.csi.very-long-driver-name.storage.vendor.io";
  volumetest::StorageFixture f;
  f.storageClass("long", driver);
  f.claim("a", "", "long");
  f.claim("b", "", "long");
  NodeVolumeLimits plugin(f.handle);
  const NodeInfo node = nodeWith({claims({"a"})}, {}, {{key, 1}});
  CHECK(volumetest::runFilter(plugin, claims({"b"}), node).code() == Code::kUnschedulable);
}

}  // namespace
}  // namespace koord::roles::scheduler
