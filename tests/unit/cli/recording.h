// The snapshot cluster/cli's `koord snapshot` recorded (data/cluster-snapshot.json), which the
// operator commands' unit tests read.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "snapshot/cluster_snapshot.h"

namespace koord::roles::cli {

inline ClusterSnapshot recording() {
  auto s = readSnapshotFile(std::string(KOORD_CLI_DATA_DIR) + "/cluster-snapshot.json");
  REQUIRE(s.has_value());
  return std::move(*s);
}

/// The node the recording's pods run on (the one with a NodeSLO; the other is "<it>-hot").
inline std::string nodeName(const ClusterSnapshot& s) {
  return std::string(s.of("NodeSLO").at(0).at("metadata").at("name").as_string());
}

}  // namespace koord::roles::cli
