// koord-device-daemon reads PCI attributes (vendor, class, device, numa_node), NUMA cpulists and
// package ids from sysfs, where a driver or a container runtime's fake /sys can put anything. The
// scanner only reads from a directory, so each input becomes a small sysfs tree in a directory of
// this process's own: the provider gives the device's name and each file's content.
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "koord/core/log.h"
#include "pci_address.h"
#include "sysfs_pci_scanner.h"

namespace {

namespace fs = std::filesystem;

const fs::path& root() {
  static const fs::path path = [] {
    std::string dir = (fs::temp_directory_path() / "koord-sysfs-fuzz-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr)
      std::abort();
    // Every skipped device is logged; thousands of lines a second would only slow the run.
    koord::log::setSink([](std::string_view) {});
    return fs::path(dir);
  }();
  return path;
}

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const fs::path sys = root() / "sys";
  std::error_code ec;
  fs::remove_all(sys, ec);
  const std::string name = in.ConsumeRandomLengthString(32);
  (void)koord::roles::device_daemon::normalizePciAddress(name);
  // A valid address most of the time, so the attribute readers are reached.
  const std::string bus_id = in.ConsumeBool() ? "0000:3b:00.0" : name;
  if (bus_id.empty() || bus_id.find('/') != std::string::npos || bus_id == "." || bus_id == "..")
    return 0;
  const fs::path dev = sys / "bus/pci/devices" / bus_id;
  for (const char* attribute : {"vendor", "class", "device", "numa_node"})
    if (in.ConsumeBool())
      write(dev / attribute, in.ConsumeRandomLengthString(16));
  if (in.ConsumeBool())
    write(dev / "infiniband/mlx5_0/ports", "");
  for (int node = 0; node < 2; ++node)
    write(sys / ("devices/system/node/node" + std::to_string(node) + "/cpulist"),
          in.ConsumeRandomLengthString(16));
  for (int cpu = 0; cpu < 2; ++cpu)
    write(sys / ("devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/physical_package_id"),
          in.ConsumeRandomLengthString(8));
  fs::create_directories(sys / "bus/pci/devices", ec);
  (void)koord::roles::device_daemon::scanPciDevices(sys);
  return 0;
}
