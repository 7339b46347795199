// decodePersistentVolume, decodePersistentVolumeClaim, decodeStorageClass, decodeCSINode.
#include "plugins/upstream/storage/storage_objects.h"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/object_meta.h"

namespace koord::roles::scheduler::storage {
namespace {

using namespace koord::kube::jsonfields;
namespace json = boost::json;
using kube::Expected;
using kube::makeKubeError;
using F = kube::ObjectMetaFields;

constexpr std::array<std::string_view, 5> kKeptClaimAnnotations = {
    kAnnSelectedNode,           kAnnBindCompleted,    kAnnStorageProvisioner,
    kAnnBetaStorageProvisioner, kAnnBetaStorageClass,
};
constexpr std::array<std::string_view, 2> kKeptVolumeAnnotations = {kAnnBoundByController,
                                                                    kAnnBetaStorageClass};
constexpr std::array<std::string_view, 1> kKeptCSINodeAnnotations = {kAnnMigratedPlugins};

Expected<AccessModes> accessModes(const json::object& spec, std::string_view path) {
  auto modes = stringList(spec, "accessModes", path);
  if (!modes)
    return modes.error();
  if (modes->size() > kMaxAccessModes) {
    return makeKubeError(fmt::format("{}.accessModes: {} modes, more than {}", path, modes->size(),
                                     kMaxAccessModes));
  }
  AccessModes out = 0;
  for (std::size_t i = 0; i < modes->size(); ++i) {
    const std::string& m = (*modes)[i];
    if (m == "ReadWriteOnce")
      out |= static_cast<AccessModes>(AccessMode::kReadWriteOnce);
    else if (m == "ReadOnlyMany")
      out |= static_cast<AccessModes>(AccessMode::kReadOnlyMany);
    else if (m == "ReadWriteMany")
      out |= static_cast<AccessModes>(AccessMode::kReadWriteMany);
    else if (m == "ReadWriteOncePod")
      out |= static_cast<AccessModes>(AccessMode::kReadWriteOncePod);
    else
      return makeKubeError(fmt::format("{}: unsupported value \"{}\"",
                                       indexPath(childPath(path, "accessModes"), i), m));
  }
  return out;
}

Expected<VolumeMode> volumeMode(const json::object& spec, std::string_view path) {
  auto mode = stringField(spec, "volumeMode", path);
  if (!mode)
    return mode.error();
  if (mode->empty() || *mode == "Filesystem")
    return VolumeMode::kFilesystem;
  if (*mode == "Block")
    return VolumeMode::kBlock;
  return makeKubeError(fmt::format(
      "{}.volumeMode: unsupported value \"{}\": supported values: \"Block\", \"Filesystem\"", path,
      *mode));
}

// The storage entry of a resource list (capacity, resources.requests) in bytes; 0 when absent.
Expected<std::int64_t> storageBytes(const json::object& o, std::string_view name,
                                    std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return 0;
  auto list = kube::decodeResourceList(*v, childPath(path, name));
  if (!list)
    return list.error();
  auto it = list->find("storage");
  if (it == list->end())
    return 0;
  if (it->second.sign() < 0) {
    return makeKubeError(
        fmt::format("{}[storage]: must be greater than or equal to 0", childPath(path, name)));
  }
  return it->second.value();
}

// The class a beta annotation names wins over the field, as the API's helpers read it.
Expected<std::string> storageClassOf(const json::object& spec, const kube::Labels& annotations,
                                     std::string_view path) {
  if (auto it = annotations.find(kAnnBetaStorageClass); it != annotations.end())
    return it->second;
  return stringField(spec, "storageClassName", path);
}

// The PV's source: one of the disks PodVolume tells apart, with its identity, or a local path.
constexpr auto kPVSources = [] {
  std::array<VolumeSourceField, kDiskVolumeSources.size() + 1> all{};
  std::copy(kDiskVolumeSources.begin(), kDiskVolumeSources.end(), all.begin());
  all.back() = {"local", VolumeSourceKind::kOther, "path"};
  return all;
}();

Expected<void> volumeSource(const json::object& spec, PersistentVolume& pv) {
  for (const VolumeSourceField& f : kPVSources) {
    auto source = objectField(spec, f.member, "spec");
    if (!source)
      return source.error();
    if (*source == nullptr)
      continue;
    const std::string path = childPath("spec", f.member);
    auto id = stringField(**source, f.id_field, path);
    if (!id)
      return id.error();
    pv.kind = f.kind;
    pv.id = std::move(*id);
    if (f.kind == VolumeSourceKind::kCSI) {
      auto handle = stringField(**source, "volumeHandle", path);
      if (!handle)
        return handle.error();
      pv.volume_handle = std::move(*handle);
    }
    return {};
  }
  return {};
}

Expected<std::optional<ClaimRef>> claimRef(const json::object& spec) {
  auto ref = objectField(spec, "claimRef", "spec");
  if (!ref)
    return ref.error();
  if (*ref == nullptr)
    return std::optional<ClaimRef>{};
  ClaimRef out;
  for (auto [member, target] : {std::pair{"namespace", &out.namespace_},
                                std::pair{"name", &out.name}, std::pair{"uid", &out.uid}}) {
    auto value = stringField(**ref, member, "spec.claimRef");
    if (!value)
      return value.error();
    *target = std::move(*value);
  }
  return std::optional<ClaimRef>(std::move(out));
}

Expected<std::optional<kube::NodeSelector>> volumeNodeAffinity(const json::object& spec) {
  auto affinity = objectField(spec, "nodeAffinity", "spec");
  if (!affinity)
    return affinity.error();
  if (*affinity == nullptr)
    return std::optional<kube::NodeSelector>{};
  const json::value* required = field(**affinity, "required");
  if (required == nullptr)
    return std::optional<kube::NodeSelector>{};
  auto selector = kube::decodeNodeSelector(*required, "spec.nodeAffinity.required");
  if (!selector)
    return selector.error();
  return std::optional<kube::NodeSelector>(std::move(*selector));
}

}  // namespace

std::string_view PersistentVolumeClaim::annotation(std::string_view key) const {
  auto it = annotations.find(key);
  return it == annotations.end() ? std::string_view{} : std::string_view(it->second);
}

Expected<PersistentVolume> decodePersistentVolume(const json::value& v) {
  if (!v.is_object())
    return typeError("PersistentVolume", "object", v);
  const json::object& root = v.get_object();
  static constexpr F kRead{
      .members = F::kName | F::kUid | F::kResourceVersion | F::kLabels | F::kAnnotations |
                 F::kDeletionTimestamp,
      .kept_annotations = kKeptVolumeAnnotations,
  };
  kube::ObjectMeta meta;
  if (auto ok = kube::decodeObjectMeta(root, kRead, meta); !ok)
    return ok.error();
  PersistentVolume pv;
  pv.name = std::move(meta.name);
  pv.uid = std::move(meta.uid);
  pv.resource_version = std::move(meta.resource_version);
  pv.labels = std::move(meta.labels);
  pv.annotations = std::move(meta.annotations);
  pv.terminating = meta.deletion_timestamp.has_value();

  auto spec = objectField(root, "spec", "");
  if (!spec)
    return spec.error();
  if (*spec != nullptr) {
    const json::object& s = **spec;
    auto capacity = storageBytes(s, "capacity", "spec");
    if (!capacity)
      return capacity.error();
    pv.capacity = *capacity;
    auto modes = accessModes(s, "spec");
    if (!modes)
      return modes.error();
    pv.access_modes = *modes;
    auto cls = storageClassOf(s, pv.annotations, "spec");
    if (!cls)
      return cls.error();
    pv.storage_class = std::move(*cls);
    auto mode = volumeMode(s, "spec");
    if (!mode)
      return mode.error();
    pv.volume_mode = *mode;
    auto ref = claimRef(s);
    if (!ref)
      return ref.error();
    pv.claim_ref = std::move(*ref);
    auto affinity = volumeNodeAffinity(s);
    if (!affinity)
      return affinity.error();
    pv.node_affinity = std::move(*affinity);
    if (auto ok = volumeSource(s, pv); !ok)
      return ok.error();
  }
  auto status = objectField(root, "status", "");
  if (!status)
    return status.error();
  if (*status != nullptr) {
    auto phase = stringField(**status, "phase", "status");
    if (!phase)
      return phase.error();
    pv.phase = std::move(*phase);
  }
  return pv;
}

Expected<PersistentVolumeClaim> decodePersistentVolumeClaim(const json::value& v) {
  if (!v.is_object())
    return typeError("PersistentVolumeClaim", "object", v);
  const json::object& root = v.get_object();
  static constexpr F kRead{
      .members = F::kNamespace | F::kName | F::kUid | F::kResourceVersion | F::kAnnotations |
                 F::kDeletionTimestamp | F::kControllerRef,
      .kept_annotations = kKeptClaimAnnotations,
  };
  kube::ObjectMeta meta;
  if (auto ok = kube::decodeObjectMeta(root, kRead, meta); !ok)
    return ok.error();
  PersistentVolumeClaim pvc;
  pvc.namespace_ = std::move(meta.namespace_);
  pvc.name = std::move(meta.name);
  pvc.uid = std::move(meta.uid);
  pvc.resource_version = std::move(meta.resource_version);
  pvc.annotations = std::move(meta.annotations);
  pvc.terminating = meta.deletion_timestamp.has_value();
  pvc.controller_uid = std::move(meta.controller_uid);

  auto spec = objectField(root, "spec", "");
  if (!spec)
    return spec.error();
  if (*spec != nullptr) {
    const json::object& s = **spec;
    auto modes = accessModes(s, "spec");
    if (!modes)
      return modes.error();
    pvc.access_modes = *modes;
    auto resources = objectField(s, "resources", "spec");
    if (!resources)
      return resources.error();
    if (*resources != nullptr) {
      auto request = storageBytes(**resources, "requests", "spec.resources");
      if (!request)
        return request.error();
      pvc.request = *request;
    }
    auto cls = storageClassOf(s, pvc.annotations, "spec");
    if (!cls)
      return cls.error();
    pvc.storage_class = std::move(*cls);
    auto volume = stringField(s, "volumeName", "spec");
    if (!volume)
      return volume.error();
    pvc.volume_name = std::move(*volume);
    auto mode = volumeMode(s, "spec");
    if (!mode)
      return mode.error();
    pvc.volume_mode = *mode;
    if (const json::value* sel = field(s, "selector")) {
      auto decoded = kube::decodeLabelSelector(*sel, "spec.selector");
      if (!decoded)
        return decoded.error();
      auto selector = kube::toSelector(*decoded);
      if (!selector)
        return makeKubeError(fmt::format("spec.selector: {}", selector.error().message));
      pvc.selector = std::move(*selector);
    }
  }
  auto status = objectField(root, "status", "");
  if (!status)
    return status.error();
  if (*status != nullptr) {
    auto phase = stringField(**status, "phase", "status");
    if (!phase)
      return phase.error();
    if (*phase == "Bound")
      pvc.phase = ClaimPhase::kBound;
    else if (*phase == "Lost")
      pvc.phase = ClaimPhase::kLost;
    else if (phase->empty() || *phase == "Pending")
      pvc.phase = ClaimPhase::kPending;
    else
      return makeKubeError(fmt::format("status.phase: unsupported value \"{}\"", *phase));
  }
  return pvc;
}

Expected<StorageClass> decodeStorageClass(const json::value& v) {
  if (!v.is_object())
    return typeError("StorageClass", "object", v);
  const json::object& root = v.get_object();
  static constexpr F kRead{.members = F::kName};
  kube::ObjectMeta meta;
  if (auto ok = kube::decodeObjectMeta(root, kRead, meta); !ok)
    return ok.error();
  StorageClass sc;
  sc.name = std::move(meta.name);
  auto provisioner = stringField(root, "provisioner", "");
  if (!provisioner)
    return provisioner.error();
  sc.provisioner = std::move(*provisioner);
  auto mode = stringField(root, "volumeBindingMode", "");
  if (!mode)
    return mode.error();
  if (*mode == "WaitForFirstConsumer") {
    sc.binding_mode = VolumeBindingMode::kWaitForFirstConsumer;
  } else if (!mode->empty() && *mode != "Immediate") {
    return makeKubeError(
        fmt::format("volumeBindingMode: unsupported value \"{}\": supported "
                    "values: \"Immediate\", \"WaitForFirstConsumer\"",
                    *mode));
  }
  auto terms = objectList(root, "allowedTopologies", "");
  if (!terms)
    return terms.error();
  if (terms->size() > kMaxTopologyTerms) {
    return makeKubeError(
        fmt::format("allowedTopologies: {} terms, more than {}", terms->size(), kMaxTopologyTerms));
  }
  for (std::size_t i = 0; i < terms->size(); ++i) {
    const std::string path = indexPath("allowedTopologies", i);
    auto expressions = objectList(*(*terms)[i], "matchLabelExpressions", path);
    if (!expressions)
      return expressions.error();
    kube::NodeSelectorTerm term;
    for (std::size_t j = 0; j < expressions->size(); ++j) {
      const std::string epath = indexPath(childPath(path, "matchLabelExpressions"), j);
      kube::NodeSelectorRequirement r;
      auto key = stringField(*(*expressions)[j], "key", epath);
      if (!key)
        return key.error();
      auto values = stringList(*(*expressions)[j], "values", epath);
      if (!values)
        return values.error();
      r.key = std::move(*key);
      r.values = std::move(*values);
      term.match_expressions.push_back(std::move(r));
    }
    sc.allowed_topologies.push_back(std::move(term));
  }
  return sc;
}

Expected<CSINode> decodeCSINode(const json::value& v) {
  if (!v.is_object())
    return typeError("CSINode", "object", v);
  const json::object& root = v.get_object();
  static constexpr F kRead{
      .members = F::kName | F::kAnnotations,
      .kept_annotations = kKeptCSINodeAnnotations,
  };
  kube::ObjectMeta meta;
  if (auto ok = kube::decodeObjectMeta(root, kRead, meta); !ok)
    return ok.error();
  CSINode node;
  node.name = std::move(meta.name);
  if (auto it = meta.annotations.find(kAnnMigratedPlugins); it != meta.annotations.end()) {
    std::string_view rest = it->second;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      if (!item.empty())
        node.migrated_plugins.emplace_back(item);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
  }
  auto spec = objectField(root, "spec", "");
  if (!spec)
    return spec.error();
  if (*spec == nullptr)
    return node;
  auto drivers = objectList(**spec, "drivers", "spec");
  if (!drivers)
    return drivers.error();
  if (drivers->size() > kMaxCSINodeDrivers) {
    return makeKubeError(
        fmt::format("spec.drivers: {} drivers, more than {}", drivers->size(), kMaxCSINodeDrivers));
  }
  for (std::size_t i = 0; i < drivers->size(); ++i) {
    const json::object& d = *(*drivers)[i];
    const std::string path = indexPath("spec.drivers", i);
    CSINodeDriver driver;
    auto name = stringField(d, "name", path);
    if (!name)
      return name.error();
    driver.name = std::move(*name);
    auto id = stringField(d, "nodeID", path);
    if (!id)
      return id.error();
    driver.node_id = std::move(*id);
    auto keys = stringList(d, "topologyKeys", path);
    if (!keys)
      return keys.error();
    driver.topology_keys = std::move(*keys);
    auto allocatable = objectField(d, "allocatable", path);
    if (!allocatable)
      return allocatable.error();
    if (*allocatable != nullptr) {
      if (const json::value* count = field(**allocatable, "count")) {
        auto n = int32Value(*count, childPath(childPath(path, "allocatable"), "count"));
        if (!n)
          return n.error();
        if (*n < 0) {
          return makeKubeError(
              fmt::format("{}.allocatable.count: must be greater than or equal "
                          "to 0",
                          path));
        }
        driver.allocatable_count = *n;
      }
    }
    node.drivers.push_back(std::move(driver));
  }
  return node;
}

}  // namespace koord::roles::scheduler::storage
