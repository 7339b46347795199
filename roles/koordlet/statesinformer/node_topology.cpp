// The koordlet's NodeResourceTopology: sysfs reads, the kubelet's CPU reservation order, the
// status Koordinator's koordlet computes, and how it is compared with and written over the
// object the API server holds.
#include "statesinformer/node_topology.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "koord/apis/input_limits.h"
#include "runtimehooks/cpuset/cpuset_allocator.h"
#include "statesinformer/node_reservation.h"

namespace koord::roles::koordlet {

namespace fs = std::filesystem;
namespace json = boost::json;
using kube::Expected;
using kube::makeKubeError;

namespace {

// ---- files ---------------------------------------------------------------------------------

// sysfs attributes and a node's meminfo are a few KiB at most.
constexpr std::size_t kMaxSysfsFileBytes = 64 * 1024;

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos)
    return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

template <typename T>
std::optional<T> parseNumber(std::string_view s) {
  T v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    return std::nullopt;
  return v;
}

// n * factor, or nullopt past int64.
std::optional<std::int64_t> times(std::int64_t n, std::int64_t factor) {
  if (n < 0 || factor < 0 || (factor != 0 && n > std::numeric_limits<std::int64_t>::max() / factor))
    return std::nullopt;
  return n * factor;
}

// "Node 0 MemTotal:       16318372 kB" -> bytes.
Expected<std::int64_t> nodeMemTotal(const fs::path& path) {
  auto text = readFileBounded(path, kMaxSysfsFileBytes);
  if (!text)
    return text.error();
  if (!*text)
    return makeKubeError(fmt::format("{}: missing", path.string()));
  std::string_view rest = **text;
  while (!rest.empty()) {
    const auto eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    const auto key = line.find("MemTotal:");
    if (key == std::string_view::npos)
      continue;
    std::string_view value = trim(line.substr(key + 9));
    std::int64_t factor = 1;
    if (value.ends_with("kB")) {
      factor = 1024;
      value = trim(value.substr(0, value.size() - 2));
    }
    auto n = parseNumber<std::int64_t>(value);
    auto bytes = n ? times(*n, factor) : std::nullopt;
    if (!bytes)
      return makeKubeError(fmt::format("{}: MemTotal: {:?} is not a size", path.string(), value));
    return *bytes;
  }
  return makeKubeError(fmt::format("{}: no MemTotal", path.string()));
}

// The bytes of node_dir's hugepages of `page_kib` KiB: 0 without the directory.
Expected<std::int64_t> nodeHugepages(const fs::path& node_dir, std::int64_t page_kib) {
  const fs::path path =
      node_dir / "hugepages" / fmt::format("hugepages-{}kB", page_kib) / "nr_hugepages";
  auto text = readFileBounded(path, kMaxSysfsFileBytes);
  if (!text)
    return text.error();
  if (!*text)
    return 0;
  auto pages = parseNumber<std::int64_t>(trim(**text));
  auto bytes = pages ? times(*pages, page_kib * 1024) : std::nullopt;
  if (!bytes)
    return makeKubeError(fmt::format("{}: {:?} is not a page count", path.string(), trim(**text)));
  return *bytes;
}

// The first "<key>\t: value" line of /proc/cpuinfo.
std::string cpuinfoValue(std::string_view cpuinfo, std::initializer_list<std::string_view> keys) {
  std::string_view rest = cpuinfo;
  while (!rest.empty()) {
    const auto eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos)
      continue;
    const std::string_view name = trim(line.substr(0, colon));
    for (std::string_view key : keys) {
      if (name == key)
        return std::string(trim(line.substr(colon + 1)));
    }
  }
  return "unknown";
}

// ---- CPU sets --------------------------------------------------------------------------------

struct CoreKey {
  int socket = 0;
  int core = 0;
  friend auto operator<=>(const CoreKey&, const CoreKey&) = default;
};

CoreKey coreOf(const cgroup::CpuInfo& c) {
  return {c.socket_id, c.core_id};
}

std::vector<int> difference(const std::vector<int>& sorted, const std::set<int>& remove) {
  std::vector<int> out;
  out.reserve(sorted.size());
  for (int cpu : sorted) {
    if (!remove.contains(cpu))
      out.push_back(cpu);
  }
  return out;
}

