// The operational endpoints every role serves: /healthz, /readyz and /metrics. A role may put
// them on separate servers, as Koordinator's --metrics-addr and --health-probe-addr do.
#pragma once

namespace koord {
class Health;
namespace metrics {
class Registry;
}
}  // namespace koord

namespace koord::http {

class Server;

enum class OpsEndpoints {
  kAll,      // /healthz, /readyz and /metrics
  kMetrics,  // /metrics only
  kHealth,   // /healthz and /readyz only
};

inline constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";

/// /healthz answers 200 "ok" while the process serves at all; /readyz answers 200 "ok" when
/// `health` is ready and 503 with its reason otherwise; /metrics renders `registry`. Both
/// references must outlive the server. Call before server.start().
void registerOpsHandlers(Server& server, const Health& health, const metrics::Registry& registry,
                         OpsEndpoints which = OpsEndpoints::kAll);

}  // namespace koord::http
