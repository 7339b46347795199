// The kubelet's /configz as the koordlet reads it: the CPU manager and topology policies with the
// kubelet's defaults, the static policy's reserved CPUs (reservedSystemCPUs, else the kube and
// system reservations taken as the kubelet takes them), and refusals that name the field.
#include <catch2/catch.hpp>

#include <string>

#include "koord/cgroup/cpu_topology.h"
#include "statesinformer/kubelet_config.h"

using namespace koord::roles::koordlet;
namespace cgroup = koord::cgroup;

namespace {

// Two sockets of two SMT-2 cores: CPUs 0-3 on socket 0 (cores 0 and 1 as 0,2 and 1,3), 4-7 on 1.
cgroup::CpuTopology topology() {
  cgroup::CpuTopology t;
  for (int cpu = 0; cpu < 8; ++cpu)
    t.cpus.push_back({cpu, cpu % 2, cpu / 4, cpu / 4});
  return t;
}

KubeletConfig parse(const std::string& inner) {
  auto c = parseKubeletConfigz(R"({"kubeletconfig":)" + inner + "}");
  REQUIRE(c.has_value());
  return *c;
}

}  // namespace

TEST_CASE("kubelet configz: the policies, with the kubelet's defaults", "[koordlet][configz]") {
  const KubeletConfig defaults = parse("{}");
  CHECK(defaults.cpu_manager_policy == "none");
  CHECK(defaults.topology_manager_policy == "none");
  CHECK(defaults.topology_manager_scope == "container");
  std::string warning;
  const auto none = cpuManagerPolicyOf(defaults, topology(), warning);
  CHECK(none.policy == "none");
  CHECK(none.reserved_cpus.empty());
  CHECK(warning.empty());

  const KubeletConfig c = parse(
      R"({"cpuManagerPolicy":"static","cpuManagerPolicyOptions":{"full-pcpus-only":"true"},
          "topologyManagerPolicy":"single-numa-node","topologyManagerScope":"pod",
          "kubeReserved":{"cpu":"500m","memory":"1Gi"},"systemReserved":{"cpu":"1"},
          "evictionHard":{"memory.available":"100Mi"}})");
  CHECK(c.cpu_manager_policy == "static");
  CHECK(c.cpu_manager_policy_options.at("full-pcpus-only") == "true");
  CHECK(c.topology_manager_policy == "single-numa-node");
  CHECK(c.topology_manager_scope == "pod");
  CHECK(c.kube_reserved_milli_cpu == 500);
  CHECK(c.system_reserved_milli_cpu == 1000);
}

TEST_CASE("kubelet configz: the static policy's reserved CPUs", "[koordlet][configz]") {
  // ceil(0.5 + 1) = 2 CPUs: one whole core, the lowest.
  auto two =
      staticPolicyReservedCpus(parse(R"({"cpuManagerPolicy":"static","kubeReserved":{"cpu":"500m"},
                "systemReserved":{"cpu":"1"}})"),
                               topology());
  REQUIRE(two.has_value());
  CHECK(*two == "0,2");
  // reservedSystemCPUs decides alone.
  auto listed = staticPolicyReservedCpus(
      parse(
          R"({"cpuManagerPolicy":"static","reservedSystemCPUs":"5,4","kubeReserved":{"cpu":"3"}})"),
      topology());
  REQUIRE(listed.has_value());
  CHECK(*listed == "4-5");
  // The kubelet refuses a static policy with nothing reserved; Koordinator reports no CPUs.
  std::string warning;
  const auto policy =
      cpuManagerPolicyOf(parse(R"({"cpuManagerPolicy":"static"})"), topology(), warning);
  CHECK(policy.policy == "static");
  CHECK(policy.reserved_cpus.empty());
  CHECK_THAT(warning, Catch::Contains("greater than zero"));
  CHECK_FALSE(
      staticPolicyReservedCpus(
          parse(R"({"cpuManagerPolicy":"static","systemReserved":{"cpu":"9"}})"), topology())
          .has_value());
}

TEST_CASE("kubelet configz: malformed bodies are refused with the field", "[koordlet][configz]") {
  for (const std::string bad : {"", "[]", R"({"kubeletconfig":1})", "{}"}) {
    INFO(bad);
    CHECK_FALSE(parseKubeletConfigz(bad).has_value());
  }
  auto typed = parseKubeletConfigz(R"({"kubeletconfig":{"cpuManagerPolicy":7}})");
  REQUIRE_FALSE(typed.has_value());
  CHECK_THAT(typed.error().message, Catch::Contains("cpuManagerPolicy"));
  auto quantity = parseKubeletConfigz(R"({"kubeletconfig":{"kubeReserved":{"cpu":"lots"}}})");
  REQUIRE_FALSE(quantity.has_value());
  CHECK_THAT(quantity.error().message, Catch::Contains("kubeReserved.cpu"));
  CHECK_FALSE(parseKubeletConfigz(std::string(kMaxKubeletConfigzBytes + 1, ' ')).has_value());
}
