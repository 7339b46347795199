// The admission server as the apiserver meets it: TLS, POST only, bounded bodies, and a server
// that keeps answering after every kind of bad request.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>

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
  koord::testing::TempTree dir{"koord-webhook"};
  const auto& pki = sharedPki("webhook-server-test");
  writeOrThrow(dir.path("cert.pem").string(), pki.serving.cert_pem);
  writeOrThrow(dir.path("key.pem").string(), pki.serving.key_pem);
  koord::metrics::Registry registry;
  WebhookServerOptions options;
  options.address = "127.0.0.1:0";
  options.cert_file = dir.path("cert.pem").string();
  options.key_file = dir.path("key.pem").string();
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

namespace {

// A WebhookServer on loopback with the shared test PKI's serving certificate.
struct WebhookFixture {
  koord::testing::TempTree dir{"koord-webhook"};
  const Pki& pki = sharedPki("webhook-server-test");
  koord::metrics::Registry registry;
  WebhookServerOptions options;

  WebhookFixture() {
    writeOrThrow(dir.path("cert.pem").string(), pki.serving.cert_pem);
    writeOrThrow(dir.path("key.pem").string(), pki.serving.key_pem);
    writeOrThrow(dir.path("ca.pem").string(), pki.ca.cert_pem);
    options.address = "127.0.0.1:0";
    options.cert_file = dir.path("cert.pem").string();
    options.key_file = dir.path("key.pem").string();
  }

  ClientOptions client(const KeyPair* cert = nullptr) const {
    ClientOptions co;
    co.ca_pem = pki.ca.cert_pem;
    if (cert != nullptr) {
      co.client_cert_pem = cert->cert_pem;
      co.client_key_pem = cert->key_pem;
    }
    return co;
  }
};

koord::Result<Response> review(Client& client, std::uint16_t port, std::string path) {
  ClientRequest req;
  req.method = "POST";
  req.url = "https://127.0.0.1:" + std::to_string(port) + path;
  req.headers = {{"Content-Type", "application/json"}};
  req.body = "{}";
  req.timeout = std::chrono::seconds(20);
  return client.sendSync(std::move(req));
}

}  // namespace

// Reliability check 13: a handler that sleeps 15 s. The webhooks' timeoutSeconds is 10, so the
// server must answer at its own, shorter deadline, and keep serving while the handler sleeps.
TEST_CASE("webhook server: a review that overruns request_deadline is answered 503 in time",
          "[webhookserver]") {
  IoThreads loop;
  WebhookFixture f;
  f.options.request_deadline = std::chrono::milliseconds(400);
  // Before the server: its workers may still be returning from the handler when the test ends.
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  WebhookServer server(loop.io, f.options, f.registry);
  server.handle("/slow", [&](std::string_view) {
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::seconds(15), [&] { return release; });
    return AdmissionAnswer{200, R"({"response":{"allowed":true}})", "allowed"};
  });
  server.handle("/fast", [](std::string_view) {
    return AdmissionAnswer{200, R"({"response":{"allowed":true}})", "allowed"};
  });
  server.start();
  Client client(loop.io, f.client());

  auto start = std::chrono::steady_clock::now();
  auto slow = review(client, server.port(), "/slow");
  auto elapsed = std::chrono::steady_clock::now() - start;
  REQUIRE(slow);
  CHECK(slow->status == 503);
  CHECK(elapsed >= std::chrono::milliseconds(300));
  CHECK(elapsed < std::chrono::seconds(3));
  // The sleeping handler holds one worker, not the server.
  auto fast = review(client, server.port(), "/fast");
  REQUIRE(fast);
  CHECK(fast->status == 200);
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  server.stop();
}

TEST_CASE("webhook server: reviews beyond the workers and their queue get 503 at once",
          "[webhookserver]") {
  IoThreads loop;
  WebhookFixture f;
  f.options.workers = 1;
  f.options.queue_limit = 1;
  f.options.request_deadline = std::chrono::seconds(5);
  // Before the server: its workers may still be returning from the handler when the test ends.
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  int entered = 0;
  WebhookServer server(loop.io, f.options, f.registry);
  server.handle("/mutate-pod", [&](std::string_view) {
    std::unique_lock lock(mu);
    ++entered;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return release; });
    return AdmissionAnswer{200, R"({"response":{"allowed":true}})", "allowed"};
  });
  server.start();
  Client client(loop.io, f.client());
  std::promise<koord::Result<Response>> running, queued;
  ClientRequest req;
  req.method = "POST";
  req.url = "https://127.0.0.1:" + std::to_string(server.port()) + "/mutate-pod";
  req.body = "{}";
  client.send(req, [&](koord::Result<Response> r) { running.set_value(r); });
  {
    std::unique_lock lock(mu);
    REQUIRE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return entered == 1; }));
  }
  client.send(req, [&](koord::Result<Response> r) { queued.set_value(r); });
  // The queued one cannot be told apart from the client side; give it time to be queued.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto refused = review(client, server.port(), "/mutate-pod");
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK(refused->header("Retry-After") == "1");
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  auto first = running.get_future().get();
  auto second = queued.get_future().get();
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->status == 200);
  CHECK(second->status == 200);
  server.stop();
}

