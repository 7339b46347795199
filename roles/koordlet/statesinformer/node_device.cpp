#include "statesinformer/node_device.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <sstream>
#include <system_error>
#include <tuple>

#include "koord/http/file_util.h"

namespace koord::roles::koordlet {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

// The labels this reporter owns on the Device; a patch removes those the report no longer has.
constexpr std::array<std::string_view, 3> kGPULabels = {apis::kLabelGPUVendor, apis::kLabelGPUModel,
                                                        apis::kLabelGPUDriverVersion};

kube::Expected<std::int32_t> parseInt32(std::string_view text, std::string_view what) {
  std::int32_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return kube::makeKubeError(fmt::format("{}: \"{}\" is not a 32-bit integer", what, text));
  return v;
}

// Koordinator writes "-1" for an unknown NUMA node or socket; an absent id means the same.
kube::Expected<std::int32_t> parseTopologyId(std::string_view text, std::string_view what) {
  if (text.empty())
    return -1;
  return parseInt32(text, what);
}

bool isRDMANic(const apis::XpuDeviceInfo& d) {
  return d.resources.contains(std::string(apis::kResourceRDMA)) &&
         !d.resources.contains(std::string(apis::kResourceGPUCore));
}

// The device-daemon of an older Koordinator wrote the GPU resources without their domain.
std::string resourceName(const std::string& name) {
  if (name == "gpu-core" || name == "gpu-memory")
    return "koordinator.sh/" + name;
  return name;
}

kube::Expected<DeviceSpecEntry> buildEntry(const apis::XpuDeviceInfo& d, std::string_view where) {
  DeviceSpecEntry e;
  const bool nic = isRDMANic(d);
  e.type = nic ? kDeviceTypeRDMA : kDeviceTypeGPU;
  e.id = d.uuid;
  auto minor = parseInt32(d.minor, fmt::format("{}.minor", where));
  if (!minor)
    return minor.error();
  e.minor = *minor;
  // A device without a status is one the daemon had nothing against.
  e.health = d.status ? d.status->healthy : true;
  if (!nic)
    e.resources.emplace(apis::kResourceGPUMemoryRatio, kube::Quantity::fromInt(100));
  for (const auto& [name, text] : d.resources) {
    auto q = kube::Quantity::parse(text);
    if (!q)
      return kube::makeKubeError(
          fmt::format("{}.resources[{}]: {}", where, name, q.error().message));
    e.resources.insert_or_assign(resourceName(name), *q);
  }
  if (d.topology) {
    DeviceTopologySpec t;
    auto socket =
        parseTopologyId(d.topology->socket_id, fmt::format("{}.topology.socketID", where));
    if (!socket)
      return socket.error();
    auto node = parseTopologyId(d.topology->node_id, fmt::format("{}.topology.nodeID", where));
    if (!node)
      return node.error();
    t.socket_id = *socket;
    t.node_id = *node;
    t.pcie_id = d.topology->pcie_id;
    t.bus_id = d.topology->bus_id;
    e.topology = std::move(t);
  }
  return e;
}

void sortDevices(std::vector<DeviceSpecEntry>& devices) {
  std::sort(devices.begin(), devices.end(), [](const auto& a, const auto& b) {
    return std::tie(a.type, a.minor, a.id) < std::tie(b.type, b.minor, b.id);
  });
}

kube::Expected<std::string> readWhole(const fs::path& file) {
  auto text = http::readFile(file.string());
  if (!text)
    return kube::makeKubeError(fmt::format("{}: {}", file.string(), text.error().message()));
  return std::move(*text);
}

bool isReportFile(const fs::directory_entry& entry) {
  std::error_code ec;
  if (!entry.is_regular_file(ec))
    return false;
  const std::string name = entry.path().filename().string();
  return !name.starts_with('.') && name.find(".tmp.") == std::string::npos;
}

json::object quantitiesJson(const kube::ResourceList& resources) {
  json::object o;
  for (const auto& [name, q] : resources)
    o[name] = q.toString();
  return o;
}

json::object labelsJson(const kube::Labels& labels) {
  json::object o;
  for (const auto& [k, v] : labels)
    o[k] = v;
  return o;
}

}  // namespace

kube::Expected<NodeDevices> buildNodeDevices(std::span<const apis::XpuDeviceInfo> infos,
                                             const NodeDeviceOptions& options) {
  NodeDevices out;
  const apis::XpuDeviceInfo* first_gpu = nullptr;
  for (std::size_t i = 0; i < infos.size(); ++i) {
    const auto& d = infos[i];
    if (isRDMANic(d) && !options.rdma)
      continue;
    auto entry = buildEntry(d, fmt::format("[{}]", i));
    if (!entry)
      return entry.error();
    if (entry->type == kDeviceTypeGPU && first_gpu == nullptr)
      first_gpu = &d;
    out.devices.push_back(std::move(*entry));
  }
  sortDevices(out.devices);
  // Koordinator takes the node's GPU vendor and model from the report's first accelerator.
  if (first_gpu != nullptr) {
    for (const auto& [key, value] : {std::pair{apis::kLabelGPUVendor, &first_gpu->vendor},
                                     std::pair{apis::kLabelGPUModel, &first_gpu->model}}) {
      if (auto bad = kube::validateLabelValue(*value)) {
        out.skipped.push_back(fmt::format("label {}: {}", key, *bad));
        continue;
      }
      out.labels.emplace(key, *value);
    }
  }
  return out;
}

