#include "koord/apis/xpu_device_info.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"

namespace koord::apis {

namespace json = boost::json;
namespace jf = kube::jsonfields;

namespace {

// Go's omitempty: an empty string is left out.
void putIfNotEmpty(json::object& o, std::string_view key, const std::string& value) {
  if (!value.empty())
    o[key] = value;
}

json::object topologyJson(const XpuDeviceTopology& t) {
  json::object o;
  if (!t.p2p_links.empty()) {
    json::array links;
    for (const auto& l : t.p2p_links)
      links.push_back(json::object{{"peerMinor", l.peer_minor}, {"type", l.type}});
    o["p2pLinks"] = std::move(links);
  }
  if (t.must_honor_partition)
    o["mustHonorPartition"] = true;
  putIfNotEmpty(o, "socketID", t.socket_id);
  putIfNotEmpty(o, "nodeID", t.node_id);
  putIfNotEmpty(o, "pcieID", t.pcie_id);
  putIfNotEmpty(o, "busID", t.bus_id);
  return o;
}

json::object deviceJson(const XpuDeviceInfo& d) {
  // vendor, model, uuid and minor have no omitempty in Koordinator's struct: always written.
  json::object o{{"vendor", d.vendor}, {"model", d.model}, {"uuid", d.uuid}, {"minor", d.minor}};
  if (!d.resources.empty()) {
    json::object r;
    for (const auto& [name, value] : d.resources)
      r[name] = value;
    o["resources"] = std::move(r);
  }
  if (d.topology)
    o["topology"] = topologyJson(*d.topology);
  if (d.status) {
    json::object s{{"healthy", d.status->healthy}};
    putIfNotEmpty(s, "errCode", d.status->err_code);
    putIfNotEmpty(s, "errMessage", d.status->err_message);
    o["status"] = std::move(s);
  }
  return o;
}

// Reads the string members named in `fields` into the matching targets; stops at the first error.
kube::Expected<void> readStrings(
    const json::object& o, std::string_view path,
    std::initializer_list<std::pair<std::string_view, std::string*>> fields) {
  for (const auto& [name, target] : fields) {
    auto s = jf::stringField(o, name, path);
    if (!s)
      return s.error();
    *target = std::move(*s);
  }
  return {};
}

kube::Expected<XpuDeviceTopology> parseTopology(const json::object& o, const std::string& path) {
  XpuDeviceTopology t;
  if (auto r = readStrings(o, path,
                           {{"socketID", &t.socket_id},
                            {"nodeID", &t.node_id},
                            {"pcieID", &t.pcie_id},
                            {"busID", &t.bus_id}});
      !r) {
    return r.error();
  }
  auto honor = jf::boolField(o, "mustHonorPartition", path);
  if (!honor)
    return honor.error();
  t.must_honor_partition = *honor;
  if (const json::value* links = jf::field(o, "p2pLinks")) {
    std::string links_path = jf::childPath(path, "p2pLinks");
    if (!links->is_array())
      return jf::typeError(links_path, "array", *links);
    for (std::size_t i = 0; i < links->get_array().size(); ++i) {
      const json::value& l = links->get_array()[i];
      std::string link_path = jf::indexPath(links_path, i);
      if (!l.is_object())
        return jf::typeError(link_path, "object", l);
      XpuP2PLink link;
      if (auto r = readStrings(l.get_object(), link_path,
                               {{"peerMinor", &link.peer_minor}, {"type", &link.type}});
          !r) {
        return r.error();
      }
      t.p2p_links.push_back(std::move(link));
    }
  }
  return t;
}

kube::Expected<XpuDeviceInfo> parseDevice(const json::object& o, const std::string& path) {
  XpuDeviceInfo d;
  if (auto r = readStrings(
          o, path,
          {{"vendor", &d.vendor}, {"model", &d.model}, {"uuid", &d.uuid}, {"minor", &d.minor}});
      !r) {
    return r.error();
  }
  auto resources = jf::objectField(o, "resources", path);
  if (!resources)
    return resources.error();
  if (*resources != nullptr) {
    std::string resources_path = jf::childPath(path, "resources");
    for (const auto& member : **resources) {
      auto value = jf::stringField(**resources, member.key(), resources_path);
      if (!value)
        return value.error();
      d.resources[std::string(member.key())] = std::move(*value);
    }
  }
  auto topology = jf::objectField(o, "topology", path);
  if (!topology)
    return topology.error();
  if (*topology != nullptr) {
    auto t = parseTopology(**topology, jf::childPath(path, "topology"));
    if (!t)
      return t.error();
    d.topology = std::move(*t);
  }
  auto status = jf::objectField(o, "status", path);
  if (!status)
    return status.error();
  if (*status != nullptr) {
    std::string status_path = jf::childPath(path, "status");
    XpuDeviceStatus s;
    auto healthy = jf::boolField(**status, "healthy", status_path);
    if (!healthy)
      return healthy.error();
    s.healthy = *healthy;
    if (auto r = readStrings(**status, status_path,
                             {{"errCode", &s.err_code}, {"errMessage", &s.err_message}});
        !r) {
      return r.error();
    }
    d.status = std::move(s);
  }
  return d;
}

}  // namespace

std::string formatXpuDeviceInfos(std::span<const XpuDeviceInfo> devices) {
  json::array out;
  out.reserve(devices.size());
  for (const auto& d : devices)
    out.push_back(deviceJson(d));
  std::string text = json::serialize(out);
  text.push_back('\n');
  return text;
}

kube::Expected<std::vector<XpuDeviceInfo>> parseXpuDeviceInfos(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec)
    return kube::makeKubeError(fmt::format("device report is not JSON: {}", ec.message()));
  std::vector<XpuDeviceInfo> devices;
  // Go decodes a JSON null into a nil slice: no devices.
  if (v.is_null())
    return devices;
  if (!v.is_array())
    return jf::typeError("", "array", v);
  const json::array& items = v.get_array();
  devices.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string path = jf::indexPath("", i);
    if (!items[i].is_object())
      return jf::typeError(path, "object", items[i]);
    auto d = parseDevice(items[i].get_object(), path);
    if (!d)
      return d.error();
    devices.push_back(std::move(*d));
  }
  return devices;
}

}  // namespace koord::apis
