// What koord_apis' CRD projections (Reservation, PodMigrationJob, PodGroup, ElasticQuota, ...)
// decode alike (internal to koord_apis): the root with its metadata, references and conditions.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <string_view>
#include <utility>

#include "koord/apis/reservation.h"
#include "koord/kube/error.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/object_meta.h"
#include "object_fields.h"

namespace koord::apis::detail {

/// corev1.ObjectReference's apiVersion, kind, namespace, name and uid.
kube::Expected<ObjectReference> decodeObjectReference(const boost::json::object& o,
                                                      std::string_view path);

/// A status.conditions[] item: the four strings, then the two times.
kube::Expected<StatusCondition> decodeCondition(const boost::json::object& o,
                                                std::string_view path);

/// A CRD object into T: `kind` names the root when it is not an object; the metadata members T
/// keeps (name, uid, resourceVersion, labels, creation and deletion times, and the namespace and
/// annotations where T has them), then spec and status through their decoders when present.
template <typename T>
kube::Expected<T> decodeCrd(const boost::json::value& v, std::string_view kind,
                            kube::Expected<void> (*spec)(const boost::json::object&, T&),
                            kube::Expected<void> (*status)(const boost::json::object&, T&)) {
  if (!v.is_object())
    return kube::jsonfields::typeError(kind, "object", v);
  const boost::json::object& root = v.get_object();
  T out;

  using F = kube::ObjectMetaFields;
  constexpr bool kAnnotated = requires(T & t) {
    t.annotations;
  };
  constexpr bool kNamespaced = requires(T & t) {
    t.namespace_;
  };
  kube::ObjectMeta meta;
  if (auto ok = kube::decodeObjectMeta(
          root,
          {.members = (kNamespaced ? F::kNamespace : 0u) | F::kName | F::kUid |
                      F::kResourceVersion | F::kLabels | (kAnnotated ? F::kAnnotations : 0u) |
                      F::kCreationTimestamp | F::kDeletionTimestamp},
          meta);
      !ok) {
    return ok.error();
  }
  if constexpr (kNamespaced)
    out.namespace_ = std::move(meta.namespace_);
  out.name = std::move(meta.name);
  out.uid = std::move(meta.uid);
  out.resource_version = std::move(meta.resource_version);
  out.labels = std::move(meta.labels);
  if constexpr (kAnnotated)
    out.annotations = std::move(meta.annotations);
  out.creation_timestamp =
      meta.creation_timestamp.value_or(std::chrono::system_clock::time_point{});
  out.terminating = meta.deletion_timestamp.has_value();

  if (auto ok = decodeMember(root, "spec", "", spec, out); !ok)
    return ok.error();
  if (auto ok = decodeMember(root, "status", "", status, out); !ok)
    return ok.error();
  return out;
}

}  // namespace koord::apis::detail