std::optional<std::string> parseNvidiaDriverVersion(std::string_view text) {
  constexpr std::string_view kPrefix = "NVRM version:";
  if (!text.starts_with(kPrefix))
    return std::nullopt;
  std::string_view line = text.substr(0, text.find('\n'));
  const auto module_at = line.find("Kernel Module");
  if (module_at == std::string_view::npos)
    return std::nullopt;
  // The open module's line reads "... Open Kernel Module for x86_64  580.159.04  Release Build":
  // the version is the first word of digits and dots after "Kernel Module".
  std::istringstream words{std::string(line.substr(module_at))};
  for (std::string w; words >> w;) {
    const bool version = std::isdigit(static_cast<unsigned char>(w.front())) &&
                         w.find('.') != std::string::npos &&
                         w.find_first_not_of("0123456789.") == std::string::npos;
    if (version)
      return w;
  }
  return std::nullopt;
}

namespace {

// Koordinator asks NVML for the driver version; the koordlet does not load NVML, and the kernel
// module's own file says the same.
void addDriverVersionLabel(NodeDevices& devices, const NodeDeviceOptions& options) {
  auto vendor = devices.labels.find(apis::kLabelGPUVendor);
  if (options.nvidia_driver_version_file.empty() || vendor == devices.labels.end() ||
      vendor->second != apis::kVendorNVIDIA)
    return;
  const auto& file = options.nvidia_driver_version_file;
  auto text = readWhole(file);
  if (!text) {
    devices.skipped.push_back(
        fmt::format("label {}: {}", apis::kLabelGPUDriverVersion, text.error().message));
    return;
  }
  auto version = parseNvidiaDriverVersion(*text);
  if (!version) {
    devices.skipped.push_back(fmt::format("label {}: {} names no driver version",
                                          apis::kLabelGPUDriverVersion, file.string()));
    return;
  }
  devices.labels.emplace(apis::kLabelGPUDriverVersion, *version);
}

}  // namespace

kube::Expected<NodeDevices> loadNodeDevices(const fs::path& dir, const NodeDeviceOptions& options) {
  std::error_code ec;
  if (!fs::exists(dir, ec))
    return NodeDevices{};
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (isReportFile(*it))
      files.push_back(it->path());
  }
  if (ec)
    return kube::makeKubeError(fmt::format("{}: {}", dir.string(), ec.message()));
  std::sort(files.begin(), files.end());
  std::vector<apis::XpuDeviceInfo> infos;
  std::vector<std::size_t> first_of_file;  // where each file's devices start in `infos`
  for (const auto& file : files) {
    auto text = readWhole(file);
    if (!text)
      return text.error();
    auto parsed = apis::parseXpuDeviceInfos(*text);
    if (!parsed)
      return kube::makeKubeError(fmt::format("{}: {}", file.string(), parsed.error().message));
    first_of_file.push_back(infos.size());
    infos.insert(infos.end(), parsed->begin(), parsed->end());
  }
  auto built = buildNodeDevices(infos, options);
  if (built) {
    addDriverVersionLabel(*built, options);
    return built;
  }
  // Converted together, so the error's index is into all files; say which file it was.
  for (std::size_t f = 0; f < files.size(); ++f) {
    const std::size_t begin = first_of_file[f];
    const std::size_t end = f + 1 < files.size() ? first_of_file[f + 1] : infos.size();
    auto one = buildNodeDevices(std::span(infos).subspan(begin, end - begin), options);
    if (!one)
      return kube::makeKubeError(fmt::format("{}: {}", files[f].string(), one.error().message));
  }
  return built.error();
}

json::array deviceSpecJson(const NodeDevices& devices) {
  json::array a;
  for (const auto& d : devices.devices) {
    json::object o{{"type", d.type}, {"id", d.id}, {"minor", d.minor}, {"health", d.health}};
    if (!d.resources.empty())
      o["resources"] = quantitiesJson(d.resources);
    if (d.topology) {
      json::object t{{"socketID", d.topology->socket_id},
                     {"nodeID", d.topology->node_id},
                     {"pcieID", d.topology->pcie_id}};
      if (!d.topology->bus_id.empty())
        t["busID"] = d.topology->bus_id;
      o["topology"] = std::move(t);
    }
    a.push_back(std::move(o));
  }
  return a;
}

json::object deviceObject(const NodeDevices& devices, std::string_view node_name,
                          std::string_view node_uid) {
  json::object meta{{"name", node_name}};
  if (!devices.labels.empty())
    meta["labels"] = labelsJson(devices.labels);
  if (!node_uid.empty()) {
    meta["ownerReferences"] = json::array{json::object{{"apiVersion", "v1"},
                                                       {"kind", "Node"},
                                                       {"name", node_name},
                                                       {"uid", node_uid},
                                                       {"controller", true},
                                                       {"blockOwnerDeletion", true}}};
  }
  return json::object{{"apiVersion", "scheduling.koordinator.sh/v1alpha1"},
                      {"kind", "Device"},
                      {"metadata", std::move(meta)},
                      {"spec", json::object{{"devices", deviceSpecJson(devices)}}}};
}

json::object devicePatch(const NodeDevices& devices) {
  json::object labels;
  for (auto key : kGPULabels) {
    auto it = devices.labels.find(key);
    if (it != devices.labels.end())
      labels[key] = it->second;
    else
      labels[key] = nullptr;
  }
  return json::object{{"metadata", json::object{{"labels", std::move(labels)}}},
                      {"spec", json::object{{"devices", deviceSpecJson(devices)}}}};
}

std::optional<json::object> nodeLabelsPatch(const NodeDevices& devices,
                                            const kube::Labels& node_labels) {
  json::object labels;
  for (const auto& [k, v] : devices.labels) {
    auto it = node_labels.find(k);
    if (it == node_labels.end() || it->second != v)
      labels[k] = v;
  }
  if (labels.empty())
    return std::nullopt;
  return json::object{{"metadata", json::object{{"labels", std::move(labels)}}}};
}

}  // namespace koord::roles::koordlet