// The kubelet's cpuAccumulator, sockets first (Koordinator's choice).
class Accumulator {
 public:
  Accumulator(const cgroup::CpuTopology& topology, std::span<const int> available, int needed)
      : topology_(topology), needed_(needed) {
    for (const auto& c : topology.cpus) {
      socket_cpus_[c.socket_id].push_back(c.cpu_id);
      node_cpus_[c.node_id].push_back(c.cpu_id);
      core_cpus_[coreOf(c)].push_back(c.cpu_id);
    }
    for (int cpu : available) {
      if (topology.find(cpu) != nullptr)
        available_.insert(cpu);
    }
    const int cpus = static_cast<int>(topology.cpus.size());
    cpus_per_socket_ = socket_cpus_.empty() ? 0 : cpus / static_cast<int>(socket_cpus_.size());
    cpus_per_core_ = core_cpus_.empty() ? 0 : cpus / static_cast<int>(core_cpus_.size());
  }

  std::vector<int> take() {
    if (needed_ < 1 || needed_ > static_cast<int>(available_.size()))
      return {};
    for (int socket : freeOf(sortedSockets(), socket_cpus_, cpus_per_socket_)) {
      if (!takeWhole(socket_cpus_.at(socket)))
        continue;
      if (satisfied())
        return result();
    }
    for (int node : freeNodes()) {
      if (!takeWhole(node_cpus_.at(node)))
        continue;
      if (satisfied())
        return result();
    }
    for (const CoreKey& core : freeOf(sortedCores(), core_cpus_, cpus_per_core_)) {
      if (!takeWhole(core_cpus_.at(core)))
        continue;
      if (satisfied())
        return result();
    }
    for (int cpu : sortedCpus()) {
      taken_.insert(cpu);
      available_.erase(cpu);
      if (--needed_ < 1)
        return result();
    }
    return {};
  }

 private:
  bool satisfied() const { return needed_ < 1; }
  std::vector<int> result() const { return {taken_.begin(), taken_.end()}; }

  // Takes `cpus` when the request still needs that many.
  bool takeWhole(const std::vector<int>& cpus) {
    if (needed_ < static_cast<int>(cpus.size()))
      return false;
    for (int cpu : cpus) {
      taken_.insert(cpu);
      available_.erase(cpu);
    }
    needed_ -= static_cast<int>(cpus.size());
    return true;
  }

  template <typename K>
  std::map<K, int> availableBy(K (*key)(const cgroup::CpuInfo&)) const {
    std::map<K, int> counts;
    for (int cpu : available_)
      ++counts[key(*topology_.find(cpu))];
    return counts;
  }
  static int socketKey(const cgroup::CpuInfo& c) { return c.socket_id; }
  static int nodeKey(const cgroup::CpuInfo& c) { return c.node_id; }

  // `ids` ordered by how many available CPUs they hold, then by id.
  template <typename K>
  static void order(std::vector<K>& ids, const std::map<K, int>& counts) {
    std::stable_sort(ids.begin(), ids.end(), [&](const K& a, const K& b) {
      const int ca = counts.at(a), cb = counts.at(b);
      return ca != cb ? ca < cb : a < b;
    });
  }

  template <typename K>
  static void appendOnce(std::vector<K>& out, std::set<K>& seen, const std::vector<K>& ids) {
    for (const K& id : ids) {
      if (seen.insert(id).second)
        out.push_back(id);
    }
  }

  std::vector<int> sortedSockets() const {
    auto counts = availableBy<int>(socketKey);
    std::vector<int> ids;
    for (const auto& [id, n] : counts)
      ids.push_back(id);
    order(ids, counts);
    return ids;
  }

  std::vector<int> sortedNodes() const {
    auto counts = availableBy<int>(nodeKey);
    std::vector<int> out;
    std::set<int> seen;
    for (int socket : sortedSockets()) {
      std::set<int> in_socket;
      for (int cpu : available_) {
        const auto* c = topology_.find(cpu);
        if (c->socket_id == socket)
          in_socket.insert(c->node_id);
      }
      std::vector<int> ids(in_socket.begin(), in_socket.end());
      order(ids, counts);
      appendOnce(out, seen, ids);
    }
    return out;
  }

  std::vector<CoreKey> sortedCores() const {
    auto counts = availableBy<CoreKey>(coreOf);
    std::vector<CoreKey> out;
    std::set<CoreKey> seen;
    for (int node : sortedNodes()) {
      std::set<CoreKey> in_node;
      for (int cpu : available_) {
        const auto* c = topology_.find(cpu);
        if (c->node_id == node)
          in_node.insert(coreOf(*c));
      }
      std::vector<CoreKey> ids(in_node.begin(), in_node.end());
      order(ids, counts);
      appendOnce(out, seen, ids);
    }
    return out;
  }

