#include "snapshot/cluster_snapshot.h"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <sstream>

#include "koord/kube/json_limits.h"
#include "koord/kube/time.h"
#include "koord/kube/yaml_json.h"

namespace koord::roles::cli {
namespace json = boost::json;
namespace {

constexpr std::string_view kSnapshotApiVersion = "koord.koordinator.sh/v1alpha1";
constexpr std::string_view kSnapshotKind = "Snapshot";

constexpr std::array<SnapshotKind, 11> kKinds = {{
    {"Node", "v1", "nodes", false, "", false, true},
    {"Pod", "v1", "pods", true, "", false, true},
    {"NodeMetric", "slo.koordinator.sh/v1alpha1", "nodemetrics", false, "", false, false},
    {"NodeSLO", "slo.koordinator.sh/v1alpha1", "nodeslos", false, "", false, false},
    {"Device", "scheduling.koordinator.sh/v1alpha1", "devices", false, "", false, false},
    {"NodeResourceTopology", "topology.node.k8s.io/v1alpha1", "noderesourcetopologies", false, "",
     false, false},
    {"Reservation", "scheduling.koordinator.sh/v1alpha1", "reservations", false, "", false, false},
    {"ElasticQuota", "scheduling.sigs.k8s.io/v1alpha1", "elasticquotas", true, "", false, false},
    {"PodGroup", "scheduling.sigs.k8s.io/v1alpha1", "podgroups", true, "", false, false},
    {"ConfigMap", "v1", "configmaps", true, "", true, false},
    {"Event", "v1", "events", true, "reason=evictPodSuccess", false, false},
}};

const SnapshotKind* findKind(std::string_view kind) {
  for (const auto& k : kKinds) {
    if (k.kind == kind)
      return &k;
  }
  return nullptr;
}

std::string_view stringAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

std::pair<std::string_view, std::string_view> namespaceAndName(const json::value& item) {
  const json::value* meta = item.get_object().if_contains("metadata");
  if (meta == nullptr || !meta->is_object())
    return {};
  return {stringAt(meta->get_object(), "namespace"), stringAt(meta->get_object(), "name")};
}

kube::Expected<json::value> parseText(std::string_view text) {
  auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    boost::system::error_code ec;
    json::value v = json::parse(text, ec, json::storage_ptr(), kube::apiObjectParseOptions());
    if (ec)
      return kube::makeKubeError(fmt::format("not JSON: {}", ec.message()));
    return v;
  }
  auto yaml = kube::yamlToJson(text);
  if (!yaml)
    return yaml;
  // YAML strings are whatever bytes the file holds; JSON's must be UTF-8, or the snapshot
  // written from this one would not read back.
  boost::system::error_code ec;
  json::value checked =
      json::parse(json::serialize(*yaml), ec, json::storage_ptr(), kube::apiObjectParseOptions());
  if (ec)
    return kube::makeKubeError(fmt::format("not valid YAML text: {}", ec.message()));
  return checked;
}

}  // namespace

std::span<const SnapshotKind> snapshotKinds() {
  return kKinds;
}

const std::vector<json::value>& ClusterSnapshot::of(std::string_view kind) const {
  static const std::vector<json::value> kNone;
  auto it = objects.find(kind);
  return it == objects.end() ? kNone : it->second;
}

void normalizeItem(json::value& item, const SnapshotKind& kind) {
  if (!item.is_object())
    return;
  json::object& o = item.get_object();
  if (json::value* meta = o.if_contains("metadata"); meta && meta->is_object())
    meta->get_object().erase("managedFields");
  o["apiVersion"] = kind.api_version;
  o["kind"] = kind.kind;
}

