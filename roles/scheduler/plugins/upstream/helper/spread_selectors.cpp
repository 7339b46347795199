#include "plugins/upstream/helper/spread_selectors.h"

#include <boost/json.hpp>

#include <utility>

#include <fmt/format.h>

#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/object_meta.h"

namespace koord::roles::scheduler::upstream::helper {

namespace {

namespace json = boost::json;
using kube::Expected;
using kube::makeKubeError;
using kube::jsonfields::field;
using kube::jsonfields::objectField;
using kube::jsonfields::typeError;

constexpr std::string_view kSelectorPath = "spec.selector";

// The object's namespace and name, and its spec (null when absent).
Expected<const json::object*> readMeta(const json::value& v, SpreadingSelector& out) {
  if (!v.is_object())
    return typeError("", "object", v);
  const json::object& root = v.get_object();
  using Fields = kube::ObjectMetaFields;
  kube::ObjectMeta meta;
  if (auto read =
          kube::decodeObjectMeta(root, {.members = Fields::kNamespace | Fields::kName}, meta);
      !read)
    return read.error();
  out.namespace_ = std::move(meta.namespace_);
  out.name = std::move(meta.name);
  out.selector = kube::Selector::nothing();
  return objectField(root, "spec", "");
}

Expected<void> checkSize(const kube::Selector& selector) {
  std::size_t terms = 0;
  for (const auto& r : selector.requirements())
    terms += 1 + r.values().size();
  if (terms > kMaxSelectorTerms) {
    return makeKubeError(fmt::format("{}: {} terms, more than the {} allowed", kSelectorPath, terms,
                                     kMaxSelectorTerms));
  }
  return {};
}

// A map selector (Service, ReplicationController): equalities, nothing when nil or empty.
Expected<SpreadingSelector> decodeMapSelector(const json::value& v) {
  SpreadingSelector out;
  auto spec = readMeta(v, out);
  if (!spec)
    return spec.error();
  const json::value* sel = *spec ? field(**spec, "selector") : nullptr;
  if (sel == nullptr)
    return out;
  auto labels = kube::decodeStringMap(*sel, kSelectorPath);
  if (!labels)
    return labels.error();
  if (labels->size() > kMaxSelectorTerms) {
    return makeKubeError(fmt::format("{}: {} entries, more than the {} allowed", kSelectorPath,
                                     labels->size(), kMaxSelectorTerms));
  }
  if (!labels->empty())
    out.selector = kube::Selector::fromSet(*labels);
  return out;
}

// A metav1.LabelSelector (ReplicaSet, StatefulSet): nothing when nil or empty.
Expected<SpreadingSelector> decodeLabelSelector(const json::value& v) {
  SpreadingSelector out;
  auto spec = readMeta(v, out);
  if (!spec)
    return spec.error();
  const json::value* sel = *spec ? field(**spec, "selector") : nullptr;
  if (sel == nullptr)
    return out;
  auto decoded = kube::decodeLabelSelector(*sel, kSelectorPath);
  if (!decoded)
    return decoded.error();
  auto selector = kube::toSelector(*decoded);
  if (!selector)
    return makeKubeError(fmt::format("{}.{}", kSelectorPath, selector.error().message));
  if (auto size = checkSize(*selector); !size)
    return size.error();
  if (!selector->empty())
    out.selector = std::move(*selector);
  return out;
}

}  // namespace

Expected<SpreadingSelector> decodeServiceSelector(const json::value& v) {
  return decodeMapSelector(v);
}

Expected<SpreadingSelector> decodeReplicationControllerSelector(const json::value& v) {
  return decodeMapSelector(v);
}

Expected<SpreadingSelector> decodeReplicaSetSelector(const json::value& v) {
  return decodeLabelSelector(v);
}

Expected<SpreadingSelector> decodeStatefulSetSelector(const json::value& v) {
  return decodeLabelSelector(v);
}

}  // namespace koord::roles::scheduler::upstream::helper
