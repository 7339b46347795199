// decodeNode: the Node JSON -> Node projection (metadata, taints, allocatable and capacity).
#include "node_info.h"

#include <boost/json.hpp>

#include <array>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

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
// amplification), its filter the per-node usage thresholds.
constexpr std::array<std::string_view, 2> kKeptNodeAnnotations = {
    "node.koordinator.sh/raw-allocatable",
    "scheduling.koordinator.sh/usage-thresholds",
};

// status.capacity / status.allocatable: names must be qualified names and amounts
// non-negative, as the API server validates them.
Expected<Resource> nodeResourceList(const json::object& status, std::string_view name) {
  const json::value* v = field(status, name);
  if (v == nullptr)
    return Resource{};
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
  return Resource::fromList(*list);
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
    node.allocatable = std::move(*allocatable);
    auto capacity = nodeResourceList(**status, "capacity");
    if (!capacity)
      return capacity.error();
    node.capacity = std::move(*capacity);
  }
  return node;
}

}  // namespace koord::roles::scheduler
