// The metadata members the projections read (namespace, name, uid, labels, owners, times),
// decoded in one place with errors naming "metadata.<member>"; each caller reads only its own.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::kube {

/// metav1.ObjectMeta as far as koord reads it; members not asked for stay empty.
struct ObjectMeta {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  Labels labels;
  Labels annotations;
  std::optional<std::chrono::system_clock::time_point> creation_timestamp;
  std::optional<std::chrono::system_clock::time_point> deletion_timestamp;
  /// metav1.GetControllerOf: the first owner reference marked controller ("" when none).
  std::string controller_kind;
  std::string controller_name;
  std::string controller_uid;
  std::string controller_api_version;
};

/// What decodeObjectMeta reads: a member not asked for is neither copied nor checked.
struct ObjectMetaFields {
  static constexpr unsigned kNamespace = 1u << 0;
  static constexpr unsigned kName = 1u << 1;
  static constexpr unsigned kUid = 1u << 2;
  static constexpr unsigned kResourceVersion = 1u << 3;
  static constexpr unsigned kLabels = 1u << 4;
  static constexpr unsigned kAnnotations = 1u << 5;
  static constexpr unsigned kCreationTimestamp = 1u << 6;
  static constexpr unsigned kDeletionTimestamp = 1u << 7;
  /// ownerReferences, down to the controller's kind, name, uid and apiVersion.
  static constexpr unsigned kControllerRef = 1u << 8;

  unsigned members = 0;
  /// With kAnnotations: only these keys are kept and checked (a pod's annotations often carry
  /// kilobytes of last-applied-configuration); empty keeps every annotation.
  std::span<const std::string_view> kept_annotations = {};
};

/// Reads the chosen members of root.metadata into `out`, in the order the members are listed
/// above, stopping at the first bad one; absent or null metadata leaves `out` as it is.
Expected<void> decodeObjectMeta(const boost::json::object& root, const ObjectMetaFields& read,
                                ObjectMeta& out);

}  // namespace koord::kube