  std::vector<int> sortedCpus() const {
    std::vector<int> out;
    for (const CoreKey& core : sortedCores()) {
      for (int cpu : core_cpus_.at(core)) {
        if (available_.contains(cpu))
          out.push_back(cpu);
      }
    }
    return out;
  }

  // The ids whose available CPUs number `whole`.
  template <typename K>
  std::vector<K> freeOf(const std::vector<K>& sorted, const std::map<K, std::vector<int>>& all,
                        int whole) const {
    std::vector<K> out;
    for (const K& id : sorted) {
      int n = 0;
      for (int cpu : all.at(id))
        n += available_.contains(cpu) ? 1 : 0;
      if (n == whole)
        out.push_back(id);
    }
    return out;
  }

  std::vector<int> freeNodes() const {
    std::vector<int> out;
    for (int node : sortedNodes()) {
      const auto& cpus = node_cpus_.at(node);
      if (std::all_of(cpus.begin(), cpus.end(), [&](int c) { return available_.contains(c); }))
        out.push_back(node);
    }
    return out;
  }

  const cgroup::CpuTopology& topology_;
  int needed_;
  std::map<int, std::vector<int>> socket_cpus_;
  std::map<int, std::vector<int>> node_cpus_;
  std::map<CoreKey, std::vector<int>> core_cpus_;
  int cpus_per_socket_ = 0;
  int cpus_per_core_ = 0;
  std::set<int> available_;
  std::set<int> taken_;
};

// ---- annotations the status carries -----------------------------------------------------------

// The resource-status cpuset as Koordinator's calGuaranteedCpu reads it, whatever the pod's
// QoS: a pod that has one is koord's, not the kubelet's.
bool hasResourceStatusCpus(const PodMeta& pod) {
  auto it = pod.annotations.find(apis::kAnnotationResourceStatus);
  if (it == pod.annotations.end() || it->second.size() > apis::kMaxAnnotationValueBytes)
    return false;
  boost::system::error_code ec;
  const json::value v = json::parse(it->second, ec);
  if (ec || !v.is_object())
    return false;
  const json::value* cpuset = v.get_object().if_contains("cpuset");
  if (cpuset == nullptr || !cpuset->is_string())
    return false;
  auto cpus = cgroup::parseCpuList(std::string_view(cpuset->get_string()));
  return cpus && !cpus->empty();
}

struct SystemQOS {
  std::string value = "{}";         // the annotation as Koordinator re-marshals it
  std::vector<int> exclusive_cpus;  // empty unless the cpuset is exclusive
};

// node.koordinator.sh/system-qos-resource: {"cpuset", "cpusetExclusive" (default true)}.
SystemQOS systemQOS(const NodeInfo& node, std::vector<std::string>& warnings) {
  SystemQOS out;
  auto it = node.annotations.find(apis::kAnnotationNodeSystemQOSResource);
  if (it == node.annotations.end())
    return out;
  auto refuse = [&](std::string_view why) {
    warnings.push_back(fmt::format("node {}: {}: {}; read as unset", node.name,
                                   apis::kAnnotationNodeSystemQOSResource, why));
    return SystemQOS{};
  };
  if (it->second.size() > apis::kMaxAnnotationValueBytes)
    return refuse("longer than an annotation may be");
  boost::system::error_code ec;
  const json::value v = json::parse(it->second, ec);
  if (ec)
    return refuse("not JSON");
  if (v.is_null())
    return out;
  if (!v.is_object())
    return refuse("expected an object");
  const json::object& o = v.get_object();
  json::object value;
  std::string cpuset;
  if (const json::value* s = o.if_contains("cpuset"); s != nullptr && !s->is_null()) {
    if (!s->is_string())
      return refuse("cpuset: expected a string");
    cpuset = s->get_string();
    if (!cpuset.empty())
      value["cpuset"] = cpuset;
  }
  bool exclusive = true;
  if (const json::value* e = o.if_contains("cpusetExclusive"); e != nullptr && !e->is_null()) {
    if (!e->is_bool())
      return refuse("cpusetExclusive: expected a boolean");
    exclusive = e->get_bool();
    value["cpusetExclusive"] = exclusive;
  }
  out.value = json::serialize(value);
  if (!cpuset.empty() && exclusive) {
    auto cpus = cgroup::parseCpuList(cpuset);
    if (!cpus)
      return refuse(fmt::format("cpuset: {}", cpus.error().message));
    out.exclusive_cpus = std::move(*cpus);
  }
  return out;
}

