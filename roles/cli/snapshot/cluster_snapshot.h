// The cluster's objects the operator commands read, taken at one moment: from the API server by
// `koord snapshot`, or from the file it wrote, so every command runs the same on a recording.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"

namespace koord::roles::cli {

/// One kind a snapshot holds, as the API serves it (Koordinator v1.5's versions).
struct SnapshotKind {
  std::string_view kind;         // "Node"
  std::string_view api_version;  // "v1", "slo.koordinator.sh/v1alpha1"
  std::string_view resource;     // plural: "nodes"
  bool namespaced = false;
  /// Only these are kept: the koordlet's eviction Events, not every Event of the cluster.
  std::string_view field_selector;
  /// Listed in the koord namespace alone (the scheduler's and manager's ConfigMaps).
  bool koord_namespace_only = false;
  /// Without it no command can say anything: a snapshot that cannot list it is an error.
  bool required = false;
};

/// Node, Pod, NodeMetric, NodeSLO, Device, NodeResourceTopology, Reservation, ElasticQuota,
/// PodGroup, ConfigMap (koord namespace), Event (reason=evictPodSuccess).
std::span<const SnapshotKind> snapshotKinds();

/// A file bigger than this is refused before it is read (a 5,000-node cluster with its pods
/// and metrics writes a few hundred MiB).
inline constexpr std::size_t kMaxSnapshotBytes = std::size_t{2} << 30;
/// More objects than this in one snapshot is refused.
inline constexpr std::size_t kMaxSnapshotObjects = 2'000'000;

struct ClusterSnapshot {
  /// When it was taken; the ages the commands print are measured from here, not from now.
  std::chrono::system_clock::time_point taken_at;
  /// The API server it came from ("" for a plain List).
  std::string server;
  /// The objects of each kind (SnapshotKind::kind), as the API server sent them, without
  /// metadata.managedFields; apiVersion and kind set on each.
  std::map<std::string, std::vector<boost::json::value>, std::less<>> objects;
  /// Kinds the server did not serve (a CRD not installed) or would not list to this user.
  std::vector<std::string> missing_kinds;

  /// The objects of `kind` (empty when none).
  const std::vector<boost::json::value>& of(std::string_view kind) const;
};

/// Reads what formatSnapshot writes, or a plain `kind: List` as `kubectl get -o json|yaml`
/// writes it (taken_at then is the newest NodeMetric update, else the epoch). JSON or YAML.
/// Items of kinds not in snapshotKinds() are skipped; errors name the item and field.
kube::Expected<ClusterSnapshot> parseSnapshot(std::string_view text);
/// parseSnapshot of a file, bounded by kMaxSnapshotBytes; errors name the path.
kube::Expected<ClusterSnapshot> readSnapshotFile(const std::string& path);

/// {"apiVersion": "koord.koordinator.sh/v1alpha1", "kind": "Snapshot", "takenAt", "server",
/// "missingKinds", "items": [...]}: JSON with one object per line, kinds in snapshotKinds()
/// order and objects by namespace and name, so two snapshots diff line by line.
std::string formatSnapshot(const ClusterSnapshot& snapshot);

/// Drops metadata.managedFields and sets apiVersion and kind (a list's items carry neither).
void normalizeItem(boost::json::value& item, const SnapshotKind& kind);

}  // namespace koord::roles::cli
