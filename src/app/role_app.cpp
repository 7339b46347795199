#include "koord/app/role_app.h"

#include <fmt/format.h>

#include <cstdio>
#include <vector>

#include "koord/core/log.h"
#include "koord/core/version.h"
#include "koord/http/ops_server.h"
#include "koord/http/server.h"

namespace koord::app {

void addLoggingFlags(FlagSet& flags, CommonOptions& options, int default_verbosity) {
  flags.addInt("v", &options.verbosity, default_verbosity, "Number for the log level verbosity.");
  flags.addBool("logtostderr", &options.logtostderr, true,
                "Log to standard error (koord always does; false is refused).");
  flags.addBool("alsologtostderr", &options.alsologtostderr, false,
                "Accepted for klog compatibility; logs already go to standard error.");
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
  if (!options.logtostderr) {
    throw FlagError("--logtostderr=false is not supported: koord logs to standard error only");
  }
  if (gates == nullptr && !options.feature_gates.empty()) {
    throw FlagError("--feature-gates: this role has no feature gates");
  }
  log::setVerbosity(options.verbosity);
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

bool parseOrHelp(FlagSet& flags, int argc, char** argv) {
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