// The reservation's CPUs: reservedCPUs, else resources.cpu rounded up and taken by topology.
std::vector<int> reservedCPUs(const cgroup::CpuTopology& topology, const NodeInfo& node,
                              std::vector<std::string>& warnings) {
  auto reservation = nodeReservation(node);
  if (!reservation) {
    warnings.push_back(fmt::format("node {}: {}: {}; read as unset", node.name,
                                   apis::kAnnotationNodeReservation, reservation.error().message));
    return {};
  }
  if (!reservation->reserved_cpus.empty())
    return reservation->reserved_cpus;
  if (reservation->cpu_milli <= 0)
    return {};
  const std::int64_t count = (reservation->cpu_milli + 999) / 1000;
  if (count > static_cast<std::int64_t>(topology.cpus.size()))
    return {};
  std::vector<int> all;
  for (const auto& c : topology.cpus)
    all.push_back(c.cpu_id);
  return takeByTopology(topology, all, static_cast<int>(count));
}

// CPUs by NUMA node as pools, ordered by (socket, node).
std::vector<apis::CPUSharedPool> poolsOf(const cgroup::CpuTopology& topology,
                                         const std::set<int>& cpus) {
  std::map<int, std::vector<int>> by_node;
  for (int cpu : cpus) {
    if (const auto* c = topology.find(cpu))
      by_node[c->node_id].push_back(cpu);
  }
  std::vector<apis::CPUSharedPool> pools;
  for (const auto& [node, ids] : by_node) {
    pools.push_back({.socket = topology.find(ids.front())->socket_id,
                     .node = node,
                     .cpuset = cgroup::formatCpuList(ids)});
  }
  std::stable_sort(pools.begin(), pools.end(), [](const auto& a, const auto& b) {
    return a.socket != b.socket ? a.socket < b.socket : a.node < b.node;
  });
  return pools;
}

// Each pool without `remove`; a pool's cpuset is koord's own text, so it always parses.
void removeFromPools(std::vector<apis::CPUSharedPool>& pools, const std::vector<int>& remove) {
  if (remove.empty())
    return;
  const std::set<int> gone(remove.begin(), remove.end());
  for (auto& pool : pools) {
    auto cpus = cgroup::parseCpuList(pool.cpuset);
    if (cpus)
      pool.cpuset = cgroup::formatCpuList(difference(*cpus, gone));
  }
}

std::vector<apis::Zone> zonesOf(const cgroup::CpuTopology& topology,
                                std::span<const NumaMemory> numa) {
  using kube::Quantity;
  std::vector<apis::Zone> zones;
  for (const NumaMemory& m : numa) {
    const auto cpus = std::count_if(topology.cpus.begin(), topology.cpus.end(),
                                    [&](const auto& c) { return c.node_id == m.node_id; });
    // What hugepages hold is not memory pods can ask for.
    std::int64_t memory = std::max<std::int64_t>(0, m.mem_total);
    memory -= std::min(memory, m.hugepages_2mi);
    memory -= std::min(memory, m.hugepages_1gi);
    auto info = [](std::string name, Quantity q) {
      return apis::ZoneResourceInfo{std::move(name), q, q, q};
    };
    apis::Zone z;
    z.name = apis::nodeZoneName(m.node_id);
    z.type = apis::kZoneTypeNode;
    // By name, as Koordinator orders them.
    z.resources = {
        info("cpu", Quantity::fromInt(cpus)),
        info("hugepages-1Gi", Quantity::fromInt(m.hugepages_1gi, Quantity::Format::kBinarySI)),
        info("hugepages-2Mi", Quantity::fromInt(m.hugepages_2mi, Quantity::Format::kBinarySI)),
        info("memory", Quantity::fromInt(memory, Quantity::Format::kBinarySI)),
    };
    zones.push_back(std::move(z));
  }
  std::stable_sort(zones.begin(), zones.end(),
                   [](const auto& a, const auto& b) { return a.name < b.name; });
  return zones;
}

// The keys of the status, compared as JSON.
constexpr std::string_view kStatusAnnotations[] = {
    apis::kAnnotationCPUBasicInfo,       apis::kAnnotationKubeletCPUManagerPolicy,
    apis::kAnnotationNodeCPUSharedPools, apis::kAnnotationNodeBECPUSharedPools,
    apis::kAnnotationNodeCPUTopology,    apis::kAnnotationNodeCPUAllocs,
    apis::kAnnotationNodeReservation,    apis::kAnnotationNodeSystemQOSResource,
};

