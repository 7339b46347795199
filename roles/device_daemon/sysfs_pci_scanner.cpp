#include "sysfs_pci_scanner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <system_error>

#include "koord/cgroup/cpu_topology.h"
#include "koord/core/log.h"
#include "koord/http/file_util.h"
#include "pci_address.h"
#include "pci_vendors.h"

namespace koord::roles::device_daemon {

namespace fs = std::filesystem;

namespace {

// The kernel never writes a NUMA node id above MAX_NUMNODES (1024 on x86_64, 4096 at most).
constexpr int kMaxNumaNode = 4095;

std::string_view trimTrailingSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

// What a garbled file held, fit for one log line: short, control bytes shown as '?'.
std::string quoted(std::string_view content) {
  constexpr std::size_t kShown = 24;
  std::string out = "\"";
  for (char c : content.substr(0, kShown))
    out.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : '?');
  if (content.size() > kShown)
    out += "...";
  out += "\"";
  return out;
}

kube::Error garbled(const fs::path& file, std::string_view content) {
  return kube::makeKubeError(
      fmt::format("{}: truncated or garbled: {}", file.string(), quoted(content)));
}

kube::Expected<std::string> readAttribute(const fs::path& file) {
  auto text = http::readFile(file.string());
  if (!text)
    return kube::Error(fmt::format("{}: {}", file.string(), text.error().message()), text.error());
  return std::move(*text);
}

// The kernel writes ids as "0x%04x" and classes as "0x%06x": anything else, a shorter number
// included, is a file cut off or corrupted, not a different device.
kube::Expected<uint32_t> readHexAttribute(const fs::path& file, std::size_t digits) {
  auto text = readAttribute(file);
  if (!text)
    return text.error();
  std::string_view v = trimTrailingSpace(*text);
  if (v.size() != digits + 2 || !v.starts_with("0x"))
    return garbled(file, *text);
  uint32_t value = 0;
  auto [end, ec] = std::from_chars(v.data() + 2, v.data() + v.size(), value, 16);
  if (ec != std::errc() || end != v.data() + v.size())
    return garbled(file, *text);
  return value;
}

kube::Expected<int> parseInt(const fs::path& file, const std::string& text, int min, int max) {
  std::string_view v = trimTrailingSpace(text);
  int value = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || value < min || value > max)
    return garbled(file, text);
  return value;
}

bool missing(const kube::Error& e) {
  return e.code == boost::system::errc::no_such_file_or_directory;
}

// "pci0000:3a" in the device link's target (../../../devices/pci0000:3a/0000:3a:00.0/...).
std::string pcieRootOf(const fs::path& device_link) {
  std::error_code ec;
  fs::path target = fs::read_symlink(device_link, ec);
  if (ec)
    return "";
  for (const auto& part : target) {
    std::string name = part.string();
    if (!name.starts_with("pci"))
      continue;
    // The root bus's own address is "<domain>:<bus>"; borrow the full-address check with a
    // made-up device and function.
    if (normalizePciAddress(name.substr(3) + ":00.0"))
      return name;
  }
  return "";
}

bool hasRdmaDevice(const fs::path& device_dir) {
  std::error_code ec;
  fs::path ib = device_dir / "infiniband";
  return fs::is_directory(ib, ec) && !fs::is_empty(ib, ec) && !ec;
}

// NUMA node -> socket, resolved once per node per scan so a garbled CPU file warns once.
class SocketResolver {
 public:
  explicit SocketResolver(fs::path sysfs_root) : root_(std::move(sysfs_root)) {}

  int socketOf(int numa_node) {
    if (numa_node < 0)
      return -1;
    auto [it, inserted] = cache_.try_emplace(numa_node, -1);
    if (inserted)
      it->second = resolve(numa_node);
    return it->second;
  }

 private:
  int resolve(int numa_node) {
    fs::path cpulist_file = root_ / fmt::format("devices/system/node/node{}/cpulist", numa_node);
    auto text = readAttribute(cpulist_file);
    if (!text) {
      warnUnlessMissing(text.error());
      return -1;
    }
    auto cpus = cgroup::parseCpuList(*text);
    if (!cpus) {
      KOORD_LOG_WARNING("device-daemon: socket of NUMA node {} unknown: {}", numa_node,
                        garbled(cpulist_file, *text).message);
      return -1;
    }
    // A node with memory and no CPUs (HBM, CXL) belongs to no socket.
    if (cpus->empty())
      return -1;
    fs::path package_file =
        root_ / fmt::format("devices/system/cpu/cpu{}/topology/physical_package_id", cpus->front());
    auto package = readAttribute(package_file);
    if (!package) {
      warnUnlessMissing(package.error());
      return -1;
    }
    auto socket = parseInt(package_file, *package, -1, 1 << 16);
    if (!socket) {
      KOORD_LOG_WARNING("device-daemon: socket of NUMA node {} unknown: {}", numa_node,
                        socket.error().message);
      return -1;
    }
    return *socket;
  }

