// Topologies and CPU sets for the NodeNUMAResource core tests, built the way Koordinator's
// buildCPUTopologyForTest numbers them: CPUs, cores and NUMA nodes counted across sockets.
#pragma once

#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "koord/cgroup/cpu_topology.h"
#include "plugins/nodenumaresource/cpu_set.h"
#include "plugins/nodenumaresource/cpu_topology.h"

namespace nnr = koord::roles::scheduler::nodenumaresource;

inline std::vector<koord::cgroup::CpuInfo> cpuInfos(int sockets, int nodes_per_socket,
                                                    int cores_per_node, int cpus_per_core) {
  std::vector<koord::cgroup::CpuInfo> out;
  int node = 0, core = 0, cpu = 0;
  for (int s = 0; s < sockets; ++s) {
    for (int n = 0; n < nodes_per_socket; ++n) {
      for (int c = 0; c < cores_per_node; ++c) {
        for (int p = 0; p < cpus_per_core; ++p)
          out.push_back(koord::cgroup::CpuInfo{cpu++, core, s, node});
        ++core;
      }
      ++node;
    }
  }
  return out;
}

inline nnr::NodeCpuTopology topologyOf(int sockets, int nodes_per_socket, int cores_per_node,
                                       int cpus_per_core) {
  auto t = nnr::NodeCpuTopology::build(
      cpuInfos(sockets, nodes_per_socket, cores_per_node, cpus_per_core));
  REQUIRE(t.has_value());
  return std::move(*t);
}

inline nnr::CpuSet cpus(std::string_view list) {
  auto s = nnr::CpuSet::parse(list);
  REQUIRE(s.has_value());
  return std::move(*s);
}
