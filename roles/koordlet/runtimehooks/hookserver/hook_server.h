// The koordlet's runtime hook server: serves RuntimeHookService on its unix socket and registers
// itself with koord runtime-proxy by writing koordlet.json into the hookserver.d directory.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace koord::h2 {
class GrpcUnaryServer;
}  // namespace koord::h2
namespace koord::cgroup {
class ResourceExecutor;
}

namespace koord::roles::koordlet {

class HookRegistry;

struct HookServerOptions {
  /// Where to listen (-runtime-hooks-addr) and the same socket as the proxy on the host sees it
  /// (-runtime-hooks-host-endpoint; the koordlet's container mounts the host dir elsewhere).
  std::string addr;
  std::string host_endpoint;
  /// "Ignore" or "Fail" (-runtime-hooks-failure-policy).
  std::string failure_policy = "Ignore";
  /// The directory koordlet.json goes into (-runtime-hooks-config-path).
  std::string config_path;
  /// Hook types left out of the registration (-runtime-hooks-disable-stages).
  std::vector<std::string> disable_stages;
  /// The hooks that answer, each at the stages it registered for (null: none, every answer
  /// empty). Outlives the server.
  const HookRegistry* hooks = nullptr;
  /// What hooks may read: BatchResource keeps a container's quota within its pod cgroup's.
  /// Null: nothing is read, the plan's values as they are.
  const cgroup::ResourceExecutor* cgroups = nullptr;
};

/// Every hook type the koordlet serves, in Koordinator's spelling.
const std::vector<std::string>& koordletHookTypes();

/// The registration file's content.
std::string hookRegistration(const HookServerOptions& options);

class HookServer {
 public:
  explicit HookServer(HookServerOptions options);
  ~HookServer();
  HookServer(const HookServer&) = delete;
  HookServer& operator=(const HookServer&) = delete;

  /// Listens and registers. Throws app::ConfigError when it cannot (the caller decides whether
  /// the koordlet goes on without hooks).
  void start();
  void stop();

 private:
  HookServerOptions options_;
  std::unique_ptr<h2::GrpcUnaryServer> server_;
};

}  // namespace koord::roles::koordlet
