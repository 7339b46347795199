// What every role's main shares: the klog flags (-v, --logtostderr), --feature-gates, exit codes
// for bad input, and a RoleApp that owns the reactor and the /healthz, /readyz, /metrics servers.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/core/feature_gate.h"
#include "koord/core/flags.h"
#include "koord/core/health.h"
#include "koord/core/log_output.h"
#include "koord/core/metrics.h"
#include "koord/core/reactor.h"
#include "koord/http/ops_server.h"

namespace koord::kube {
struct RestConfig;
}

namespace koord::app {

/// Flags every role accepts, spelled as klog and component-base spell them.
struct CommonOptions {
  /// The role's binary name (klog's file names in --log_dir start with it).
  std::string program;
  int verbosity = 0;
  bool logtostderr = true;
  bool alsologtostderr = false;
  std::string log_dir;
  std::string log_file;
  std::int64_t log_file_max_size_mb = 1800;
  bool skip_headers = false;
  bool skip_log_headers = false;
  bool add_dir_header = false;
  bool one_output = false;
  std::string stderrthreshold = "2";
  std::string vmodule;
  std::string log_backtrace_at = ":0";
  std::string logging_format = "text";
  std::chrono::milliseconds log_flush_frequency{5000};
  bool log_json_split_stream = false;
  std::string log_json_info_buffer_size = "0";
  std::string feature_gates;
};

/// Registers klog's flags (-v, --logtostderr, --alsologtostderr, --log_dir, --log_file,
/// --log_file_max_size, --skip_headers, --skip_log_headers, --add_dir_header, --one_output,
/// --stderrthreshold, --vmodule, --log_backtrace_at) and component-base's (--logging-format,
/// --log-flush-frequency, --log-json-split-stream, --log-json-info-buffer-size).
void addLoggingFlags(FlagSet& flags, CommonOptions& options, int default_verbosity = 0);

/// The log output the logging flags ask for. FlagError for a value klog refuses (an unknown
/// --stderrthreshold or --logging-format, a negative size).
log::Output logOutputFrom(const CommonOptions& options, std::chrono::system_clock::time_point now =
                                                            std::chrono::system_clock::now());

/// One warning line per logging flag set to something koord does not do (klog's per-severity
/// files, --vmodule, --log_backtrace_at, buffering and flush settings), naming it.
void warnLoggingFlagsWithoutEffect(const CommonOptions& options, std::string_view role);
/// Registers --feature-gates and lists `gates` in the role's --help.
void addFeatureGatesFlag(FlagSet& flags, CommonOptions& options, const FeatureGate& gates);

/// Applies the parsed common options: the log output and verbosity (warning once for each
/// logging flag without effect) and, when given, the feature gates. Throws FlagError (exit 2)
/// for a bad --feature-gates value or logging flag, ConfigError for a log file it cannot open.
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

/// component-base's --version: "<program> <version>" for --version, the version.Info struct as
/// Go prints it for --version=raw; nullopt when neither was asked for (args exclude argv[0]).
std::optional<std::string> versionOutput(std::string_view program,
                                         const std::vector<std::string_view>& args);

/// Parses argv into `flags`; prints usage (or the version, see versionOutput) and returns true
/// when help or the version was asked for.
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