bool sameJson(std::string_view a, std::string_view b) {
  if (a == b)
    return true;
  boost::system::error_code ea, eb;
  const json::value va = json::parse(a, ea);
  const json::value vb = json::parse(b, eb);
  if (ea || eb)
    return false;
  return va == vb;
}

// zone name -> resource name -> allocatable (Koordinator's ZoneListToZoneResourceList).
using ZoneResources = std::map<std::string, kube::ResourceList, std::less<>>;

ZoneResources zoneResources(std::span<const apis::Zone> zones) {
  ZoneResources out;
  for (const auto& z : zones) {
    auto& list = out[z.name];
    for (const auto& r : z.resources)
      list.insert_or_assign(r.name, r.allocatable);
  }
  return out;
}

std::vector<apis::Zone> zonesFrom(const ZoneResources& resources) {
  std::vector<apis::Zone> zones;
  for (const auto& [name, list] : resources) {
    apis::Zone z;
    z.name = name;
    z.type = apis::kZoneTypeNode;
    for (const auto& [resource, q] : list)
      z.resources.push_back({resource, q, q, q});
    zones.push_back(std::move(z));
  }
  return zones;
}

json::value zonesJson(std::span<const apis::Zone> zones) {
  apis::NodeResourceTopology holder;
  holder.zones.assign(zones.begin(), zones.end());
  return encodeNodeResourceTopology(holder).as_object().at("zones");
}

}  // namespace

Expected<std::optional<std::string>> readFileBounded(const fs::path& path, std::size_t limit) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    return std::optional<std::string>();
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeKubeError(fmt::format("{}: cannot open", path.string()));
  // Grown as the file is read, never sized to the limit up front: /proc/cpuinfo's bound is
  // generous, and a buffer of that size touched in full was most of the koordlet's peak RSS.
  std::string text;
  char chunk[16 * 1024];
  while (in) {
    in.read(chunk, sizeof chunk);
    const auto n = static_cast<std::size_t>(in.gcount());
    if (n > limit - std::min(limit, text.size()))
      return makeKubeError(fmt::format("{}: larger than {} bytes", path.string(), limit));
    text.append(chunk, n);
  }
  if (in.bad())
    return makeKubeError(fmt::format("{}: read failed", path.string()));
  return std::optional<std::string>(std::move(text));
}

Expected<std::vector<NumaMemory>> readNumaMemory(const fs::path& sys_root, bool hugepages) {
  const fs::path root = sys_root / "devices/system/node";
  std::vector<NumaMemory> out;
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return out;
  std::map<int, fs::path> nodes;
  fs::directory_iterator it(root, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= 4 || !name.starts_with("node"))
      continue;
    auto id = parseNumber<int>(std::string_view(name).substr(4));
    if (!id || *id < 0 || !std::isdigit(static_cast<unsigned char>(name[4])))
      continue;
    if (nodes.size() == kMaxNumaNodes)
      return makeKubeError(
          fmt::format("{}: more than {} NUMA nodes", root.string(), kMaxNumaNodes));
    nodes.emplace(*id, it->path());
  }
  if (ec)
    return makeKubeError(fmt::format("{}: {}", root.string(), ec.message()));
  for (const auto& [id, dir] : nodes) {
    NumaMemory m{.node_id = id};
    auto total = nodeMemTotal(dir / "meminfo");
    if (!total)
      return total.error();
    m.mem_total = *total;
    if (hugepages) {
      auto two = nodeHugepages(dir, 2048);
      if (!two)
        return two.error();
      auto one = nodeHugepages(dir, 1048576);
      if (!one)
        return one.error();
      m.hugepages_2mi = *two;
      m.hugepages_1gi = *one;
    }
    out.push_back(m);
  }
  return out;
}