TEST_CASE("webhook server: with client_ca_file only the named client certificate is served",
          "[webhookserver]") {
  IoThreads loop;
  WebhookFixture f;
  f.options.client_ca_file = f.dir.path("ca.pem").string();
  f.options.client_common_names = {"kube-apiserver-webhook"};
  WebhookServer server(loop.io, f.options, f.registry);
  server.handle("/validate-pod", [](std::string_view) {
    return AdmissionAnswer{200, R"({"response":{"allowed":true}})", "allowed"};
  });
  server.start();

  auto apiserver =
      generateClientCert(f.pki.ca, "kube-apiserver-webhook", {}, std::chrono::hours(1));
  Client trusted(loop.io, f.client(&apiserver));
  auto ok = review(trusted, server.port(), "/validate-pod");
  REQUIRE(ok);
  CHECK(ok->status == 200);

  Client anonymous(loop.io, f.client());
  CHECK_FALSE(review(anonymous, server.port(), "/validate-pod"));
  auto pod = generateClientCert(f.pki.ca, "some-pod", {}, std::chrono::hours(1));
  Client impostor(loop.io, f.client(&pod));
  CHECK_FALSE(review(impostor, server.port(), "/validate-pod"));
  server.stop();
}

namespace {

// A TCP connection to the loopback port, for what the HTTP client will not send.
int connectLoopback(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// Whether a TLS handshake with at most `max_version` succeeds. The security level is lowered so
// that it is the server, not this client's own policy, that refuses an old version.
bool handshakeWith(std::uint16_t port, int max_version) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  REQUIRE(ctx != nullptr);
  SSL_CTX_set_security_level(ctx, 0);
  SSL_CTX_set_min_proto_version(ctx, TLS1_VERSION);
  SSL_CTX_set_max_proto_version(ctx, max_version);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  SSL* ssl = SSL_new(ctx);
  const int fd = connectLoopback(port);
  SSL_set_fd(ssl, fd);
  const bool ok = SSL_connect(ssl) == 1;
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  ::close(fd);
  return ok;
}

}  // namespace

// Reliability check 15: a body far past the limit, plain HTTP on the TLS port and TLS older than
// 1.2 are all refused, and the server answers the next review.
TEST_CASE("webhook server: a 10 MB body, plain HTTP and TLS below 1.2 are refused; it serves on",
          "[webhookserver]") {
  IoThreads loop;
  WebhookFixture f;  // the default body limit and in-flight budget, as the manager runs
  WebhookServer server(loop.io, f.options, f.registry);
  std::atomic<int> handled{0};
  server.handle("/mutate-pod", [&](std::string_view) {
    ++handled;
    return AdmissionAnswer{200, R"({"response":{"allowed":true}})", "allowed"};
  });
  server.start();
  Client client(loop.io, f.client());

  ClientRequest big;
  big.method = "POST";
  big.url = "https://127.0.0.1:" + std::to_string(server.port()) + "/mutate-pod";
  big.headers = {{"Content-Type", "application/json"}};
  big.body = std::string(10u << 20, ' ');
  auto oversized = client.sendSync(std::move(big));
  // 413, or the close that follows it seen first by a client still writing (see above).
  CHECK((!oversized || oversized->status == 413));
  CHECK(handled == 0);

  // Plain HTTP: the bytes are not a TLS ClientHello, so no HTTP answer comes back.
  {
    const int fd = connectLoopback(server.port());
    const std::string plain =
        "POST /mutate-pod HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 2\r\n\r\n{}";
    REQUIRE(::write(fd, plain.data(), plain.size()) == static_cast<ssize_t>(plain.size()));
    std::string got;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0)
      got.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    CHECK(got.find("HTTP/1.1 200") == std::string::npos);
    CHECK(handled == 0);
  }

  CHECK_FALSE(handshakeWith(server.port(), TLS1_VERSION));
  CHECK_FALSE(handshakeWith(server.port(), TLS1_1_VERSION));
  CHECK(handshakeWith(server.port(), TLS1_2_VERSION));

  auto good = review(client, server.port(), "/mutate-pod");
  REQUIRE(good);
  CHECK(good->status == 200);
  CHECK(handled == 1);
  server.stop();
}
