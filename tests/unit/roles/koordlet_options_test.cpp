#include "koordlet_options.h"

#include <catch2/catch.hpp>

#include "koord/apis/features.h"

using namespace koord;
using namespace koord::roles::koordlet;
using namespace std::chrono_literals;

TEST_CASE("koordlet takes Go-style single-dash flags", "[roles][koordlet]") {
  KoordletOptions o;
  FeatureGate gates(apis::koordletFeatures());
  FlagSet flags("koordlet");
  registerFlags(flags, o, gates, false);
  REQUIRE(flags.parse({"-addr=:9316", "-cgroup-root-dir=/host-cgroup/",
                       "-feature-gates=BECPUEvict=true,BEMemoryEvict=true,OOMScoreAdj=true",
                       "-collect-res-used-interval=2s", "-kube-api-qps", "40",
                       "-cgroup-driver=systemd", "-proc-root-dir=/tmp/proc"}) ==
          FlagSet::Outcome::kRun);
  app::applyCommonOptions(o.common, &gates);
  o.node_name = "node-a";
  CHECK_NOTHROW(validate(o));
  CHECK(o.collect_res_used_interval == 2s);
  CHECK(o.kube_api_qps == 40);
  CHECK(o.kube_api_burst == 30);
  CHECK(o.cgroup_driver == "systemd");
  CHECK(o.proc_root_dir == "/tmp/proc");
  CHECK(gates.enabled("BECPUEvict"));
  CHECK(gates.enabled("OOMScoreAdj"));    // a runtime-hook gate, same flag
  CHECK(gates.enabled("BECPUSuppress"));  // default true
  CHECK(gates.enabled("BatchResource"));
}

TEST_CASE("koordlet defaults follow the agent mode", "[roles][koordlet]") {
  KoordletOptions ds, host;
  FeatureGate g1(apis::koordletFeatures()), g2(apis::koordletFeatures());
  FlagSet f1("koordlet"), f2("koordlet");
  registerFlags(f1, ds, g1, false);
  registerFlags(f2, host, g2, true);
  CHECK(ds.cgroup_root_dir == "/host-cgroup/");
  CHECK(host.cgroup_root_dir == "/sys/fs/cgroup/");
  CHECK(ds.runtime_hooks_config_path == "/host-etc-hookserver/");
  CHECK(host.runtime_hooks_config_path == "/etc/runtime/hookserver.d");
  CHECK(ds.addr == ":9316");
  CHECK(ds.collect_res_used_interval == 1s);
}

TEST_CASE("koordlet refuses bad values and a missing NODE_NAME", "[roles][koordlet]") {
  KoordletOptions o;
  FeatureGate gates(apis::koordletFeatures());
  FlagSet flags("koordlet");
  registerFlags(flags, o, gates, false);
  CHECK_THROWS_AS(validate(o), app::ConfigError);  // NODE_NAME unset
  o.node_name = "n";
  flags.parse({"-cgroup-driver=cgroupv3"});
  CHECK_THROWS_WITH(validate(o), Catch::Contains("cgroup-driver"));
  flags.parse({"-collect-res-used-interval=0s"});
  CHECK_THROWS_WITH(validate(o), Catch::Contains("collect-res-used-interval"));
  flags.parse({"-runtime-hooks-failure-policy=Maybe"});
  CHECK_THROWS_WITH(validate(o), Catch::Contains("Maybe"));
}

TEST_CASE("koordlet reaches the kubelet's secure port by default", "[roles][koordlet]") {
  KoordletOptions o;
  FeatureGate gates(apis::koordletFeatures());
  FlagSet flags("koordlet");
  registerFlags(flags, o, gates, false);
  // Koordinator's defaults: HTTPS (no -kubelet-insecure-tls); the read-only port only with it.
  CHECK_FALSE(o.kubelet_insecure_tls);
  CHECK(o.kubelet_read_only_port == 10255);
  CHECK(o.kubelet_ca_file.empty());
  CHECK(o.kubelet_config_file == "/var/lib/kubelet/config.yaml");
  o.node_name = "n";
  REQUIRE(flags.parse({"-kubelet-insecure-tls", "-kubelet-read-only-port=0"}) ==
          FlagSet::Outcome::kRun);
  CHECK_THROWS_WITH(validate(o), Catch::Contains("-kubelet-read-only-port=0"));
}
