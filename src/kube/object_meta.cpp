#include "koord/kube/object_meta.h"

#include <boost/json.hpp>

#include <utility>

#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"

namespace koord::kube {

namespace {

namespace json = boost::json;
using namespace jsonfields;
using F = ObjectMetaFields;

Expected<void> readString(const json::object& meta, std::string_view name, std::string& out) {
  auto s = stringField(meta, name, "metadata");
  if (!s)
    return s.error();
  out = std::move(*s);
  return {};
}

Expected<void> readControllerRef(const json::object& meta, ObjectMeta& out) {
  auto owners = objectList(meta, "ownerReferences", "metadata");
  if (!owners)
    return owners.error();
  for (std::size_t i = 0; i < owners->size(); ++i) {
    const json::object& ref = *(*owners)[i];
    std::string path = indexPath("metadata.ownerReferences", i);
    auto controller = boolField(ref, "controller", path);
    if (!controller)
      return controller.error();
    if (!*controller)
      continue;
    auto kind = stringField(ref, "kind", path);
    if (!kind)
      return kind.error();
    auto name = stringField(ref, "name", path);
    if (!name)
      return name.error();
    auto uid = stringField(ref, "uid", path);
    if (!uid)
      return uid.error();
    auto api_version = stringField(ref, "apiVersion", path);
    if (!api_version)
      return api_version.error();
    out.controller_kind = std::move(*kind);
    out.controller_name = std::move(*name);
    out.controller_uid = std::move(*uid);
    out.controller_api_version = std::move(*api_version);
    break;
  }
  return {};
}

}  // namespace

Expected<void> decodeObjectMeta(const json::object& root, const ObjectMetaFields& read,
                                ObjectMeta& out) {
  auto metadata = objectField(root, "metadata", "");
  if (!metadata)
    return metadata.error();
  if (*metadata == nullptr)
    return {};
  const json::object& meta = **metadata;
  const unsigned m = read.members;
  const std::pair<unsigned, std::pair<std::string_view, std::string*>> strings[] = {
      {F::kNamespace, {"namespace", &out.namespace_}},
      {F::kName, {"name", &out.name}},
      {F::kUid, {"uid", &out.uid}},
      {F::kResourceVersion, {"resourceVersion", &out.resource_version}},
  };
  for (const auto& [bit, member] : strings) {
    if (m & bit) {
      if (auto r = readString(meta, member.first, *member.second); !r)
        return r;
    }
  }
  if (m & F::kLabels) {
    if (const json::value* labels = field(meta, "labels")) {
      auto decoded = decodeStringMap(*labels, "metadata.labels");
      if (!decoded)
        return decoded.error();
      out.labels = std::move(*decoded);
    }
  }
  if (m & F::kAnnotations) {
    if (const json::value* annotations = field(meta, "annotations")) {
      auto decoded =
          read.kept_annotations.empty()
              ? decodeStringMap(*annotations, "metadata.annotations")
              : decodeStringMapEntries(*annotations, read.kept_annotations, "metadata.annotations");
      if (!decoded)
        return decoded.error();
      out.annotations = std::move(*decoded);
    }
  }
  if (m & F::kCreationTimestamp) {
    auto t = timeField(meta, "creationTimestamp", "metadata");
    if (!t)
      return t.error();
    out.creation_timestamp = *t;
  }
  if (m & F::kDeletionTimestamp) {
    auto t = timeField(meta, "deletionTimestamp", "metadata");
    if (!t)
      return t.error();
    out.deletion_timestamp = *t;
  }
  if (m & F::kControllerRef)
    return readControllerRef(meta, out);
  return {};
}

}  // namespace koord::kube