  static void warnUnlessMissing(const kube::Error& e) {
    // Containers and VMs often lack these files: unknown is the honest answer, not a fault.
    if (missing(e)) {
      KOORD_VLOG(4, "device-daemon: {}", e.message);
      return;
    }
    KOORD_LOG_WARNING("device-daemon: cannot read CPU topology: {}", e.message);
  }

  fs::path root_;
  std::map<int, int> cache_;
};

// One device directory; nullopt when it is not reported (logged if it was unreadable).
std::optional<PciDevice> scanDevice(const fs::path& dir, const std::string& bus_id,
                                    SocketResolver& sockets) {
  auto skip = [&](const kube::Error& e) -> std::optional<PciDevice> {
    KOORD_LOG_WARNING("device-daemon: skipping PCI device {}: {}", bus_id, e.message);
    return std::nullopt;
  };
  auto vendor_id = readHexAttribute(dir / "vendor", 4);
  if (!vendor_id)
    return skip(vendor_id.error());
  auto class_code = readHexAttribute(dir / "class", 6);
  if (!class_code)
    return skip(class_code.error());

  PciDevice d;
  d.bus_id = bus_id;
  d.vendor_id = static_cast<uint16_t>(*vendor_id);
  d.class_code = *class_code;
  if (auto accelerator = acceleratorVendor(d.vendor_id, d.class_code)) {
    d.kind = PciDeviceKind::kAccelerator;
    d.vendor = std::string(*accelerator);
  } else if (hasRdmaDevice(dir)) {
    d.kind = PciDeviceKind::kRdmaNic;
    d.vendor = nicVendorName(d.vendor_id);
  } else {
    return std::nullopt;
  }

  auto device_id = readHexAttribute(dir / "device", 4);
  if (!device_id)
    return skip(device_id.error());
  d.device_id = static_cast<uint16_t>(*device_id);

  // Kernels built without NUMA support have no numa_node file: the node is unknown.
  fs::path numa_file = dir / "numa_node";
  auto numa_text = readAttribute(numa_file);
  if (numa_text) {
    auto numa = parseInt(numa_file, *numa_text, -1, kMaxNumaNode);
    if (!numa)
      return skip(numa.error());
    d.numa_node = *numa;
  } else if (!missing(numa_text.error())) {
    return skip(numa_text.error());
  }
  d.socket_id = sockets.socketOf(d.numa_node);
  d.pcie_root = pcieRootOf(dir);
  return d;
}

}  // namespace

kube::Expected<std::vector<PciDevice>> scanPciDevices(const fs::path& sysfs_root) {
  fs::path devices_dir = sysfs_root / "bus/pci/devices";
  std::error_code ec;
  fs::directory_iterator it(devices_dir, ec);
  if (ec) {
    return kube::Error(fmt::format("cannot list {}: {}", devices_dir.string(), ec.message()),
                       boost::system::error_code(ec.value(), boost::system::system_category()));
  }
  std::vector<std::string> bus_ids;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (normalizePciAddress(name) != name) {
      KOORD_LOG_WARNING("device-daemon: ignoring {}: not a PCI address", it->path().string());
      continue;
    }
    bus_ids.push_back(std::move(name));
  }
  if (ec) {
    return kube::Error(fmt::format("cannot list {}: {}", devices_dir.string(), ec.message()),
                       boost::system::error_code(ec.value(), boost::system::system_category()));
  }
  std::sort(bus_ids.begin(), bus_ids.end());

  SocketResolver sockets(sysfs_root);
  std::vector<PciDevice> out;
  for (const auto& bus_id : bus_ids) {
    if (auto d = scanDevice(devices_dir / bus_id, bus_id, sockets))
      out.push_back(std::move(*d));
  }
  return out;
}

}  // namespace koord::roles::device_daemon
