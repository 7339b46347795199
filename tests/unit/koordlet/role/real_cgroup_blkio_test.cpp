// BlkIOReconcile on this machine's real cgroup v1 blkio hierarchy: the besteffort tier's
// throttles for the disk under /dev/vda written by the strategy (resolved by stat(2) and sysfs)
// and read back from the kernel, a stale device's throttle removed, every throttle gone when
// the class is disabled; the kernel's missing weight file said at info, not as a fault. The
// cgroups live under a koord-blkio-<pid> directory reached through a temp root of symlinks, so
// a kubelet's own kubepods is never touched.
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "koord/cgroup/cgroup_version.h"
#include "log_lines.h"
#include "qos_strategy_modules.h"
#include "qosmanager/blkio/blkio_device.h"
#include "qosmanager/blkio/blkio_reconcile.h"
#include "statesinformer/states_snapshot.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
namespace fs = std::filesystem;

namespace {

std::string readAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The kernel's line for `device` in a per-device file, "" when it has none.
std::string lineOf(const fs::path& p, const std::string& device) {
  std::istringstream in(readAll(p));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(device + " ", 0) == 0)
      return line;
  }
  return "";
}

// A real blkio cgroup tree of our own: kubepods/besteffort under koord-blkio-<pid>.
struct RealBlkio {
  std::string name = "koord-blkio-" + std::to_string(::getpid());
  fs::path base;
  koord::testing::TempTree root{"koord-realblkio"};

  RealBlkio() {
    base = fs::canonical("/sys/fs/cgroup/blkio") / name;
    fs::create_directories(base / "kubepods/besteffort");
    fs::create_symlink(base, root.path("blkio"));
  }
  ~RealBlkio() {
    // Children first; rmdir is how cgroups are removed (their files cannot be unlinked).
    for (const char* d : {"kubepods/besteffort", "kubepods", ""})
      ::rmdir((base / d).c_str());
  }
  fs::path be(const char* file) const { return base / "kubepods/besteffort" / file; }
};

StatesSnapshot snapshot(const char* strategy) {
  auto slo = std::make_shared<NodeSLOInfo>();
  slo->resource_qos_strategy =
      std::make_shared<const boost::json::object>(boost::json::parse(strategy).as_object());
  return koord::roles::koordlet::testing::syncedSnapshot(std::move(slo));
}

}  // namespace

TEST_CASE("BE block I/O throttles written to real cgroups read back from the kernel",
          "[realcgroup]") {
  auto version = koord::cgroup::detectCgroupVersion("/sys/fs/cgroup");
  struct stat vda {};
  if (::geteuid() != 0 || ::access("/sys/fs/cgroup/blkio", W_OK) != 0 || !version ||
      *version != koord::cgroup::CgroupVersion::kV1 || ::stat("/dev/vda", &vda) != 0 ||
      !S_ISBLK(vda.st_mode)) {
    WARN("needs root, a writable cgroup v1 blkio hierarchy and a disk at /dev/vda; skipped");
    return;
  }
  const std::string disk = qosmanager::resolveDeviceBlock({}, "/dev/vda").value();
  RealBlkio cg;
  // A throttle on another disk (a loop device), as a block removed from the NodeSLO leaves it.
  {
    std::ofstream out(cg.be("blkio.throttle.read_iops_device"));
    out << "7:0 4096\n";
  }
  const bool stale = lineOf(cg.be("blkio.throttle.read_iops_device"), "7:0") == "7:0 4096";
  if (!stale)
    WARN("the kernel refused a throttle on loop0 (7:0): the stale device's reset not checked");

  koord::roles::koordlet::testing::StrategyModules m(cg.root.root());
  m.options.sys_root_dir = "/sys/";
  auto strategy = qosmanager::blkioReconcileStrategy().make(m.context());
  koord::testing::LogLines log;
  const auto now = std::chrono::system_clock::now();

  strategy->runOnce(snapshot(R"({"beClass": {"blkioQOS": {"enable": true, "blocks": [
      {"name": "/dev/vda", "type": "device", "ioCfg": {"readBPS": 1048576, "writeIOPS": 500,
        "writeBPS": 2097152, "ioWeightPercent": 50}}]}}})"),
                    now);
  CHECK(lineOf(cg.be("blkio.throttle.read_bps_device"), disk) == disk + " 1048576");
  CHECK(lineOf(cg.be("blkio.throttle.write_iops_device"), disk) == disk + " 500");
  CHECK(lineOf(cg.be("blkio.throttle.write_bps_device"), disk) == disk + " 2097152");
  CHECK(lineOf(cg.be("blkio.throttle.read_iops_device"), disk).empty());
  if (stale)
    CHECK(lineOf(cg.be("blkio.throttle.read_iops_device"), "7:0").empty());
  // This kernel has no blkio.cost.weight: named once, at info; nothing is a warning.
  if (!fs::exists(cg.be("blkio.cost.weight"))) {
    CHECK(log.count("blkio: the kernel lacks") == 1);
    CHECK(log.count("blkio.cost.weight") == 1);
  }
  CHECK(log.problems() == 0);

  // Disabled: every throttle of the tier removed.
  strategy->runOnce(snapshot(R"({"beClass": {"blkioQOS": {"enable": false}}})"), now);
  for (const char* f : {"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
                        "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"}) {
    INFO(f);
    CHECK(readAll(cg.be(f)).empty());
  }
  CHECK(log.problems() == 0);
  CHECK(log.count("blkio: the kernel lacks") <= 1);
}
