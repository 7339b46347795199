#include <catch2/catch.hpp>

#include "catch_expected.h"

#include "koord/cgroup/kubepods_path.h"

using namespace koord::cgroup;

namespace {
const char* kUid = "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e";
const std::string kId(64, 'a');
}  // namespace

TEST_CASE("cgroupfs pod and container directories") {
  CHECK(qosTierDir(CgroupDriver::kCgroupfs, QoSTier::kGuaranteed) == "kubepods");
  CHECK(qosTierDir(CgroupDriver::kCgroupfs, QoSTier::kBurstable) == "kubepods/burstable");
  CHECK(qosTierDir(CgroupDriver::kCgroupfs, QoSTier::kBestEffort) == "kubepods/besteffort");
  CHECK(podDir(CgroupDriver::kCgroupfs, QoSTier::kBestEffort, kUid).value() ==
        std::string("kubepods/besteffort/pod") + kUid);
  CHECK(podDir(CgroupDriver::kCgroupfs, QoSTier::kGuaranteed, kUid).value() ==
        std::string("kubepods/pod") + kUid);
  auto pod = podDir(CgroupDriver::kCgroupfs, QoSTier::kBurstable, kUid).value();
  CHECK(containerDir(CgroupDriver::kCgroupfs, pod, "containerd", kId).value() == pod + "/" + kId);
}

TEST_CASE("systemd pod and container directories") {
  CHECK(qosTierDir(CgroupDriver::kSystemd, QoSTier::kBestEffort) ==
        "kubepods.slice/kubepods-besteffort.slice");
  auto be = podDir(CgroupDriver::kSystemd, QoSTier::kBestEffort, kUid).value();
  CHECK(be ==
        "kubepods.slice/kubepods-besteffort.slice/"
        "kubepods-besteffort-pod6e2b5f4e_2c6a_4f0c_9a51_2d8a1c0f3b7e.slice");
  CHECK(podDir(CgroupDriver::kSystemd, QoSTier::kGuaranteed, kUid).value() ==
        "kubepods.slice/kubepods-pod6e2b5f4e_2c6a_4f0c_9a51_2d8a1c0f3b7e.slice");
  CHECK(containerDir(CgroupDriver::kSystemd, be, "containerd", kId).value() ==
        be + "/cri-containerd-" + kId + ".scope");
  CHECK(containerDir(CgroupDriver::kSystemd, be, "docker", kId).value() ==
        be + "/docker-" + kId + ".scope");
  CHECK_FALSE(containerDir(CgroupDriver::kSystemd, be, "rkt", kId));
}

TEST_CASE("hostile pod UIDs and container IDs build no path") {
  for (const char* uid :
       {"../../etc", "..", "", "6e2b5f4e/../../../../etc/x", "6E2B5F4E-2C6A-4F0C-9A51-2D8A1C0F3B7E",
        "6e2b5f4e 2c6a 4f0c 9a51 2d8a1c0", "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e/x",
        "-e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e"}) {
    INFO(uid);
    CHECK_FALSE(validPodUid(uid));
    CHECK_FALSE(podDir(CgroupDriver::kCgroupfs, QoSTier::kBestEffort, uid));
    CHECK_FALSE(podDir(CgroupDriver::kSystemd, QoSTier::kBurstable, uid));
  }
  CHECK(validPodUid("0123456789abcdef0123456789abcdef"));  // a static pod's config hash
  auto pod = podDir(CgroupDriver::kCgroupfs, QoSTier::kBestEffort, kUid).value();
  for (std::string id : {std::string("../../../etc"), std::string(63, 'a'), std::string(65, 'a'),
                         std::string(63, 'a') + "/", std::string(64, 'A'), std::string()}) {
    INFO(id);
    CHECK_FALSE(validContainerId(id));
    CHECK_FALSE(containerDir(CgroupDriver::kCgroupfs, pod, "containerd", id));
  }
  CHECK_FALSE(containerDir(CgroupDriver::kCgroupfs, "kubepods/../..", "containerd", kId));
}

TEST_CASE("container status IDs name a known runtime and a valid ID") {
  auto ref = parseContainerStatusId("containerd://" + kId).value();
  CHECK(ref.runtime == "containerd");
  CHECK(ref.id == kId);
  CHECK(parseContainerStatusId("docker://" + kId).value().runtime == "docker");
  CHECK_FALSE(parseContainerStatusId(kId));
  CHECK_FALSE(parseContainerStatusId("containerd://../../etc"));
  CHECK_FALSE(parseContainerStatusId("evil://" + kId));
  CHECK_FALSE(parseContainerStatusId("://" + kId));
}

TEST_CASE("relative cgroup directories") {
  CHECK(validRelativeDir("kubepods"));
  CHECK(validRelativeDir("kubepods.slice/kubepods-besteffort.slice"));
  CHECK(validRelativeDir("system.slice/containerd.service"));
  CHECK_FALSE(validRelativeDir(""));
  CHECK_FALSE(validRelativeDir("/kubepods"));
  CHECK_FALSE(validRelativeDir("kubepods/"));
  CHECK_FALSE(validRelativeDir("kubepods//besteffort"));
  CHECK_FALSE(validRelativeDir("kubepods/../.."));
  CHECK_FALSE(validRelativeDir("kubepods/./besteffort"));
  CHECK_FALSE(validRelativeDir("kube pods"));
  CHECK_FALSE(validRelativeDir("kubepods\n"));
}

TEST_CASE("CRI cgroup parents as directories") {
  CHECK(cgroupParentDir(CgroupDriver::kCgroupfs, "/kubepods/besteffort/pod1234").value() ==
        "kubepods/besteffort/pod1234");
  CHECK(cgroupParentDir(CgroupDriver::kSystemd, "kubepods-besteffort-pod12_34.slice").value() ==
        "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod12_34.slice");
  CHECK(cgroupParentDir(CgroupDriver::kSystemd, "kubepods-pod1.slice").value() ==
        "kubepods.slice/kubepods-pod1.slice");
  CHECK(cgroupParentDir(CgroupDriver::kSystemd, "/kubepods.slice/kubepods-pod1.slice").value() ==
        "kubepods.slice/kubepods-pod1.slice");
  for (const char* bad : {"", "/", "/kubepods/../../etc", "kubepods//x", "/kubepods/a b"})
    CHECK_FALSE(cgroupParentDir(CgroupDriver::kCgroupfs, bad));
  CHECK_FALSE(cgroupParentDir(CgroupDriver::kSystemd, "../x.slice"));
}
