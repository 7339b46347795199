// decodeNode: the Node JSON -> Node projection (metadata, taints, allocatable and capacity,
// images interned), allocatable trimmed by the node's node.koordinator.sh/reservation.
#include "node_info.h"

#include <boost/json.hpp>

#include <array>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "koord/apis/reservation.h"
#include "koord/core/log.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/object_meta.h"

namespace koord::roles::scheduler {
namespace {

using namespace koord::kube::jsonfields;

namespace json = boost::json;
using kube::Expected;
using kube::makeKubeError;

// The node annotations a plugin reads; the rest (often large: kubeadm, CSI, flannel) are
// dropped at decode. LoadAware's estimator reads raw-allocatable (the allocatable before
// amplification), its filter the per-node usage thresholds; decodeNode itself the node
// reservation and the controllers to avoid (parsed into Node::avoid_pods, then dropped).
constexpr std::array<std::string_view, 4> kKeptNodeAnnotations = {
    "node.koordinator.sh/raw-allocatable",
    kAnnotationPreferAvoidPods,
    "scheduling.koordinator.sh/usage-thresholds",
    apis::kAnnotationNodeReservation,
};

// status.capacity / status.allocatable: names must be qualified names and amounts
// non-negative, as the API server validates them.
Expected<kube::ResourceList> nodeResourceList(const json::object& status, std::string_view name) {
  const json::value* v = field(status, name);
  if (v == nullptr)
    return kube::ResourceList{};
  std::string path = childPath("status", name);
  auto list = kube::decodeResourceList(*v, path);
  if (!list)
    return list.error();
  for (const auto& [res, q] : *list) {
    if (auto why = kube::validateLabelKey(res)) {
      return makeKubeError(fmt::format("{}[{}]: invalid resource name: {}", path, res, *why));
    }
    if (q.sign() < 0) {
      return makeKubeError(fmt::format("{}[{}]: must be greater than or equal to 0", path, res));
    }
  }
  return list;
}

// decodeNode runs again on every update of a node (status heartbeats among them), so a bad
// annotation is logged once per node and value; past kMaxRemembered nodes the memory of what
// was logged is dropped whole, which at worst logs some again.
void warnIgnoredReservation(std::string_view node, std::string_view value,
                            const kube::Error& error) {
  constexpr std::size_t kMaxRemembered = 10000;
  static std::mutex mu;
  static std::map<std::string, std::size_t, std::less<>> logged;  // node -> hash of the value
  const std::size_t hash = std::hash<std::string_view>{}(value);
  {
    std::lock_guard lock(mu);
    auto it = logged.find(node);
    if (it != logged.end() && it->second == hash)
      return;
    if (it == logged.end() && logged.size() >= kMaxRemembered)
      logged.clear();
    logged.insert_or_assign(std::string(node), hash);
  }
  KOORD_LOG_WARNING("node {}: ignoring a malformed node reservation, allocatable untrimmed: {}",
                    node, error.message);
}

// Koordinator's TrimNodeAllocatableByNodeReservation: what an operator keeps on the node for
// work outside Kubernetes is no pod's, so allocatable loses it, never below zero, on the
// resources the node reports. batch-cpu and batch-memory keep their values: the manager
// subtracted the reservation when it computed them. A malformed annotation trims nothing and
// refuses nothing (Koordinator logs and ignores it).
void trimByNodeReservation(const Node& node, kube::ResourceList& allocatable) {
  auto reservation = apis::nodeReservation(node.annotations);
  if (!reservation) {
    // Only an annotation that is there can be malformed.
    auto it = node.annotations.find(apis::kAnnotationNodeReservation);
    warnIgnoredReservation(node.name, it->second, reservation.error());
    return;
  }
  if (!*reservation || !(*reservation)->trimsAllocatable())
    return;
  const kube::ResourceList reserved = (*reservation)->reservedResources();
  for (auto& [name, amount] : allocatable) {
    if (name == apis::kBatchCPU || name == apis::kBatchMemory)
      continue;
    auto it = reserved.find(name);
    if (it == reserved.end())
      continue;
    // Both sides are non-negative (checked at decode), so sub() cannot overflow.
    if (!amount.sub(it->second) || amount.sign() < 0)
      amount = kube::Quantity();
  }
}

// The names are checked whole before any is interned, so a refused node changes nothing.
Expected<NodeImages> nodeImages(const json::object& status, std::string_view node) {
  auto items = objectList(status, "images", "status");
  if (!items)
    return items.error();
  if (items->size() > kMaxNodeImages) {
    return makeKubeError(fmt::format("status.images: {} images, more than the scheduler's {}",
                                     items->size(), kMaxNodeImages));
  }
  std::vector<ContainerImage> out;
  out.reserve(items->size());
  for (std::size_t i = 0; i < items->size(); ++i) {
    const std::string path = indexPath("status.images", i);
    ContainerImage image;
    auto names = stringList(*(*items)[i], "names", path);
    if (!names)
      return names.error();
    if (names->size() > kMaxImageNames) {
      return makeKubeError(fmt::format("{}.names: {} names, more than the scheduler's {}", path,
                                       names->size(), kMaxImageNames));
    }
    image.names = std::move(*names);
    auto size = int64Field(*(*items)[i], "sizeBytes", path);
    if (!size)
      return size.error();
    if (*size < 0)
      return makeKubeError(fmt::format("{}.sizeBytes: must be greater than or equal to 0", path));
    image.size_bytes = *size;
    out.push_back(std::move(image));
  }
  return NodeImages(out, node);
}

}  // namespace

kube::Expected<Node> decodeNode(const boost::json::value& v) {
  if (!v.is_object())
    return typeError("Node", "object", v);
  const json::object& root = v.get_object();
  Node node;

  using F = kube::ObjectMetaFields;
  static constexpr F kRead{
      .members = F::kName | F::kUid | F::kLabels | F::kAnnotations,
      .kept_annotations = kKeptNodeAnnotations,
  };
  kube::ObjectMeta meta;
  if (auto ok = kube::decodeObjectMeta(root, kRead, meta); !ok)
    return ok.error();
  node.name = std::move(meta.name);
  node.uid = std::move(meta.uid);
  node.labels = std::move(meta.labels);
  node.annotations = std::move(meta.annotations);
  if (auto it = node.annotations.find(kAnnotationPreferAvoidPods); it != node.annotations.end()) {
    node.avoid_pods = parsePreferAvoidPods(it->second);
    node.annotations.erase(it);
  }

  auto spec = objectField(root, "spec", "");
  if (!spec)
    return spec.error();
  if (*spec != nullptr) {
    auto unschedulable = boolField(**spec, "unschedulable", "spec");
    if (!unschedulable)
      return unschedulable.error();
    node.unschedulable = *unschedulable;
    if (const json::value* taints = field(**spec, "taints")) {
      auto decoded = kube::decodeTaints(*taints, "spec.taints");
      if (!decoded)
        return decoded.error();
      node.taints = std::move(*decoded);
    }
  }

  auto status = objectField(root, "status", "");
  if (!status)
    return status.error();
  if (*status != nullptr) {
    auto allocatable = nodeResourceList(**status, "allocatable");
    if (!allocatable)
      return allocatable.error();
    trimByNodeReservation(node, *allocatable);
    node.allocatable = Resource::fromList(*allocatable);
    auto capacity = nodeResourceList(**status, "capacity");
    if (!capacity)
      return capacity.error();
    node.capacity = Resource::fromList(*capacity);
    auto images = nodeImages(**status, node.name);
    if (!images)
      return images.error();
    node.images = std::move(*images);
  }
  return node;
}

}  // namespace koord::roles::scheduler