kube::Expected<ClusterSnapshot> parseSnapshot(std::string_view text) {
  auto parsed = parseText(text);
  if (!parsed)
    return kube::makeKubeError(fmt::format("snapshot: {}", parsed.error().message));
  if (!parsed->is_object())
    return kube::makeKubeError("snapshot: not an object");
  json::object& root = parsed->get_object();
  const std::string_view root_kind = stringAt(root, "kind");
  const bool ours = root_kind == kSnapshotKind;
  if (!ours && root_kind != "List")
    return kube::makeKubeError(
        fmt::format("snapshot: kind {:?}: want {} (koord snapshot) or List (kubectl get -o json)",
                    root_kind, kSnapshotKind));
  ClusterSnapshot out;
  if (ours) {
    if (stringAt(root, "apiVersion") != kSnapshotApiVersion)
      return kube::makeKubeError(fmt::format("snapshot: apiVersion {:?}: want {}",
                                             stringAt(root, "apiVersion"), kSnapshotApiVersion));
    auto taken = kube::parseTime(stringAt(root, "takenAt"));
    if (!taken)
      return kube::makeKubeError(
          fmt::format("snapshot: takenAt {:?}: not an RFC 3339 time", stringAt(root, "takenAt")));
    out.taken_at = *taken;
    out.server = std::string(stringAt(root, "server"));
    if (const json::value* missing = root.if_contains("missingKinds");
        missing && missing->is_array()) {
      for (const auto& m : missing->get_array()) {
        if (m.is_string())
          out.missing_kinds.emplace_back(m.get_string());
      }
    }
  }
  json::value* items = root.if_contains("items");
  if (items == nullptr || items->is_null())
    return out;
  if (!items->is_array())
    return kube::makeKubeError("snapshot: items: not a list");
  if (items->get_array().size() > kMaxSnapshotObjects)
    return kube::makeKubeError(fmt::format("snapshot: items: {} objects, more than the {} allowed",
                                           items->get_array().size(), kMaxSnapshotObjects));
  std::size_t index = 0;
  for (json::value& item : items->get_array()) {
    const std::size_t i = index++;
    if (!item.is_object())
      return kube::makeKubeError(fmt::format("snapshot: items[{}]: not an object", i));
    const SnapshotKind* kind = findKind(stringAt(item.get_object(), "kind"));
    if (kind == nullptr)
      continue;
    if (stringAt(item.get_object(), "apiVersion") != kind->api_version)
      return kube::makeKubeError(
          fmt::format("snapshot: items[{}] ({}): apiVersion {:?}: want {}", i, kind->kind,
                      stringAt(item.get_object(), "apiVersion"), kind->api_version));
    auto [ns, name] = namespaceAndName(item);
    if (name.empty())
      return kube::makeKubeError(
          fmt::format("snapshot: items[{}] ({}): no metadata.name", i, kind->kind));
    if (kind->namespaced && ns.empty())
      return kube::makeKubeError(
          fmt::format("snapshot: items[{}] ({} {}): no metadata.namespace", i, kind->kind, name));
    out.objects[std::string(kind->kind)].push_back(std::move(item));
  }
  if (!ours) {
    // A kubectl List says nothing of when: the koordlets' newest report is the best guess.
    for (const auto& m : out.of("NodeMetric")) {
      const json::value* status = m.get_object().if_contains("status");
      if (status == nullptr || !status->is_object())
        continue;
      if (auto t = kube::parseTime(stringAt(status->get_object(), "updateTime")))
        out.taken_at = std::max(out.taken_at, *t);
    }
  }
  return out;
}

kube::Expected<ClusterSnapshot> readSnapshotFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return kube::makeKubeError(fmt::format("{}: cannot open", path));
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(std::max<std::streamoff>(in.tellg(), 0));
  if (size > kMaxSnapshotBytes)
    return kube::makeKubeError(fmt::format("{}: {} bytes, more than the {} a snapshot may have",
                                           path, size, kMaxSnapshotBytes));
  in.seekg(0);
  std::string text(size, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size)))
    return kube::makeKubeError(fmt::format("{}: read failed", path));
  auto snapshot = parseSnapshot(text);
  if (!snapshot)
    return kube::makeKubeError(fmt::format("{}: {}", path, snapshot.error().message));
  return snapshot;
}

std::string formatSnapshot(const ClusterSnapshot& snapshot) {
  json::array missing;
  for (const auto& m : snapshot.missing_kinds)
    missing.emplace_back(m);
  std::string out = fmt::format(
      "{{\"apiVersion\":\"{}\",\"kind\":\"{}\",\"takenAt\":{},\"server\":{},\"missingKinds\":{},"
      "\"items\":[",
      kSnapshotApiVersion, kSnapshotKind,
      json::serialize(json::value(kube::formatTime(snapshot.taken_at))),
      json::serialize(json::value(snapshot.server)), json::serialize(missing));
  bool first = true;
  for (const auto& kind : kKinds) {
    const auto& items = snapshot.of(kind.kind);
    std::vector<const json::value*> sorted;
    sorted.reserve(items.size());
    for (const auto& item : items)
      sorted.push_back(&item);
    std::stable_sort(sorted.begin(), sorted.end(), [](const json::value* a, const json::value* b) {
      return namespaceAndName(*a) < namespaceAndName(*b);
    });
    for (const json::value* item : sorted) {
      out += first ? "\n" : ",\n";
      first = false;
      out += json::serialize(*item);
    }
  }
  out += "\n]}\n";
  return out;
}

}  // namespace koord::roles::cli
