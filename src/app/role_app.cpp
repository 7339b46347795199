#include "koord/app/role_app.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <vector>

#include "koord/core/log.h"
#include "koord/core/process_metrics.h"
#include "koord/core/version.h"
#include "koord/http/ops_server.h"
#include "koord/http/server.h"

namespace koord::app {

void addLoggingFlags(FlagSet& flags, CommonOptions& options, int default_verbosity) {
  // klog names its files after the binary, not the path it was started by.
  options.program = std::filesystem::path(flags.program()).filename().string();
  flags.addInt("v", &options.verbosity, default_verbosity, "Number for the log level verbosity.");
  flags.addBool("logtostderr", &options.logtostderr, true,
                "Log to standard error instead of files.");
  flags.addBool("alsologtostderr", &options.alsologtostderr, false,
                "Log to standard error as well as files (no effect when -logtostderr=true).");
  flags.addString("log_dir", &options.log_dir, "",
                  "If non-empty, write log files in this directory (no effect when "
                  "-logtostderr=true).");
  flags.addString("log_file", &options.log_file, "",
                  "If non-empty, use this log file (no effect when -logtostderr=true).");
  flags.addInt64("log_file_max_size", &options.log_file_max_size_mb, 1800,
                 "Defines the maximum size a log file can grow to (no effect when "
                 "-logtostderr=true). Unit is megabytes. If the value is 0, the maximum file size "
                 "is unlimited.");
  flags.addBool("skip_headers", &options.skip_headers, false,
                "If true, avoid header prefixes in the log messages.");
  flags.addBool("skip_log_headers", &options.skip_log_headers, false,
                "If true, avoid headers when opening log files (no effect when "
                "-logtostderr=true).");
  flags.addBool("add_dir_header", &options.add_dir_header, false,
                "If true, adds the file directory to the header of the log messages.");
  flags.addBool("one_output", &options.one_output, false,
                "If true, only write logs to their native severity level (vs also writing to each "
                "lower severity level; no effect when -logtostderr=true).");
  flags.addString("stderrthreshold", &options.stderrthreshold, "2",
                  "Logs at or above this threshold go to stderr when writing to files and stderr "
                  "(no effect when -logtostderr=true or -alsologtostderr=true).");
  flags.addString("vmodule", &options.vmodule, "",
                  "Comma-separated list of pattern=N settings for file-filtered logging "
                  "(accepted; no effect in koord yet).");
  flags.addString("log_backtrace_at", &options.log_backtrace_at, ":0",
                  "When logging hits line file:N, emit a stack trace (accepted; no effect).");
  flags.addString("logging-format", &options.logging_format, "text",
                  "Sets the log format. Permitted formats: \"json\", \"text\".");
  flags.addDuration("log-flush-frequency", &options.log_flush_frequency,
                    std::chrono::milliseconds(5000),
                    "Maximum number of seconds between log flushes (koord writes every line at "
                    "once).");
  flags.addBool("log-json-split-stream", &options.log_json_split_stream, false,
                "[Alpha] In JSON format, write error messages to stderr and info messages to "
                "stdout (accepted; no effect).");
  flags.addString("log-json-info-buffer-size", &options.log_json_info_buffer_size, "0",
                  "[Alpha] In JSON format with split output streams, the info messages can be "
                  "buffered (accepted; no effect).");
}

namespace {

// klog's severity flag: a name (any case) or its number.
int parseStderrThreshold(std::string_view value) {
  static constexpr std::array<std::string_view, 4> kNames = {"INFO", "WARNING", "ERROR", "FATAL"};
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (value.size() == kNames[i].size() &&
        std::equal(value.begin(), value.end(), kNames[i].begin(),
                   [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; }))
      return static_cast<int>(i);
  }
  if (value.size() == 1 && value[0] >= '0' && value[0] <= '3')
    return value[0] - '0';
  throw FlagError(
      fmt::format("invalid value \"{}\" for flag -stderrthreshold: not INFO, "
                  "WARNING, ERROR, FATAL or 0-3",
                  value));
}

// Go's os.TempDir: $TMPDIR, else /tmp.
std::string tempDir() {
  const char* env = std::getenv("TMPDIR");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string("/tmp");
}

}  // namespace

log::Output logOutputFrom(const CommonOptions& options, std::chrono::system_clock::time_point now) {
  log::Output out;
  if (options.logging_format == "json")
    out.json = true;
  else if (options.logging_format != "text")
    throw FlagError(
        fmt::format("--logging-format: \"{}\" is not one of json, text", options.logging_format));
  if (options.log_file_max_size_mb < 0)
    throw FlagError("--log_file_max_size: must not be negative");
  // Past this many megabytes the byte count would overflow: no limit, as 0 is.
  constexpr std::int64_t kMaxMegabytes = std::int64_t{1} << 40;
  out.file_max_bytes = options.log_file_max_size_mb >= kMaxMegabytes
                           ? 0
                           : static_cast<std::uint64_t>(options.log_file_max_size_mb) << 20;
  out.stderr_threshold = parseStderrThreshold(options.stderrthreshold);
  out.skip_headers = options.skip_headers;
  out.add_dir_header = options.add_dir_header;
  out.file_header = !options.skip_log_headers;
  out.to_stderr = options.logtostderr;
  out.also_to_stderr = options.alsologtostderr;
  if (out.to_stderr)
    return out;
  if (!options.log_file.empty()) {
    out.file = options.log_file;
    return out;
  }
  const std::string dir = options.log_dir.empty() ? tempDir() : options.log_dir;
  const std::string program = options.program.empty() ? std::string("koord") : options.program;
  out.file = (std::filesystem::path(dir) / log::logDirFileName(program, now)).string();
  out.symlink = (std::filesystem::path(dir) / (program + ".INFO")).string();
  return out;
}

