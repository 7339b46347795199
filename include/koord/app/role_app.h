// What every role's main shares: the klog flags (-v, --logtostderr), --feature-gates, exit codes
// for bad input, and a RoleApp that owns the reactor and the /healthz, /readyz, /metrics servers.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "koord/core/feature_gate.h"
#include "koord/core/flags.h"
#include "koord/core/health.h"
#include "koord/core/metrics.h"
#include "koord/core/reactor.h"
#include "koord/http/ops_server.h"

namespace koord::kube {
struct RestConfig;
}

namespace koord::app {

/// Flags every role accepts, spelled as klog and component-base spell them.
struct CommonOptions {
  int verbosity = 0;
  bool logtostderr = true;
  bool alsologtostderr = false;
  std::string feature_gates;
};

/// Registers -v/--v, --logtostderr and --alsologtostderr.
void addLoggingFlags(FlagSet& flags, CommonOptions& options, int default_verbosity = 0);
/// Registers --feature-gates and lists `gates` in the role's --help.
void addFeatureGatesFlag(FlagSet& flags, CommonOptions& options, const FeatureGate& gates);

/// Applies the parsed common options: sets log verbosity and, when given, the feature gates.
/// Throws FlagError (exit 2) for a bad --feature-gates value or an unsupported logging choice.
void applyCommonOptions(const CommonOptions& options, FeatureGate* gates);

/// One warning line per feature gate the command line set that `role` never read (see
/// FeatureGate::setButUnread): call it once the role has wired itself up, before running.
void warnGatesWithoutEffect(const FeatureGate& gates, std::string_view role);

/// The koordlet's stricter report: also one warning line per gate that is on (by default or
/// set) but does nothing here, with why (not implemented, or the kernel file it lacks), and
/// the gauge `<prefix>_feature_enabled{feature,effective}` (1 on, 0 off) for every gate.
void reportGateEffects(const FeatureGate& gates, std::string_view role, metrics::Registry& registry,
                       std::string_view prefix);

/// A configuration fault found after parsing (bad address, inconsistent values): exit 1.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Runs a role body and turns its faults into exit codes, reporting each once on stderr:
/// FlagError -> 2 ("<binary>: <message>"), ConfigError and other exceptions -> 1.
int runRole(std::string_view binary, const std::function<int()>& body);

/// Parses argv into `flags`; prints usage and returns true when help was asked for.
bool parseOrHelp(FlagSet& flags, int argc, char** argv);

/// Where the API server is (kube::resolveConfig: --kubeconfig, in-cluster, $KUBECONFIG,
/// ~/.kube/config), with the role's client-side rate limit and user agent. Throws ConfigError
/// when there is none.
kube::RestConfig apiServerConfig(const std::string& kubeconfig, double qps, int burst,
                                 std::string user_agent);

/// "host:port", bracketing IPv6 hosts as Go's net.JoinHostPort does.
std::string joinHostPort(std::string_view host, int port);

using http::OpsEndpoints;

class RoleApp {
 public:
  RoleApp(std::string role, Reactor::Options reactor_options = {});
  ~RoleApp();
  RoleApp(const RoleApp&) = delete;
  RoleApp& operator=(const RoleApp&) = delete;

  Reactor& reactor();
  Health& health();
  metrics::Registry& metrics();

  /// A serving certificate chain and its key: PEM files (reloaded when they change), or PEM
  /// text held in memory.
  struct TlsFiles {
    std::string cert_file;
    std::string key_file;
    std::string cert_pem;
    std::string key_pem;
  };

  /// Starts an HTTP server on `address` ("host:port" or ":port") for the chosen endpoints, over
  /// TLS when `tls` is given. Throws ConfigError if it cannot bind. Returns the bound port
  /// (useful with port 0). `extra` adds the role's own handlers before the server starts (the
  /// koordlet's /events).
  uint16_t serveOps(const std::string& address, OpsEndpoints which = OpsEndpoints::kAll,
                    const TlsFiles* tls = nullptr,
                    const std::function<void(http::Server&)>& extra = {});

  /// Logs the start line and runs until SIGTERM/SIGINT; returns the exit code.
  int run();

  /// For a role whose work is not built yet: says so in one warning line, keeps /readyz at
  /// 503 with that reason, and runs (serving /healthz and /metrics) until stopped.
  int runNotImplemented(std::string_view what);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace koord::app
