#include "koord/cgroup/cpu_topology.h"
#include "text_fields.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <system_error>

#include <fmt/format.h>

namespace koord::cgroup {

namespace fs = std::filesystem;

namespace {

using text::trim;

std::optional<int> parseInt(std::string_view s) {
  return text::parseNumber<int>(s);
}

// sysfs attributes are a line or two; anything longer is not the file we mean.
constexpr std::size_t kMaxSysfsFileBytes = 64 * 1024;

Expected<std::string> readSmallFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return invalidArgument(fmt::format("{}: cannot open", path.string()));
  std::string text;
  text.resize(kMaxSysfsFileBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad())
    return invalidArgument(fmt::format("{}: read failed", path.string()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxSysfsFileBytes)
    return invalidArgument(
        fmt::format("{}: larger than {} bytes", path.string(), kMaxSysfsFileBytes));
  return text;
}

Expected<int> readIntFile(const fs::path& path, int min_value) {
  auto text = readSmallFile(path);
  if (!text)
    return text.error();
  const std::string_view body = trim(*text);
  if (body.empty())
    return invalidArgument(fmt::format("{}: empty", path.string()));
  auto v = parseInt(body);
  if (!v || *v < min_value)
    return invalidArgument(
        fmt::format("{}: expected an integer >= {}, got {:?}", path.string(), min_value, body));
  return *v;
}

Expected<std::vector<int>> readCpuListFile(const fs::path& path) {
  auto text = readSmallFile(path);
  if (!text)
    return text.error();
  auto cpus = parseCpuList(*text);
  if (!cpus)
    return invalidArgument(fmt::format("{}: {}", path.string(), cpus.error().message));
  return cpus;
}

/// NUMA node id -> its directory, for each devices/system/node/node<N>; empty when the kernel has
/// no NUMA support (no such directory).
Expected<std::map<int, fs::path>> listNumaNodes(const fs::path& node_root) {
  std::map<int, fs::path> nodes;
  std::error_code ec;
  if (!fs::is_directory(node_root, ec))
    return nodes;
  fs::directory_iterator it(node_root, ec);
  if (ec)
    return invalidArgument(fmt::format("{}: {}", node_root.string(), ec.message()));
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= 4 || name.compare(0, 4, "node") != 0)
      continue;
    // Digits only: "node0" is a node, "node_possible"-like entries are not.
    const std::string_view digits = std::string_view(name).substr(4);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    if (auto id = parseInt(digits))
      nodes.emplace(*id, it->path());
  }
  if (ec)
    return invalidArgument(fmt::format("{}: {}", node_root.string(), ec.message()));
  return nodes;
}

}  // namespace

const CpuInfo* CpuTopology::find(int cpu_id) const {
  auto it = std::lower_bound(cpus.begin(), cpus.end(), cpu_id,
                             [](const CpuInfo& c, int id) { return c.cpu_id < id; });
  return it != cpus.end() && it->cpu_id == cpu_id ? &*it : nullptr;
}

Expected<CpuTopology> readCpuTopology(const fs::path& sys_root) {
  const fs::path cpu_root = sys_root / "devices/system/cpu";
  auto online = readCpuListFile(cpu_root / "online");
  if (!online)
    return online.error();
  if (online->empty())
    return invalidArgument(fmt::format("{}: no online CPU", (cpu_root / "online").string()));

  CpuTopology topo;
  topo.cpus.reserve(online->size());
  for (int id : *online) {
    const fs::path dir = cpu_root / fmt::format("cpu{}", id) / "topology";
    auto core = readIntFile(dir / "core_id", 0);
    if (!core)
      return core.error();
    auto socket = readIntFile(dir / "physical_package_id", -1);
    if (!socket)
      return socket.error();
    topo.cpus.push_back(
        CpuInfo{.cpu_id = id, .core_id = *core, .socket_id = std::max(*socket, 0), .node_id = 0});
  }

  auto nodes = listNumaNodes(sys_root / "devices/system/node");
  if (!nodes)
    return nodes.error();
  std::map<int, int> node_of_cpu;
  for (const auto& [node_id, dir] : *nodes) {
    auto cpus = readCpuListFile(dir / "cpulist");
    if (!cpus)
      return cpus.error();
    for (int cpu : *cpus) {
      if (!node_of_cpu.emplace(cpu, node_id).second)
        return invalidArgument(fmt::format("{}: cpu {} is already on node {}",
                                           (dir / "cpulist").string(), cpu, node_of_cpu[cpu]));
    }
  }
  for (CpuInfo& c : topo.cpus) {
    if (auto it = node_of_cpu.find(c.cpu_id); it != node_of_cpu.end())
      c.node_id = it->second;
  }
  return topo;
}

}  // namespace koord::cgroup