apis::CPUBasicInfo readCPUBasicInfo(const fs::path& proc_root, const fs::path& sys_root,
                                    const fs::path& sys_fs_root,
                                    const cgroup::CpuTopology& topology) {
  apis::CPUBasicInfo info;
  // /proc/cpuinfo is about 1 KiB per CPU; the first processor's lines are all that is read.
  auto cpuinfo = readFileBounded(proc_root / "cpuinfo", 16 * 1024 * 1024);
  const std::string text = cpuinfo && *cpuinfo ? std::move(**cpuinfo) : std::string();
  info.cpu_model = cpuinfoValue(text, {"model name", "Model Name"});
  info.vendor_id = cpuinfoValue(text, {"vendor_id"});

  auto smt = readFileBounded(sys_root / "devices/system/cpu/smt/active", kMaxSysfsFileBytes);
  if (smt && *smt && parseNumber<int>(trim(**smt))) {
    info.hyper_thread_enabled = parseNumber<int>(trim(**smt)) == 1;
  } else {
    std::map<CoreKey, int> threads;
    for (const auto& c : topology.cpus)
      info.hyper_thread_enabled = info.hyper_thread_enabled || ++threads[coreOf(c)] > 1;
  }
  auto no_turbo =
      readFileBounded(sys_root / "devices/system/cpu/intel_pstate/no_turbo", kMaxSysfsFileBytes);
  if (no_turbo && *no_turbo)
    info.turbo_enabled = parseNumber<int>(trim(**no_turbo)) == 0;
  auto cbm = readFileBounded(sys_fs_root / "resctrl/info/L3/cbm_mask", kMaxSysfsFileBytes);
  if (cbm && *cbm)
    info.cat_l3_cbm_mask = std::string(trim(**cbm));
  return info;
}

std::vector<int> takeByTopology(const cgroup::CpuTopology& topology, std::span<const int> available,
                                int count) {
  return Accumulator(topology, available, count).take();
}

std::string_view topologyPolicyOf(std::string_view kubelet_policy, std::string_view kubelet_scope) {
  const bool pod = kubelet_scope == "pod";
  if (!pod && kubelet_scope != "container")
    return apis::kTopologyPolicyNone;
  if (kubelet_policy == "single-numa-node") {
    return pod ? apis::kTopologyPolicySingleNUMANodePodLevel
               : apis::kTopologyPolicySingleNUMANodeContainerLevel;
  }
  if (kubelet_policy == "restricted") {
    return pod ? apis::kTopologyPolicyRestrictedPodLevel
               : apis::kTopologyPolicyRestrictedContainerLevel;
  }
  if (kubelet_policy == "best-effort") {
    return pod ? apis::kTopologyPolicyBestEffortPodLevel
               : apis::kTopologyPolicyBestEffortContainerLevel;
  }
  return apis::kTopologyPolicyNone;
}

Expected<std::vector<apis::PodCPUAlloc>> kubeletPodCPUAllocs(std::string_view cpu_manager_state,
                                                             std::span<const PodMeta> pods,
                                                             std::vector<std::string>& warnings) {
  constexpr std::string_view kWhat = "cpu_manager_state";
  if (cpu_manager_state.size() > kMaxCPUManagerStateBytes) {
    return makeKubeError(fmt::format("{}: {} bytes, more than the {} allowed", kWhat,
                                     cpu_manager_state.size(), kMaxCPUManagerStateBytes));
  }
  if (trim(cpu_manager_state).empty())
    return makeKubeError(fmt::format("{}: empty", kWhat));
  boost::system::error_code ec;
  const json::value v = json::parse(cpu_manager_state, ec);
  if (ec)
    return makeKubeError(fmt::format("{}: not JSON: {}", kWhat, ec.message()));
  if (!v.is_object())
    return makeKubeError(fmt::format("{}: expected an object", kWhat));
  std::vector<apis::PodCPUAlloc> out;
  const json::value* entries = v.get_object().if_contains("entries");
  if (entries == nullptr || entries->is_null())
    return out;
  if (!entries->is_object())
    return makeKubeError(fmt::format("{}: entries: expected an object", kWhat));
  std::map<std::string_view, const PodMeta*> by_uid;
  std::set<std::string_view> managed;
  for (const PodMeta& p : pods) {
    by_uid.emplace(p.uid, &p);
    const apis::QoSClass qos = apis::podQoSClassRaw(p.labels);
    if (qos == apis::QoSClass::kLS || qos == apis::QoSClass::kBE || hasResourceStatusCpus(p))
      managed.insert(p.uid);
  }
  std::size_t containers = 0;
  for (const auto& [uid, by_container] : entries->get_object()) {
    if (!by_container.is_object()) {
      return makeKubeError(
          fmt::format("{}: entries[{}]: expected an object", kWhat, std::string_view(uid)));
    }
    containers += by_container.get_object().size();
    if (containers > apis::kMaxNRTAnnotationItems) {
      return makeKubeError(
          fmt::format("{}: more than {} containers", kWhat, apis::kMaxNRTAnnotationItems));
    }
    if (managed.contains(std::string_view(uid)))
      continue;
    std::set<int> cpus;
    for (const auto& [container, list] : by_container.get_object()) {
      auto parsed = list.is_string() ? cgroup::parseCpuList(std::string_view(list.get_string()))
                                     : Expected<std::vector<int>>(makeKubeError("not a string"));
      if (!parsed) {
        warnings.push_back(fmt::format("{}: pod {} container {}: {}", kWhat, std::string_view(uid),
                                       std::string_view(container), parsed.error().message));
        continue;
      }
      cpus.insert(parsed->begin(), parsed->end());
    }
    if (cpus.empty())
      continue;
    apis::PodCPUAlloc alloc;
    alloc.uid = uid;
    alloc.cpuset = cgroup::formatCpuList(std::vector<int>(cpus.begin(), cpus.end()));
    alloc.managed_by_kubelet = true;
    if (auto it = by_uid.find(std::string_view(uid)); it != by_uid.end()) {
      alloc.namespace_ = it->second->namespace_;
      alloc.name = it->second->name;
    }
    out.push_back(std::move(alloc));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.uid < b.uid; });
  return out;
}

