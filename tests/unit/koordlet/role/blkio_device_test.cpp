// BlkIOReconcile's block resolution on fake /dev, /sys and kubelet trees: device paths by
// stat(2) (block nodes made with mknod where the test may), partitions and single-slave
// device-mapper volumes mapped to their disk through sysfs, and pod volumes refused with the
// reason when nothing block-backed is mounted.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <filesystem>
#include <string>

#include "qosmanager/blkio/blkio_device.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet::qosmanager;
using koord::testing::TempTree;
namespace fs = std::filesystem;

namespace {

constexpr const char* kPodUid = "0f0e0d0c-0000-4000-8000-0000000000b1";

// sysfs as the kernel lays it out: vda with partition vda1, dm-0 over vda1, dm-1 over two.
void fakeSysfs(const TempTree& t) {
  t.write("sys/devices/virtual/block/vda/dev", "254:0\n");
  t.write("sys/devices/virtual/block/vda/vda1/dev", "254:1\n");
  t.write("sys/devices/virtual/block/vda/vda1/partition", "1\n");
  t.write("sys/devices/virtual/block/vdb/dev", "254:16\n");
  t.write("sys/devices/virtual/block/dm-0/dev", "253:0\n");
  t.mkdirs("sys/devices/virtual/block/dm-0/slaves");
  t.symlink("sys/devices/virtual/block/dm-0/slaves/vda1", "../../vda/vda1");
  t.write("sys/devices/virtual/block/dm-1/dev", "253:1\n");
  t.mkdirs("sys/devices/virtual/block/dm-1/slaves");
  t.symlink("sys/devices/virtual/block/dm-1/slaves/vda1", "../../vda/vda1");
  t.symlink("sys/devices/virtual/block/dm-1/slaves/vdb", "../../vdb");
  t.mkdirs("sys/dev/block");
  t.symlink("sys/dev/block/254:0", "../../devices/virtual/block/vda");
  t.symlink("sys/dev/block/254:1", "../../devices/virtual/block/vda/vda1");
  t.symlink("sys/dev/block/254:16", "../../devices/virtual/block/vdb");
  t.symlink("sys/dev/block/253:0", "../../devices/virtual/block/dm-0");
  t.symlink("sys/dev/block/253:1", "../../devices/virtual/block/dm-1");
}

BlkIORoots roots(const TempTree& t) {
  return {t.path("dev"), t.path("sys"), t.path("kubelet")};
}

bool makeBlockNode(const fs::path& p, unsigned major, unsigned minor) {
  fs::create_directories(p.parent_path());
  return ::mknod(p.c_str(), S_IFBLK | 0600, makedev(major, minor)) == 0;
}

}  // namespace

TEST_CASE("blkio device: partitions and stacked volumes map to the whole disk",
          "[koordlet][blkio]") {
  TempTree t("koord-blkio-dev");
  fakeSysfs(t);
  struct Case {
    unsigned major, minor;
    const char* disk;
  };
  const Case cases[] = {
      {254, 0, "254:0"},    // a disk
      {254, 1, "254:0"},    // its partition
      {254, 16, "254:16"},  // another disk
      {253, 0, "254:0"},    // dm over the partition
      {253, 1, "253:1"},    // dm over two devices: its own number
      {8, 0, "8:0"},        // not in sysfs: as given
  };
  for (const auto& c : cases) {
    INFO(c.major << ":" << c.minor);
    CHECK(wholeDiskOf(t.path("sys"), c.major, c.minor) == c.disk);
  }
}

TEST_CASE("blkio device: device blocks name a block node under /dev/", "[koordlet][blkio]") {
  TempTree t("koord-blkio-dev");
  fakeSysfs(t);
  t.write("dev/notblock", "");
  struct Case {
    const char* name;
    const char* error;
  };
  const Case cases[] = {
      {"vda", "not a path under /dev/"},
      {"/dev/", "not a path under /dev/"},
      {"/dev/../etc/passwd", "not a path under /dev/"},
      {"/dev/disk//vda", "not a path under /dev/"},
      {"/sys/vda", "not a path under /dev/"},
      {"/dev/missing", "No such file or directory"},
      {"/dev/notblock", "not a block device"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto r = resolveDeviceBlock(roots(t), c.name);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains(c.error));
  }

  if (!makeBlockNode(t.path("dev/vda1"), 254, 1) || !makeBlockNode(t.path("dev/vdb"), 254, 16)) {
    WARN("mknod refused (not root): block nodes not resolved here");
    return;
  }
  t.mkdirs("dev/disk/by-id");
  t.symlink("dev/disk/by-id/virtio-data", "../../vdb");
  CHECK(resolveDeviceBlock(roots(t), "/dev/vda1").value() == "254:0");
  CHECK(resolveDeviceBlock(roots(t), "/dev/vdb").value() == "254:16");
  CHECK(resolveDeviceBlock(roots(t), "/dev/disk/by-id/virtio-data").value() == "254:16");
}

TEST_CASE("blkio device: a pod volume is the block device mounted in its CSI directory",
          "[koordlet][blkio]") {
  TempTree t("koord-blkio-dev");
  fakeSysfs(t);
  const std::string csi = std::string("kubelet/pods/") + kPodUid + "/volumes/kubernetes.io~csi/";
  struct Case {
    const char* uid;
    const char* volume;
    const char* error;
  };
  const Case cases[] = {
      {"../../etc", "data", "not a UID"},
      {kPodUid, "a/b", "not a volume name"},
      {kPodUid, "..", "not a volume name"},
      {kPodUid, "", "not a volume name"},
      // A PVC's volume sits under its PV's name: without the lookup, not found.
      {kPodUid, "pvc-volume", "koord does not look PVCs up"},
      {kPodUid, "unmounted", "nothing is mounted"},
  };
  t.mkdirs(csi + "unmounted/mount");
  for (const auto& c : cases) {
    INFO(c.uid << " " << c.volume);
    auto r = resolvePodVolumeBlock(roots(t), c.uid, c.volume);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains(c.error));
  }

  // A mount of a file system without a block device (tmpfs) is refused too.
  struct stat shm {};
  struct stat here {};
  if (::stat("/dev/shm", &shm) != 0 || ::stat(t.root().c_str(), &here) != 0 ||
      shm.st_dev == here.st_dev || major(shm.st_dev) != 0) {
    WARN("no tmpfs at /dev/shm apart from the temp dir's file system: case skipped");
    return;
  }
  t.mkdirs(csi + "scratch");
  t.symlink(csi + "scratch/mount", "/dev/shm");
  auto r = resolvePodVolumeBlock(roots(t), kPodUid, "scratch");
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::Contains("not on a block device"));
}
