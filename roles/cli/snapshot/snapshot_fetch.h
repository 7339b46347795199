// Takes a ClusterSnapshot from the API server: every snapshotKinds() kind listed in pages, at
// about the same moment, with what the server would not serve noted rather than fatal.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/rest_client.h"
#include "snapshot/cluster_snapshot.h"

namespace koord::roles::cli {

struct FetchOptions {
  /// Where the ConfigMaps of koord-scheduler and koord-manager live.
  std::string koord_namespace = "koordinator-system";
  /// Only these kinds (SnapshotKind::kind); empty for every kind. A command that reads a few
  /// kinds of a big cluster lists only those.
  std::vector<std::string_view> kinds;
  /// Called before each kind is listed (a terminal's progress line); may be empty.
  std::function<void(const SnapshotKind&)> on_kind;
  /// One line for each optional kind left out (not served, forbidden); may be empty.
  std::function<void(std::string_view)> warn;
};

/// An error names the kind and the API server's answer when a required kind (nodes, pods)
/// cannot be listed.
kube::Expected<ClusterSnapshot> takeSnapshot(kube::RestClient& client, const FetchOptions& options);

}  // namespace koord::roles::cli
