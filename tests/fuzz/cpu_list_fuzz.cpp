// cpuset.cpus files, sysfs cpulists and the cpusets in pod annotations (resource-status,
// node reservation) all go through parseCpuList; what it accepts must print back to a list that
// parses to the same CPUs, since the koordlet writes the printed form into cgroups.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "koord/cgroup/cpu_topology.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto cpus = koord::cgroup::parseCpuList(text);
  if (!cpus)
    return 0;
  auto again = koord::cgroup::parseCpuList(koord::cgroup::formatCpuList(*cpus));
  if (!again || *again != *cpus)
    std::abort();
  return 0;
}