NodeTopologyReport buildNodeTopology(const NodeTopologyInputs& in) {
  NodeTopologyReport report;
  auto& warnings = report.warnings;
  NodeTopologyStatus& s = report.status;
  s.topology_policies = {std::string(in.topology_policy)};
  s.zones = zonesOf(in.topology, in.numa);

  apis::CPUTopology cpu_topology;
  std::set<int> ls_cpus;
  for (const auto& c : in.topology.cpus) {
    cpu_topology.detail.push_back(
        {.id = c.cpu_id, .core = c.core_id, .socket = c.socket_id, .node = c.node_id});
    ls_cpus.insert(c.cpu_id);
  }

  // Pods the kubelet's static policy pinned keep their CPUs out of both pools.
  std::vector<apis::PodCPUAlloc> kubelet_allocs;
  if (in.kubelet_policy.policy == apis::kKubeletCPUManagerPolicyStatic && in.cpu_manager_state) {
    auto allocs = kubeletPodCPUAllocs(*in.cpu_manager_state, in.pods, warnings);
    if (allocs) {
      kubelet_allocs = std::move(*allocs);
    } else {
      warnings.push_back(allocs.error().message);
    }
  }
  for (const auto& alloc : kubelet_allocs) {
    if (auto cpus = cgroup::parseCpuList(alloc.cpuset)) {
      for (int cpu : *cpus)
        ls_cpus.erase(cpu);
    }
  }
  std::set<int> be_cpus = ls_cpus;
  for (const PodMeta& pod : in.pods) {
    auto binding = podCPUSetBinding(pod.labels, pod.annotations);
    if (!binding) {
      warnings.push_back(fmt::format("pod {}: {}: {}", pod.key(), apis::kAnnotationResourceStatus,
                                     binding.error().message));
      continue;
    }
    if (!*binding)
      continue;
    const bool lse = apis::podQoSClassRaw(pod.labels) == apis::QoSClass::kLSE;
    // The binding's list is the kernel's spelling podCPUSetBinding wrote: it parses.
    auto cpus = cgroup::parseCpuList((*binding)->cpus);
    for (int cpu : cpus ? *cpus : std::vector<int>()) {
      ls_cpus.erase(cpu);
      if (lse)
        be_cpus.erase(cpu);
    }
  }
  auto ls_pools = poolsOf(in.topology, ls_cpus);
  auto be_pools = poolsOf(in.topology, be_cpus);

  const std::vector<int> reserved = reservedCPUs(in.topology, in.node, warnings);
  removeFromPools(ls_pools, reserved);
  removeFromPools(be_pools, reserved);
  const SystemQOS system_qos = systemQOS(in.node, warnings);
  removeFromPools(ls_pools, system_qos.exclusive_cpus);
  removeFromPools(be_pools, system_qos.exclusive_cpus);

  json::object reservation;
  if (!reserved.empty())
    reservation["reservedCPUs"] = cgroup::formatCpuList(reserved);

  auto& a = s.annotations;
  a.emplace(apis::kAnnotationCPUBasicInfo, apis::formatCPUBasicInfo(in.cpu_basic_info));
  a.emplace(apis::kAnnotationNodeCPUTopology, apis::formatCPUTopology(cpu_topology));
  a.emplace(apis::kAnnotationNodeCPUSharedPools, apis::formatCPUSharedPools(ls_pools));
  a.emplace(apis::kAnnotationNodeBECPUSharedPools, apis::formatCPUSharedPools(be_pools));
  a.emplace(apis::kAnnotationNodeCPUAllocs, apis::formatPodCPUAllocs(kubelet_allocs));
  a.emplace(apis::kAnnotationKubeletCPUManagerPolicy,
            apis::formatKubeletCPUManagerPolicy(in.kubelet_policy));
  a.emplace(apis::kAnnotationNodeReservation, json::serialize(reservation));
  a.emplace(apis::kAnnotationNodeSystemQOSResource, system_qos.value);
  return report;
}

