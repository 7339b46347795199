#include <catch2/catch.hpp>

#include <mutex>

#include "koord/core/log.h"
#include "koord/http/client.h"
#include "koord/http/server.h"
#include "test_util.h"

using namespace koord::http;
using namespace koord::http::testing;
using koord::Errc;
using koord::makeError;

namespace {

struct TlsFixture {
  koord::testing::TempTree dir{"koord-http"};
  Pki pki = sharedPki("koord-test-ca-1");
  std::string cert_file = dir.path("tls.crt").string();
  std::string key_file = dir.path("tls.key").string();
  std::string ca_file = dir.path("ca.crt").string();

  TlsFixture() { install(pki.serving); }

  void install(const KeyPair& pair) {
    writeOrThrow(cert_file, pair.cert_pem);
    writeOrThrow(key_file, pair.key_pem);
  }

  ServerOptions options(std::string name, std::chrono::milliseconds reload_check = 1000ms) {
    ServerOptions o;
    o.address = "127.0.0.1:0";
    o.name = std::move(name);
    o.tls = TlsServerConfig{cert_file, key_file, "", reload_check};
    return o;
  }
};

ClientOptions trusting(const KeyPair& ca) {
  ClientOptions o;
  o.ca_pem = ca.cert_pem;
  return o;
}

koord::Result<Response> fetch(boost::asio::io_context& io, ClientOptions opts, std::uint16_t port,
                              std::string_view host = "127.0.0.1") {
  Client client(io, std::move(opts));
  ClientRequest req;
  req.url = "https://" + std::string(host) + ":" + std::to_string(port) + "/x";
  req.timeout = 5s;
  return client.sendSync(req);
}

// Counts log lines containing `needle` while alive.
class LogCounter {
 public:
  explicit LogCounter(std::string needle) : needle_(std::move(needle)) {
    koord::log::setSink([this](std::string_view line) {
      std::lock_guard lock(mu_);
      if (line.find(needle_) != std::string_view::npos)
        ++count_;
    });
  }
  ~LogCounter() { koord::log::setSink(nullptr); }
  int count() {
    std::lock_guard lock(mu_);
    return count_;
  }

 private:
  std::string needle_;
  std::mutex mu_;
  int count_ = 0;
};

}  // namespace

TEST_CASE("tls: round trip with a generated CA and serving certificate") {
  TlsFixture f;
  IoThreads loop;
  Server server(loop.io, f.options("tls-roundtrip"));
  server.handle("/x", [](const Request& r) { return text(200, "secure " + r.method); });
  server.start();

  Client client(loop.io, trusting(f.pki.ca));
  ClientRequest req;
  req.url = url(server.port(), "/x", /*tls=*/true);
  auto first = client.sendSync(req);
  REQUIRE(first);
  CHECK(first->status == 200);
  CHECK(first->body == "secure GET");
  auto second = client.sendSync(req);
  REQUIRE(second);
  CHECK(client.connectionsOpened() == 1);  // keep-alive works over TLS too

  auto by_name = fetch(loop.io, trusting(f.pki.ca), server.port(), "localhost");
  REQUIRE(by_name);
  CHECK(by_name->status == 200);

  SECTION("the CA can come from a file") {
    writeOrThrow(f.ca_file, f.pki.ca.cert_pem);
    ClientOptions opts;
    opts.ca_file = f.ca_file;
    auto r = fetch(loop.io, opts, server.port());
    REQUIRE(r);
    CHECK(r->status == 200);
  }
}

TEST_CASE("tls: the client rejects a server certificate from another CA") {
  TlsFixture f;
  IoThreads loop;
  Server server(loop.io, f.options("tls-wrongca"));
  server.handle("/x", [](const Request&) { return text(200, "x"); });
  server.start();
  const auto& other = sharedPki("some-other-ca").ca;
  auto r = fetch(loop.io, trusting(other), server.port());
  REQUIRE_FALSE(r);
  CHECK(r.error() == makeError(Errc::kTlsVerifyFailed));

  SECTION("unless verification is off") {
    ClientOptions insecure;
    insecure.insecure_skip_verify = true;
    auto ok = fetch(loop.io, insecure, server.port());
    REQUIRE(ok);
    CHECK(ok->status == 200);
  }
}

