#include <catch2/catch.hpp>

#include "koord/core/health.h"
#include "koord/core/metrics.h"
#include "koord/http/client.h"
#include "koord/http/ops_server.h"
#include "koord/http/server.h"
#include "test_util.h"

using namespace koord::http;
using namespace koord::http::testing;

namespace {

Response mustGet(Client& client, std::uint16_t port, std::string_view path) {
  ClientRequest req;
  req.url = url(port, path);
  auto r = client.sendSync(req);
  REQUIRE(r);
  return *r;
}

}  // namespace

TEST_CASE("ops: /healthz, /readyz and /metrics") {
  koord::Health health;
  koord::metrics::Registry registry;
  registry.counter("koord_ops_test_total", "A counter for the ops test.")
      .with(koord::metrics::LabelValues{})
      .inc(3);
  IoThreads loop;
  Server server(loop.io, localOptions("ops-all"));
  registerOpsHandlers(server, health, registry);
  server.start();
  Client client(loop.io, {});

  auto healthz = mustGet(client, server.port(), "/healthz");
  CHECK(healthz.status == 200);
  CHECK(healthz.body == "ok");

  health.setReady(false, "waiting for informers to sync");
  auto not_ready = mustGet(client, server.port(), "/readyz");
  CHECK(not_ready.status == 503);
  CHECK(not_ready.body.find("waiting for informers to sync") != std::string::npos);

  health.setReady(true);
  auto ready = mustGet(client, server.port(), "/readyz");
  CHECK(ready.status == 200);
  CHECK(ready.body == "ok");

  auto metrics = mustGet(client, server.port(), "/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.content_type == kMetricsContentType);
  CHECK(metrics.body.find("koord_ops_test_total 3") != std::string::npos);
}

TEST_CASE("ops: metrics and health can live on separate servers") {
  koord::Health health;
  koord::metrics::Registry registry;
  IoThreads loop;
  Server metrics_server(loop.io, localOptions("ops-metrics"));
  Server probe_server(loop.io, localOptions("ops-probes"));
  registerOpsHandlers(metrics_server, health, registry, OpsEndpoints::kMetrics);
  registerOpsHandlers(probe_server, health, registry, OpsEndpoints::kHealth);
  metrics_server.start();
  probe_server.start();
  Client client(loop.io, {});

  CHECK(mustGet(client, metrics_server.port(), "/metrics").status == 200);
  CHECK(mustGet(client, metrics_server.port(), "/healthz").status == 404);
  CHECK(mustGet(client, probe_server.port(), "/healthz").status == 200);
  CHECK(mustGet(client, probe_server.port(), "/readyz").status == 503);
  CHECK(mustGet(client, probe_server.port(), "/metrics").status == 404);
}
