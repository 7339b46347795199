#include "koord/http/ops_server.h"

#include "koord/core/health.h"
#include "koord/core/metrics.h"
#include "koord/http/server.h"

namespace koord::http {

void registerOpsHandlers(Server& server, const Health& health, const metrics::Registry& registry,
                         OpsEndpoints which) {
  if (which == OpsEndpoints::kAll || which == OpsEndpoints::kHealth) {
    server.handle("/healthz", [](const Request&) { return text(200, "ok"); });
    server.handle("/readyz", [&health](const Request&) {
      if (health.ready())
        return text(200, "ok");
      std::string reason = health.reason();
      return text(503, reason.empty() ? std::string("not ready") : reason);
    });
  }
  if (which == OpsEndpoints::kAll || which == OpsEndpoints::kMetrics) {
    server.handle("/metrics", [&registry](const Request&) {
      Response r = text(200, registry.render());
      r.content_type = kMetricsContentType;
      return r;
    });
  }
}

}  // namespace koord::http