void warnLoggingFlagsWithoutEffect(const CommonOptions& o, std::string_view role) {
  auto warn = [&](std::string_view flag, std::string_view why) {
    KOORD_LOG_WARNING("{}: flag --{} has no effect in koord: {}", role, flag, why);
  };
  if (o.logtostderr) {
    constexpr std::string_view kToStderr = "logs go to standard error (-logtostderr=true)";
    if (!o.log_dir.empty())
      warn("log_dir", kToStderr);
    if (!o.log_file.empty())
      warn("log_file", kToStderr);
    if (o.alsologtostderr)
      warn("alsologtostderr", kToStderr);
  } else if (o.log_file.empty()) {
    warn("log_dir",
         "every line goes to the INFO file; klog's WARNING and ERROR files are not "
         "written");
  }
  if (o.one_output)
    warn("one_output", "koord writes no per-severity files");
  if (!o.vmodule.empty())
    warn("vmodule", "not implemented yet; -v applies to every file");
  if (!o.log_backtrace_at.empty() && o.log_backtrace_at != ":0")
    warn("log_backtrace_at", "no stack traces are logged");
  if (o.log_flush_frequency != std::chrono::milliseconds(5000))
    warn("log-flush-frequency", "every line is written at once");
  if (o.log_json_split_stream)
    warn("log-json-split-stream", "every line goes to one stream");
  if (o.log_json_info_buffer_size != "0" && !o.log_json_info_buffer_size.empty())
    warn("log-json-info-buffer-size", "lines are not buffered");
}

void addFeatureGatesFlag(FlagSet& flags, CommonOptions& options, const FeatureGate& gates) {
  flags.addString("feature-gates", &options.feature_gates, "",
                  "A set of key=value pairs that describe feature gates for alpha/experimental "
                  "features. Options are listed below.");
  flags.addHelpSection("Feature gates (--feature-gates)", gates.helpLines());
}

namespace {

void warnUnreadSetting(std::string_view role, const std::string& setting) {
  KOORD_LOG_WARNING("{}: feature gate {} has no effect in koord yet", role, setting);
}

}  // namespace

void warnGatesWithoutEffect(const FeatureGate& gates, std::string_view role) {
  for (const auto& setting : gates.setButUnread())
    warnUnreadSetting(role, setting);
}

void reportGateEffects(const FeatureGate& gates, std::string_view role, metrics::Registry& registry,
                       std::string_view prefix) {
  // A gate set on and never read gets the effects line below; only a gate set off that no code
  // reads keeps warnGatesWithoutEffect's line, so no gate is named twice.
  for (const auto& setting : gates.setButUnread()) {
    if (setting.ends_with("=false"))
      warnUnreadSetting(role, setting);
  }
  auto& gauge =
      registry.gauge(fmt::format("{}_feature_enabled", prefix),
                     "Whether a feature gate is on (1) or off (0); effective=false when it is on "
                     "but does nothing in this build or on this host",
                     {"feature", "effective"});
  for (const FeatureGate::Effect& e : gates.effects()) {
    if (e.enabled && !e.effective)
      KOORD_LOG_WARNING("{}: feature gate {} is on but has no effect: {}", role, e.name, e.why);
    gauge.with({e.name, e.effective ? "true" : "false"}).set(e.enabled ? 1.0 : 0.0);
  }
}

void applyCommonOptions(const CommonOptions& options, FeatureGate* gates) {
  if (options.verbosity < 0)
    throw FlagError("invalid value for -v: must be >= 0");
  if (gates == nullptr && !options.feature_gates.empty()) {
    throw FlagError("--feature-gates: this role has no feature gates");
  }
  const log::Output output = logOutputFrom(options);
  try {
    log::setOutput(output);
  } catch (const std::runtime_error& e) {
    throw ConfigError(e.what());
  }
  log::setVerbosity(options.verbosity);
  warnLoggingFlagsWithoutEffect(
      options, options.program.empty() ? std::string_view("koord") : options.program);
  if (gates == nullptr)
    return;
  try {
    gates->set(options.feature_gates);
  } catch (const FeatureGateError& e) {
    throw FlagError(fmt::format("invalid argument for --feature-gates: {}", e.what()));
  }
}