TEST_CASE("tls: the certificate must name the host; server_name overrides the name") {
  TlsFixture f;
  auto named =
      generateServingCert(f.pki.ca, "svc", {"svc.koord.internal"}, {}, std::chrono::hours(1));
  f.install(named);
  IoThreads loop;
  Server server(loop.io, f.options("tls-hostname"));
  server.handle("/x", [](const Request&) { return text(200, "x"); });
  server.start();

  auto mismatch = fetch(loop.io, trusting(f.pki.ca), server.port());
  REQUIRE_FALSE(mismatch);
  CHECK(mismatch.error() == makeError(Errc::kTlsVerifyFailed));

  auto opts = trusting(f.pki.ca);
  opts.server_name = "svc.koord.internal";
  auto ok = fetch(loop.io, opts, server.port());
  REQUIRE(ok);
  CHECK(ok->status == 200);
}

TEST_CASE("tls: a rotated certificate is picked up by new connections") {
  TlsFixture f;
  const Pki& second = sharedPki("koord-test-ca-2");
  IoThreads loop;
  Server server(loop.io, f.options("tls-reload", 100ms));
  server.handle("/x", [](const Request&) { return text(200, "x"); });
  server.start();

  Client pooled(loop.io, trusting(f.pki.ca));
  ClientRequest req;
  req.url = url(server.port(), "/x", true);
  REQUIRE(pooled.sendSync(req));
  REQUIRE_FALSE(fetch(loop.io, trusting(second.ca), server.port()));

  f.install(second.serving);
  std::this_thread::sleep_for(200ms);

  auto with_new_ca = fetch(loop.io, trusting(second.ca), server.port());
  REQUIRE(with_new_ca);
  CHECK(with_new_ca->status == 200);
  auto with_old_ca = fetch(loop.io, trusting(f.pki.ca), server.port());
  REQUIRE_FALSE(with_old_ca);
  CHECK(with_old_ca.error() == makeError(Errc::kTlsVerifyFailed));

  // A connection made before the rotation keeps the context it was handshaken with.
  auto old_conn = pooled.sendSync(req);
  REQUIRE(old_conn);
  CHECK(old_conn->status == 200);
  CHECK(pooled.connectionsOpened() == 1);
}

TEST_CASE("tls: a broken certificate update keeps the previous one and is logged once") {
  TlsFixture f;
  const Pki& second = sharedPki("koord-test-ca-2");
  IoThreads loop;
  Server server(loop.io, f.options("tls-badreload", 50ms));
  server.handle("/x", [](const Request&) { return text(200, "x"); });
  server.start();
  LogCounter errors("reloading TLS certificate failed");

  writeOrThrow(f.cert_file, "-----BEGIN CERTIFICATE-----\nhalf-writ");
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(80ms);
    auto r = fetch(loop.io, trusting(f.pki.ca), server.port());
    REQUIRE(r);
    CHECK(r->status == 200);
  }
  CHECK(errors.count() == 1);

  // A certificate whose key is still the old one: mismatched, also rejected.
  writeOrThrow(f.cert_file, second.serving.cert_pem);
  std::this_thread::sleep_for(80ms);
  auto still_old = fetch(loop.io, trusting(f.pki.ca), server.port());
  REQUIRE(still_old);
  CHECK(errors.count() == 2);

  writeOrThrow(f.key_file, second.serving.key_pem);
  std::this_thread::sleep_for(80ms);
  auto rotated = fetch(loop.io, trusting(second.ca), server.port());
  REQUIRE(rotated);
  CHECK(rotated->status == 200);
}

TEST_CASE("tls: start() fails when the certificate cannot be loaded") {
  TlsFixture f;
  IoThreads loop;
  SECTION("missing file") {
    auto opts = f.options("tls-missing");
    opts.tls->cert_file = f.dir.path("nope.crt").string();
    Server server(loop.io, opts);
    CHECK_THROWS_WITH(server.start(), Catch::Contains("nope.crt"));
  }
  SECTION("garbage") {
    writeOrThrow(f.cert_file, "not a certificate");
    Server server(loop.io, f.options("tls-garbage"));
    CHECK_THROWS_AS(server.start(), std::runtime_error);
  }
  SECTION("key of another certificate") {
    f.install({f.pki.serving.cert_pem, f.pki.ca.key_pem});
    Server server(loop.io, f.options("tls-mismatch"));
    CHECK_THROWS_WITH(server.start(), Catch::Contains("tls.key") && Catch::Contains("mismatch"));
  }
}

