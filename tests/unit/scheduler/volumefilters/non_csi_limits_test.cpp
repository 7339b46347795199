// EBSLimits, GCEPDLimits, AzureDiskLimits and CinderLimits against the cases of kube-scheduler
// 1.20's non_csi_test.go: inline and claim-backed volumes counted once each, pending and
// dangling claims by provisioner, the default limits (EBS by instance type), node allocatable
// and KUBE_MAX_PD_VOLS, and nodes that migrated the plugin to CSI.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plugins/upstream/nodevolumelimits/non_csi_limits.h"
#include "volume_fixtures.h"

namespace koord::roles::scheduler {
namespace {

using upstream::NonCSILimits;
using volumetest::claimVolume;
using volumetest::inlineVolume;
using volumetest::makePV;
using volumetest::nodeWith;
using volumetest::podWith;
namespace vl = upstream::volumelimits;
using K = VolumeSourceKind;

constexpr std::string_view kExceeded = "node(s) exceed max volume count";

PodVolume ebs(std::string id) {
  return inlineVolume(K::kAWSElasticBlockStore, std::move(id));
}

void fill(volumetest::StorageFixture& f) {
  f.storageClass("gp2", "kubernetes.io/aws-ebs");
  f.storageClass("standard", "kubernetes.io/gce-pd");
  f.volume(makePV("pv-ebs-a", K::kAWSElasticBlockStore, "vol-a"));
  f.volume(makePV("pv-ebs-y", K::kAWSElasticBlockStore, "vol-y"));
  f.volume(makePV("pv-gce", K::kGCEPersistentDisk, "pd-1"));
  f.claim("ebs-a", "pv-ebs-a", "gp2");
  f.claim("ebs-y", "pv-ebs-y", "gp2");
  f.claim("gce", "pv-gce", "standard");
  f.claim("unbound-ebs", "", "gp2");
  f.claim("unbound-gce", "", "standard");
  f.claim("unbound-nosc", "");
  f.claim("unbound-ebs", "", "gp2", "other");
  f.claim("dangling-ebs", "pv-missing", "gp2");
  f.claim("dangling-gce", "pv-missing", "standard");
}

struct Case {
  const char* name;
  PodInfo pod;
  std::vector<PodInfo> existing;
  std::optional<std::int64_t> allocatable;  // attachable-volumes-aws-ebs
  Code code = Code::kSuccess;
};

void runEBS(const std::vector<Case>& cases, std::optional<std::int64_t> env = std::nullopt,
            kube::Labels node_labels = {}, std::vector<std::string> migrated = {}) {
  for (const Case& c : cases) {
    INFO(c.name);
    volumetest::StorageFixture f;
    fill(f);
    if (!migrated.empty())
      f.csiNode("node-1", {}, migrated);
    NonCSILimits plugin("EBSLimits", vl::kAWSEBS, f.handle, env);
    std::vector<std::pair<std::string, std::int64_t>> allocatable;
    if (c.allocatable)
      allocatable.emplace_back("attachable-volumes-aws-ebs", *c.allocatable);
    const NodeInfo node = nodeWith(c.existing, node_labels, allocatable);
    const Status s = volumetest::runFilter(plugin, c.pod, node);
    CHECK(s.code() == c.code);
    if (c.code == Code::kUnschedulable)
      CHECK(s.message() == kExceeded);
  }
}

// `n` distinct inline EBS volumes named prefix-0 ... prefix-(n-1).
std::vector<PodVolume> ebsVolumes(int n, const std::string& prefix) {
  std::vector<PodVolume> out;
  for (int i = 0; i < n; ++i)
    out.push_back(ebs(prefix + "-" + std::to_string(i)));
  return out;
}

TEST_CASE("EBSLimits: unique EBS volumes, inline and through claims, against the limit",
          "[volumefilters][nodevolumelimits]") {
  runEBS({
      {"fits when node capacity >= new pod's EBS volumes",
       podWith({ebs("vol-x")}),
       {podWith({ebs("vol-y")})},
       2},
      {"doesn't fit when node capacity < new pod's EBS volumes",
       podWith({ebs("vol-x"), ebs("vol-w")}),
       {podWith({ebs("vol-y")})},
       2,
       Code::kUnschedulable},
      {"new pod's count ignores non-EBS volumes",
       podWith({ebs("vol-x"), inlineVolume(K::kGCEPersistentDisk, "pd")}),
       {podWith({ebs("vol-y")})},
       2},
      {"existing pods' counts ignore non-EBS volumes",
       podWith({ebs("vol-x")}),
       {podWith({ebs("vol-y"), inlineVolume(K::kAzureDisk, "d"), claimVolume("gce")})},
       2},
      {"new pod's count considers claims backed by EBS volumes",
       podWith({claimVolume("ebs-a")}),
       {podWith({ebs("vol-y"), ebs("vol-z")})},
       2,
       Code::kUnschedulable},
      {"new pod's count ignores claims not backed by EBS volumes",
       podWith({claimVolume("gce")}),
       {podWith({ebs("vol-y"), ebs("vol-z")})},
       2},
      {"existing pods' counts consider claims backed by EBS volumes",
       podWith({ebs("vol-x")}),
       {podWith({claimVolume("ebs-a"), ebs("vol-z")})},
       2,
       Code::kUnschedulable},
      {"already-mounted EBS volumes are always ok",
       podWith({ebs("vol-y")}),
       {podWith({ebs("vol-y"), ebs("vol-z")})},
       2},
      {"an inline volume and a claim on the same volume are one",
       podWith({claimVolume("ebs-y")}),
       {podWith({ebs("vol-y"), ebs("vol-z")})},
       2},
      {"the same EBS volume on several pods counts once",
       podWith({ebs("vol-x")}),
       {podWith({ebs("vol-y")}), podWith({ebs("vol-y")})},
       2},
      {"a node already over the limit refuses even a mounted volume",
       podWith({ebs("vol-y")}),
       {podWith({ebs("vol-y"), ebs("vol-z"), ebs("vol-w")})},
       2,
       Code::kUnschedulable},
      {"a missing claim is not counted",
       podWith({claimVolume("no-such-claim")}),
       {podWith({ebs("vol-y"), ebs("vol-z")})},
       2},
      {"missing claims on the node are not counted",
       podWith({ebs("vol-x")}),
       {podWith({claimVolume("no-such-claim"), ebs("vol-z")})},
       2},
      {"an unbound claim of the EBS provisioner counts",
       podWith({claimVolume("unbound-ebs")}),
       {podWith({ebs("vol-y"), ebs("vol-z")})},
       2,
       Code::kUnschedulable},
      {"an unbound claim of another provisioner does not",
       podWith({claimVolume("unbound-gce")}),
       {podWith({ebs("vol-y"), ebs("vol-z")})},
       2},
      {"an unbound claim without class does not",
       podWith({claimVolume("unbound-nosc")}),
       {podWith({ebs("vol-y"), ebs("vol-z")})},
       2},
      {"a claim of a missing volume counts by provisioner",
       podWith({claimVolume("dangling-ebs")}),
       {podWith({ebs("vol-y"), ebs("vol-z")})},
       2,
       Code::kUnschedulable},
      {"... of another provisioner does not",
       podWith({claimVolume("dangling-gce")}),
       {podWith({ebs("vol-y"), ebs("vol-z")})},
       2},
      {"pods sharing an unbound claim count it once",
       podWith({claimVolume("unbound-ebs")}),
       {podWith({claimVolume("unbound-ebs"), ebs("vol-z")})},
       2},
      {"the same claim name in another namespace is another volume",
       podWith({claimVolume("unbound-ebs")}, "pod", "other"),
       {podWith({claimVolume("unbound-ebs"), ebs("vol-z")})},
       2,
       Code::kUnschedulable},
      {"a claim without a name is an error", podWith({claimVolume("")}), {}, 2, Code::kError},
      {"a claim without a name on the node is an error once counting is needed",
       podWith({ebs("vol-x")}),
       {podWith({claimVolume(""), ebs("vol-z")})},
       1,
       Code::kError},
      {"a pod without EBS volumes",
       podWith({inlineVolume(K::kGCEPersistentDisk, "pd")}),
       {podWith({ebs("vol-y"), ebs("vol-z"), ebs("vol-w")})},
       2},
  });
}

TEST_CASE("EBSLimits: the default limit follows the instance type",
          "[volumefilters][nodevolumelimits]") {
  const kube::Labels nitro = {{"node.kubernetes.io/instance-type", "m5.large"}};
  const kube::Labels beta_nitro = {{"beta.kubernetes.io/instance-type", "t3.medium"}};
  const kube::Labels older = {{"node.kubernetes.io/instance-type", "m4.large"}};
  const PodInfo one = podWith({ebs("new")});
  runEBS({{"25 fit a Nitro instance", one, {podWith(ebsVolumes(24, "v"))}, std::nullopt}}, {},
         nitro);
  runEBS({{"26 do not", one, {podWith(ebsVolumes(25, "v"))}, std::nullopt, Code::kUnschedulable}},
         {}, nitro);
  runEBS({{"the beta label too",
           one,
           {podWith(ebsVolumes(25, "v"))},
           std::nullopt,
           Code::kUnschedulable}},
         {}, beta_nitro);
  runEBS({{"39 fit an older instance", one, {podWith(ebsVolumes(38, "v"))}, std::nullopt}}, {},
         older);
  runEBS({{"40 do not", one, {podWith(ebsVolumes(39, "v"))}, std::nullopt, Code::kUnschedulable}},
         {}, older);
  runEBS(
      {{"no label: 39", one, {podWith(ebsVolumes(39, "v"))}, std::nullopt, Code::kUnschedulable}});
  runEBS({{"allocatable wins over the default", one, {podWith(ebsVolumes(30, "v"))}, 31}}, {},
         nitro);
}

TEST_CASE("EBSLimits: KUBE_MAX_PD_VOLS replaces the default, not node allocatable",
          "[volumefilters][nodevolumelimits]") {
  const PodInfo one = podWith({ebs("new")});
  runEBS({{"env limit reached",
           one,
           {podWith(ebsVolumes(3, "v"))},
           std::nullopt,
           Code::kUnschedulable}},
         3);
  runEBS({{"env limit not reached", one, {podWith(ebsVolumes(2, "v"))}, std::nullopt}}, 3);
  runEBS({{"allocatable still wins", one, {podWith(ebsVolumes(3, "v"))}, 4}}, 3);
}

TEST_CASE("EBSLimits: a node that migrated EBS to CSI is left to NodeVolumeLimits",
          "[volumefilters][nodevolumelimits]") {
  const PodInfo one = podWith({ebs("new")});
  runEBS({{"migrated", one, {podWith(ebsVolumes(3, "v"))}, 2}}, {}, {}, {"kubernetes.io/aws-ebs"});
  runEBS({{"another plugin migrated", one, {podWith(ebsVolumes(3, "v"))}, 2, Code::kUnschedulable}},
         {}, {}, {"kubernetes.io/gce-pd"});
}

TEST_CASE("GCEPDLimits, AzureDiskLimits, CinderLimits: their volumes, keys and defaults",
          "[volumefilters][nodevolumelimits]") {
  struct Kind {
    const vl::InTreePlugin* plugin;
    const char* name;
    std::int64_t default_limit;
  };
  for (const Kind& k :
       {Kind{&vl::kGCEPD, "GCEPDLimits", 16}, Kind{&vl::kAzureDisk, "AzureDiskLimits", 16},
        Kind{&vl::kCinder, "CinderLimits", 256}}) {
    INFO(k.name);
    volumetest::StorageFixture f;
    f.storageClass("own", std::string(k.plugin->name));
    f.claim("pending", "", "own");
    f.volume(makePV("pv", k.plugin->kind, "bound-1"));
    f.claim("bound", "pv", "own");
    NonCSILimits plugin(k.name, *k.plugin, f.handle, std::nullopt);
    CHECK(plugin.name() == k.name);
    auto volumes = [&](std::int64_t n) {
      std::vector<PodVolume> out;
      for (std::int64_t i = 0; i < n; ++i)
        out.push_back(inlineVolume(k.plugin->kind, "v" + std::to_string(i)));
      return out;
    };
    const PodInfo one = podWith({inlineVolume(k.plugin->kind, "new")});
    CHECK(
        volumetest::runFilter(plugin, one, nodeWith({podWith(volumes(k.default_limit - 1))})).ok());
    CHECK(
        volumetest::runFilter(plugin, one, nodeWith({podWith(volumes(k.default_limit))})).code() ==
        Code::kUnschedulable);
    const std::vector<std::pair<std::string, std::int64_t>> two = {
        {std::string(k.plugin->limit_key), 2}};
    CHECK(
        volumetest::runFilter(
            plugin, podWith({claimVolume("pending")}),
            nodeWith({podWith({claimVolume("bound"), inlineVolume(k.plugin->kind, "x")})}, {}, two))
            .code() == Code::kUnschedulable);
    // EBS volumes are another plugin's.
    CHECK(volumetest::runFilter(plugin, podWith({ebs("e")}),
                                nodeWith({podWith(volumes(300))}, {}, two))
              .ok());
  }
}

TEST_CASE("NonCSILimits: PreFilter skips pods without a volume of the type",
          "[volumefilters][nodevolumelimits]") {
  volumetest::StorageFixture f;
  fill(f);
  NonCSILimits plugin("EBSLimits", vl::kAWSEBS, f.handle, std::nullopt);
  CycleState state;
  CHECK(plugin.preFilter(state, podWith({})).isSkip());
  CHECK(plugin.preFilter(state, podWith({inlineVolume(K::kGCEPersistentDisk, "pd")})).isSkip());
  CHECK(plugin.preFilter(state, podWith({claimVolume("gce"), claimVolume("no-such-claim")}))
            .isSkip());
  CHECK(plugin.preFilter(state, podWith({ebs("vol-x")})).ok());
  CHECK(plugin.preFilter(state, podWith({claimVolume("unbound-ebs")})).ok());
  CHECK(plugin.preFilter(state, podWith({claimVolume("")})).code() == Code::kError);
  // Asked once per cycle without PreFilter: an inline volume of another type never counts.
  CHECK(plugin.passesEveryNode(podWith({})));
  CHECK(plugin.passesEveryNode(podWith({inlineVolume(K::kGCEPersistentDisk, "pd")})));
  CHECK_FALSE(plugin.passesEveryNode(podWith({ebs("vol-x")})));
  CHECK_FALSE(plugin.passesEveryNode(podWith({claimVolume("unbound-ebs")})));
  CHECK_FALSE(plugin.passesEveryNode(podWith({claimVolume("")})));
}

TEST_CASE("EBSLimits: which instance types are Nitro", "[volumefilters][nodevolumelimits]") {
  for (const char* t : {"m5.large", "c5d.xlarge", "r5.2xlarge", "m55", "t3.micro", "t3a.small",
                        "z1d.large", "x1.t3"})
    CHECK(upstream::isEBSNitroInstanceType(t));
  for (const char* t : {"", "m4.large", "c6g.large", "a5.large", "i3.large", "xm5.large"})
    CHECK_FALSE(upstream::isEBSNitroInstanceType(t));
}

TEST_CASE("KUBE_MAX_PD_VOLS: a positive integer or nothing", "[volumefilters][nodevolumelimits]") {
  ::unsetenv("KUBE_MAX_PD_VOLS");
  CHECK_FALSE(upstream::maxPDVolumesFromEnv().has_value());
  ::setenv("KUBE_MAX_PD_VOLS", "7", 1);
  CHECK(upstream::maxPDVolumesFromEnv() == 7);
  for (const char* bad : {"0", "-3", "seven", "7x", ""}) {
    ::setenv("KUBE_MAX_PD_VOLS", bad, 1);
    CHECK_FALSE(upstream::maxPDVolumesFromEnv().has_value());
  }
  ::unsetenv("KUBE_MAX_PD_VOLS");
}

}  // namespace
}  // namespace koord::roles::scheduler