int runRole(std::string_view binary, const std::function<int()>& body) {
  try {
    return body();
  } catch (const FlagError& e) {
    std::fputs(fmt::format("{}: {}\n", binary, e.what()).c_str(), stderr);
    return 2;
  } catch (const std::exception& e) {
    KOORD_LOG_ERROR("{}: {}", binary, e.what());
    return 1;
  }
}

namespace {

constexpr std::string_view kPlatform =
#if defined(__aarch64__)
    "linux/arm64";
#else
    "linux/amd64";
#endif

}  // namespace

std::optional<std::string> versionOutput(std::string_view program,
                                         const std::vector<std::string_view>& args) {
  for (std::string_view a : args) {
    if (a == "--")
      break;
    if (a.starts_with("--"))
      a.remove_prefix(2);
    else if (a.starts_with("-"))
      a.remove_prefix(1);
    else
      continue;
    if (a == "version" || a == "version=true")
      return fmt::format("{} {}\n", program, versionString());
    if (a == "version=raw") {
      return fmt::format(
          "version.Info{{Major:\"\", Minor:\"\", GitVersion:\"{}\", GitCommit:\"{}\", "
          "GitTreeState:\"\", BuildDate:\"\", GoVersion:\"\", Compiler:\"gcc\", "
          "Platform:\"{}\"}}\n",
          versionString(), gitCommit(), kPlatform);
    }
  }
  return std::nullopt;
}

bool parseOrHelp(FlagSet& flags, int argc, char** argv) {
  std::vector<std::string_view> args(argv + std::min(argc, 1), argv + argc);
  if (auto version =
          versionOutput(std::filesystem::path(flags.program()).filename().string(), args)) {
    std::fputs(version->c_str(), stdout);
    return true;
  }
  if (flags.parse(argc, argv) == FlagSet::Outcome::kHelp) {
    std::fputs(flags.usage().c_str(), stdout);
    return true;
  }
  return false;
}

std::string joinHostPort(std::string_view host, int port) {
  if (host.find(':') != std::string_view::npos)
    return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

struct RoleApp::Impl {
  std::string role;
  Reactor reactor;
  Health health;
  std::vector<std::unique_ptr<http::Server>> servers;

  Impl(std::string r, Reactor::Options o) : role(std::move(r)), reactor(o) {}
};

RoleApp::RoleApp(std::string role, Reactor::Options reactor_options)
    : impl_(std::make_unique<Impl>(std::move(role), reactor_options)) {
  // First line of every role's log, before anything binds, so a startup failure below it is
  // attributable to a version.
  KOORD_LOG_INFO("starting koord {} version {} (git commit {})", impl_->role, versionString(),
                 gitCommit());
  // Once per process (a test may build several apps), for as long as the registry lives.
  static const metrics::ProcessMetrics process_metrics(metrics::Registry::global());
}

RoleApp::~RoleApp() = default;

Reactor& RoleApp::reactor() {
  return impl_->reactor;
}
Health& RoleApp::health() {
  return impl_->health;
}
metrics::Registry& RoleApp::metrics() {
  return metrics::Registry::global();
}

uint16_t RoleApp::serveOps(const std::string& address, OpsEndpoints which, const TlsFiles* tls,
                           const std::function<void(http::Server&)>& extra) {
  http::ServerOptions options;
  options.address = address;
  options.name = impl_->role;
  if (tls != nullptr) {
    options.tls.emplace();
    options.tls->cert_file = tls->cert_file;
    options.tls->key_file = tls->key_file;
    options.tls->cert_pem = tls->cert_pem;
    options.tls->key_pem = tls->key_pem;
  }
  auto server = std::make_unique<http::Server>(impl_->reactor.context(), options);
  http::registerOpsHandlers(*server, impl_->health, metrics(), which);
  if (extra)
    extra(*server);
  try {
    server->start();
  } catch (const std::exception& e) {
    throw ConfigError(fmt::format("cannot serve on {}: {}", address, e.what()));
  }
  uint16_t port = server->port();
  http::Server* raw = server.get();
  impl_->reactor.onShutdown([raw] { raw->stop(); });
  impl_->servers.push_back(std::move(server));
  KOORD_LOG_INFO("{}: serving {} on {} (port {}{})", impl_->role,
                 which == OpsEndpoints::kAll       ? "/healthz, /readyz and /metrics"
                 : which == OpsEndpoints::kMetrics ? "/metrics"
                                                   : "/healthz and /readyz",
                 address, port, tls != nullptr ? ", HTTPS" : "");
  return port;
}

int RoleApp::run() {
  int rc = impl_->reactor.run();
  KOORD_LOG_INFO("koord {} stopped", impl_->role);
  return rc;
}

int RoleApp::runNotImplemented(std::string_view what) {
  std::string reason = fmt::format("koord {}: {} not implemented yet", impl_->role, what);
  impl_->health.setReady(false, reason);
  KOORD_LOG_WARNING("{}; serving health and metrics only, /readyz stays unready", reason);
  return run();
}

}  // namespace koord::app
