// The admission server as the apiserver meets it: TLS, POST only, bounded bodies, and a server
// that keeps answering after every kind of bad request.
#include <catch2/catch.hpp>

#include <string>

#include "koord/core/metrics.h"
#include "koord/http/client.h"
#include "test_util.h"
#include "webhookserver/webhook_server.h"

using koord::roles::manager::AdmissionAnswer;
using koord::roles::manager::WebhookServer;
using koord::roles::manager::WebhookServerOptions;
using namespace koord::http;
using namespace koord::http::testing;

TEST_CASE("webhook server: bad requests get 4xx and the server keeps serving", "[webhookserver]") {
  IoThreads loop;
  TempDir dir;
  const auto& pki = sharedPki("webhook-server-test");
  writeOrThrow(dir.file("cert.pem"), pki.serving.cert_pem);
  writeOrThrow(dir.file("key.pem"), pki.serving.key_pem);
  koord::metrics::Registry registry;
  WebhookServerOptions options;
  options.address = "127.0.0.1:0";
  options.cert_file = dir.file("cert.pem");
  options.key_file = dir.file("key.pem");
  options.body_limit = 64 * 1024;
  WebhookServer server(loop.io, options, registry);
  server.handle("/mutate-pod", [](std::string_view body) {
    if (body != "{}")
      return AdmissionAnswer{400, "not a review", "bad_request"};
    return AdmissionAnswer{200, R"({"response":{"allowed":true}})", "allowed"};
  });
  server.start();

  ClientOptions co;
  co.ca_pem = pki.ca.cert_pem;
  Client client(loop.io, co);
  auto post = [&](std::string body, std::string content_type = "application/json",
                  std::string method = "POST") {
    ClientRequest req;
    req.method = std::move(method);
    req.url = "https://127.0.0.1:" + std::to_string(server.port()) + "/mutate-pod";
    req.headers = {{"Content-Type", std::move(content_type)}};
    req.body = std::move(body);
    return client.sendSync(std::move(req));
  };

  auto garbage = post("garbage");
  REQUIRE(garbage);
  CHECK(garbage->status == 400);
  auto oversized = post(std::string(128 * 1024, 'x'));
  // Refused before the handler sees it: the server answers 413 and closes, so a client still
  // writing the body may see the close (EPIPE) before it reads the 413. Either way it is not
  // handled, and the requests below show the server still serves.
  CHECK((!oversized || oversized->status == 413));
  auto get = post("", "application/json", "GET");
  REQUIRE(get);
  CHECK(get->status == 405);
  auto yaml = post("{}", "application/yaml");
  REQUIRE(yaml);
  CHECK(yaml->status == 415);
  auto good = post("{}", "application/json; charset=utf-8");
  REQUIRE(good);
  CHECK(good->status == 200);
  CHECK(good->content_type.find("application/json") != std::string::npos);

  auto text = registry.render();
  CHECK(text.find(
            R"(controller_runtime_webhook_requests_total{webhook="/mutate-pod",code="400"} 1)") !=
        std::string::npos);
  CHECK(
      text.find(
          R"(koord_manager_webhook_duration_seconds_count{path="/mutate-pod",result="allowed"} 1)") !=
      std::string::npos);
  server.stop();
}
