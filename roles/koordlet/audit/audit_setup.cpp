#include "audit/audit_setup.h"

#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "koord/app/role_app.h"
#include "koord/core/feature_gate.h"
#include "koord/core/flags.h"
#include "koord/core/log.h"
#include "koord/http/server.h"
#include "koordlet_options.h"

namespace koord::roles::koordlet::audit {
namespace {

constexpr std::string_view kAuditFlags[] = {
    "audit-log-dir",           "audit-verbose",
    "audit-max-disk-space-mb", "audit-max-concurrent-readers",
    "audit-max-events-limit",
};

}  // namespace

std::shared_ptr<Auditor> koordletAuditor(const KoordletOptions& o, const FeatureGate& gates,
                                         const FlagSet& flags) {
  if (!gates.enabled("AuditEvents")) {
    for (std::string_view name : kAuditFlags) {
      if (flags.changed(name))
        KOORD_LOG_WARNING("koordlet: -{} has no effect without the AuditEvents feature gate", name);
    }
    return nullptr;
  }
  AuditConfig config;
  config.log_dir = o.audit_log_dir;
  config.verbose = o.audit_verbose;
  config.max_disk_space_mb = o.audit_max_disk_space_mb;
  config.max_concurrent_readers = o.audit_max_concurrent_readers;
  config.max_events_limit = o.audit_max_events_limit;
  std::shared_ptr<Auditor> auditor;
  try {
    auditor = std::make_shared<Auditor>(std::move(config));
  } catch (const std::exception& e) {
    throw app::ConfigError(fmt::format("audit: {}", e.what()));
  }
  KOORD_LOG_INFO("audit: recording events up to V level {} in {} (at most {} MiB)", o.audit_verbose,
                 o.audit_log_dir, o.audit_max_disk_space_mb);
  return auditor;
}

void addAuditHandler(http::Server& server, std::shared_ptr<Auditor> auditor,
                     const FeatureGate& gates) {
  if (!gates.enabled("AuditEventsHTTPHandler"))
    return;
  if (auditor == nullptr) {
    gates.markUnavailable("AuditEventsHTTPHandler", "AuditEvents is off: no events to serve");
    server.handle(std::string(kAuditHttpPath),
                  [](const http::Request&) { return http::text(200, ""); });
    return;
  }
  server.handle(std::string(kAuditHttpPath),
                [auditor = std::move(auditor)](const http::Request& request) {
                  return auditor->handle(request);
                });
}

}  // namespace koord::roles::koordlet::audit