TEST_CASE("tls: mTLS requires a client certificate from the client CA") {
  TlsFixture f;
  writeOrThrow(f.ca_file, f.pki.ca.cert_pem);
  IoThreads loop;
  auto opts = f.options("tls-mtls");
  opts.tls->client_ca_file = f.ca_file;
  Server server(loop.io, opts);
  server.handle("/x", [](const Request&) { return text(200, "hello client"); });
  server.start();

  auto without = fetch(loop.io, trusting(f.pki.ca), server.port());
  CHECK_FALSE(without);

  auto client_cert =
      generateClientCert(f.pki.ca, "koordlet", {"system:nodes"}, std::chrono::hours(1));
  auto with = trusting(f.pki.ca);
  with.client_cert_pem = client_cert.cert_pem;
  with.client_key_pem = client_cert.key_pem;
  auto ok = fetch(loop.io, with, server.port());
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(ok->body == "hello client");

  SECTION("from files") {
    writeOrThrow(f.dir.path("client.crt").string(), client_cert.cert_pem);
    writeOrThrow(f.dir.path("client.key").string(), client_cert.key_pem);
    auto files = trusting(f.pki.ca);
    files.client_cert_file = f.dir.path("client.crt").string();
    files.client_key_file = f.dir.path("client.key").string();
    auto r = fetch(loop.io, files, server.port());
    REQUIRE(r);
    CHECK(r->status == 200);
  }
  SECTION("a client certificate from another CA is refused") {
    const auto& other_ca = sharedPki("some-other-ca").ca;
    auto stranger = generateClientCert(other_ca, "stranger", {}, std::chrono::hours(1));
    auto opts2 = trusting(f.pki.ca);
    opts2.client_cert_pem = stranger.cert_pem;
    opts2.client_key_pem = stranger.key_pem;
    CHECK_FALSE(fetch(loop.io, opts2, server.port()));
  }
}

TEST_CASE("tls: client construction fails on unusable TLS material") {
  IoThreads loop;
  ClientOptions bad_ca;
  bad_ca.ca_pem = "garbage";
  CHECK_THROWS_AS(Client(loop.io, bad_ca), std::runtime_error);
  ClientOptions half;
  half.client_cert_pem = sharedPki("koord-test-ca-1").serving.cert_pem;
  CHECK_THROWS_AS(Client(loop.io, half), std::runtime_error);
}

TEST_CASE("tls: client_common_names admits only certificates with those names") {
  TlsFixture f;
  writeOrThrow(f.ca_file, f.pki.ca.cert_pem);
  IoThreads loop;
  auto opts = f.options("tls-client-cn");
  opts.tls->client_ca_file = f.ca_file;
  opts.tls->client_common_names = {"kube-apiserver-webhook-client"};
  Server server(loop.io, opts);
  server.handle("/x", [](const Request&) { return text(200, "hello apiserver"); });
  server.start();
  auto presenting = [&](const KeyPair& cert) {
    auto o = trusting(f.pki.ca);
    o.client_cert_pem = cert.cert_pem;
    o.client_key_pem = cert.key_pem;
    return fetch(loop.io, o, server.port());
  };

  auto apiserver =
      generateClientCert(f.pki.ca, "kube-apiserver-webhook-client", {}, std::chrono::hours(1));
  auto ok = presenting(apiserver);
  REQUIRE(ok);
  CHECK(ok->status == 200);
  // Signed by the same CA, so only the name tells it apart.
  LogCounter refusals("refusing client certificate with CN \"koordlet\"");
  auto other = generateClientCert(f.pki.ca, "koordlet", {"system:nodes"}, std::chrono::hours(1));
  CHECK_FALSE(presenting(other));
  CHECK(refusals.count() == 1);
  CHECK_FALSE(fetch(loop.io, trusting(f.pki.ca), server.port()));
}

TEST_CASE("tls: client_common_names without client_ca_file fails start()") {
  TlsFixture f;
  IoThreads loop;
  auto opts = f.options("tls-client-cn-no-ca");
  opts.tls->client_common_names = {"kube-apiserver"};
  Server server(loop.io, opts);
  CHECK_THROWS_WITH(server.start(), Catch::Contains("client_ca_file"));
}