std::string nodeTopologyDifference(const apis::NodeResourceTopology& current,
                                   const NodeTopologyStatus& desired) {
  if (current.annotations.empty())
    return "metadata changed";
  if (current.topology_policies != desired.topology_policies)
    return "topologyPolicies changed";
  for (std::string_view key : kStatusAnnotations) {
    auto old_it = current.annotations.find(key);
    auto new_it = desired.annotations.find(key);
    const bool had = old_it != current.annotations.end();
    const bool has = new_it != desired.annotations.end();
    if (!had && !has)
      continue;
    if (had != has || !sameJson(old_it->second, new_it->second))
      return fmt::format("annotation {} changed", key);
  }
  if (current.zones.size() != desired.zones.size())
    return "zones changed: their number";
  for (std::size_t i = 0; i < current.zones.size(); ++i) {
    if (current.zones[i].name != desired.zones[i].name)
      return fmt::format("zones changed: zone {} name", i);
    if (current.zones[i].type != desired.zones[i].type)
      return fmt::format("zones changed: zone {} type", i);
  }
  const ZoneResources old_resources = zoneResources(current.zones);
  const ZoneResources new_resources = zoneResources(desired.zones);
  for (const auto& [zone, list] : new_resources) {
    auto old_zone = old_resources.find(zone);
    for (std::string_view resource : {"cpu", "memory"}) {
      auto now = list.find(resource);
      const kube::ResourceList* before =
          old_zone == old_resources.end() ? nullptr : &old_zone->second;
      auto was = before == nullptr ? list.end() : before->find(resource);
      const bool had = before != nullptr && was != before->end();
      const bool has = now != list.end();
      if (had != has || (had && was->second != now->second))
        return fmt::format("zones changed: zone {} {}", zone, resource);
    }
  }
  return "";
}

std::vector<apis::Zone> mergedZones(std::span<const apis::Zone> current,
                                    std::span<const apis::Zone> desired) {
  ZoneResources merged = zoneResources(current);
  const ZoneResources wanted = zoneResources(desired);
  std::erase_if(merged, [&](const auto& zone) { return !wanted.contains(zone.first); });
  for (const auto& [zone, list] : wanted) {
    auto& target = merged[zone];
    for (const auto& [resource, q] : list)
      target.insert_or_assign(resource, q);
  }
  return zonesFrom(merged);
}

json::value nodeTopologyPatch(const apis::NodeResourceTopology& current,
                              const NodeTopologyStatus& desired) {
  json::object annotations;
  for (const auto& [k, v] : desired.annotations)
    annotations[k] = v;
  json::object meta{{"annotations", std::move(annotations)}};
  if (!current.resource_version.empty())
    meta["resourceVersion"] = current.resource_version;
  json::array policies;
  for (const auto& p : desired.topology_policies)
    policies.emplace_back(p);
  return json::object{
      {"metadata", std::move(meta)},
      {"topologyPolicies", std::move(policies)},
      {"zones", zonesJson(mergedZones(current.zones, desired.zones))},
  };
}

json::value nodeTopologyObject(const NodeTopologyStatus& desired, std::string_view node_name,
                               std::string_view node_uid) {
  apis::NodeResourceTopology nrt;
  nrt.name = node_name;
  nrt.labels.emplace(apis::kLabelManagedBy, apis::kNodeResourceTopologyManager);
  nrt.annotations = desired.annotations;
  nrt.topology_policies = desired.topology_policies;
  nrt.zones = desired.zones;
  json::value v = apis::encodeNodeResourceTopology(nrt);
  v.as_object()["metadata"].as_object()["ownerReferences"] = json::array{json::object{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"name", node_name},
      {"uid", node_uid},
      {"controller", true},
      {"blockOwnerDeletion", true},
  }};
  return v;
}

}  // namespace koord::roles::koordlet
