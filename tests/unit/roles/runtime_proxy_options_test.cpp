#include "runtime_proxy_options.h"

#include <catch2/catch.hpp>

using namespace koord;
using namespace koord::roles::runtime_proxy;

TEST_CASE("runtime-proxy flags and backend modes", "[roles][runtimeproxy]") {
  RuntimeProxyOptions o;
  FlagSet flags("koord-runtime-proxy");
  registerFlags(flags, o);
  REQUIRE(flags.parse(std::vector<std::string>{}) == FlagSet::Outcome::kRun);
  CHECK(o.koord_runtimeproxy_endpoint == "/var/run/koord-runtimeproxy/runtimeproxy.sock");
  CHECK(o.remote_runtime_service_endpoint == "/var/run/containerd/containerd.sock");
  CHECK(o.backend_runtime_mode == "Containerd");
  CHECK(o.runtime_hook_server_key == "runtimeproxy.koordinator.sh/skip-hookserver");
  CHECK(o.runtime_hook_server_val == "true");
  CHECK(o.skip_hookserver_namespaces == std::vector<std::string>{"kube-system"});
  // Reliability check 23: a hung hook server may hold a pod's start for this long at most.
  CHECK(o.hook_server_timeout > std::chrono::milliseconds(0));
  CHECK(o.hook_server_timeout <= std::chrono::seconds(5));
  CHECK_NOTHROW(validate(o));
  flags.parse({"--backend-runtime-mode=Docker"});
  CHECK_THROWS_AS(validate(o), app::ConfigError);
  flags.parse({"--backend-runtime-mode=cri-o"});
  CHECK_THROWS_AS(validate(o), FlagError);
}

TEST_CASE("runtime-proxy flags: the namespaces where the skip label counts",
          "[roles][runtimeproxy]") {
  RuntimeProxyOptions o;
  FlagSet flags("koord-runtime-proxy");
  registerFlags(flags, o);
  REQUIRE(flags.parse(std::vector<std::string>{
              "--skip-hookserver-namespaces=kube-system,koordinator-system"}) ==
          FlagSet::Outcome::kRun);
  CHECK(o.skip_hookserver_namespaces ==
        std::vector<std::string>{"kube-system", "koordinator-system"});
  CHECK_NOTHROW(validate(o));
}
