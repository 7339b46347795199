// The koordlet's way to the kubelet's secure port: which CA it trusts for the kubelet's serving
// certificate, which name that certificate must carry, and a wrong CA refused. koord's own TLS
// server stands in for the kubelet only for the certificate check; the real kubelet answers in
// cluster/koordlet.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <thread>

#include "koord/core/result.h"
#include "koord/http/cert.h"
#include "koord/http/client.h"
#include "koord/http/server.h"
#include "koord/kube/kubeconfig.h"
#include "statesinformer/kubelet_stub.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using namespace std::chrono_literals;
using koord::testing::TempTree;

TEST_CASE("kubelet CA: -kubelet-ca-file wins over the kubelet config", "[kubelet]") {
  TempTree t("koord-kubelet-tls");
  t.write("config.yaml", "tlsCertFile: /elsewhere.crt\n");
  auto tls = resolveKubeletTls("/ca.pem", t.path("config.yaml").string(), "/var/lib/kubelet/", {});
  REQUIRE(tls.has_value());
  CHECK(tls->ca_file == "/ca.pem");
  CHECK_FALSE(tls->expect_hostname);
}

TEST_CASE("kubelet CA: no kubelet config, the self-signed kubelet.crt for the hostname",
          "[kubelet]") {
  TempTree t("koord-kubelet-tls");
  auto tls = resolveKubeletTls("", t.path("absent.yaml").string(), t.root().string(), {});
  REQUIRE(tls.has_value());
  CHECK(tls->ca_file == t.path("pki/kubelet.crt").string());
  CHECK(tls->expect_hostname);
  t.write("config.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nport: 10250\n");
  tls = resolveKubeletTls("", t.path("config.yaml").string(), t.root().string(), {});
  REQUIRE(tls.has_value());
  CHECK(tls->ca_file == t.path("pki/kubelet.crt").string());
  CHECK(tls->expect_hostname);
}

TEST_CASE("kubelet CA: tlsCertFile, relative to the config's directory", "[kubelet]") {
  TempTree t("koord-kubelet-tls");
  t.write("kubelet/config.yaml", "tlsCertFile: certs/serving.crt\n");
  auto tls = resolveKubeletTls("", t.path("kubelet/config.yaml").string(), "/var/lib/kubelet/", {});
  REQUIRE(tls.has_value());
  CHECK(tls->ca_file == t.path("kubelet/certs/serving.crt").string());
  CHECK_FALSE(tls->expect_hostname);
}

TEST_CASE("kubelet CA: serverTLSBootstrap takes the cluster CA", "[kubelet]") {
  TempTree t("koord-kubelet-tls");
  t.write("config.yaml", "serverTLSBootstrap: true\ntlsCertFile: /ignored.crt\n");
  koord::kube::RestConfig rest;
  rest.ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  auto tls = resolveKubeletTls("", t.path("config.yaml").string(), "/var/lib/kubelet/", rest);
  REQUIRE(tls.has_value());
  CHECK(tls->ca_file == rest.ca_file);
  CHECK_FALSE(tls->expect_hostname);
  // Without a cluster CA there is nothing to check the bootstrapped certificate with.
  auto none = resolveKubeletTls("", t.path("config.yaml").string(), "/var/lib/kubelet/", {});
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().message.find("-kubelet-ca-file") != std::string::npos);
}

TEST_CASE("kubelet CA: a config that does not parse is an error naming the file", "[kubelet]") {
  TempTree t("koord-kubelet-tls");
  t.write("config.yaml", "tlsCertFile: [unclosed\n");
  auto tls = resolveKubeletTls("", t.path("config.yaml").string(), "/var/lib/kubelet/", {});
  REQUIRE_FALSE(tls.has_value());
  CHECK(tls.error().message.find("config.yaml") != std::string::npos);
  t.write("config.yaml", "serverTLSBootstrap: maybe\n");
  CHECK_FALSE(
      resolveKubeletTls("", t.path("config.yaml").string(), "/var/lib/kubelet/", {}).has_value());
}

TEST_CASE("kubelet server name: the Hostname address for the self-signed certificate",
          "[kubelet]") {
  NodeInfo node;
  node.addresses = {{"InternalIP", "10.0.0.5"}, {"Hostname", "node-a"}};
  KubeletTls self_signed;
  self_signed.expect_hostname = true;
  CHECK(kubeletServerName(self_signed, node) == "node-a");
  CHECK(kubeletServerName(KubeletTls{}, node).empty());
}

namespace {

struct IoThread {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{
      boost::asio::make_work_guard(io)};
  std::thread thread{[this] { io.run(); }};
  ~IoThread() {
    work.reset();
    io.stop();
    thread.join();
  }
};

}  // namespace

TEST_CASE("kubelet TLS: verified against the kubelet's CA, a wrong CA refused", "[kubelet]") {
  TempTree t("koord-kubelet-tls");
  // As the kubelet makes it: a CA of its own and a leaf naming only the hostname.
  auto ca = koord::http::generateCA("node-a-ca@1", 24h);
  auto leaf = koord::http::generateServingCert(ca, "node-a@1", {"node-a"}, {}, 24h);
  t.write("pki/kubelet.crt", leaf.cert_pem + ca.cert_pem);
  t.write("pki/kubelet.key", leaf.key_pem);
  auto other = koord::http::generateCA("someone-else", 24h);
  t.write("other-ca.crt", other.cert_pem);

  IoThread io;
  koord::http::ServerOptions so;
  so.address = "127.0.0.1:0";
  koord::http::TlsServerConfig server_tls;
  server_tls.cert_file = t.path("pki/kubelet.crt").string();
  server_tls.key_file = t.path("pki/kubelet.key").string();
  so.tls = server_tls;
  koord::http::Server kubelet(io.io, so);
  std::string authorization;
  kubelet.handle("/pods/", [&](const koord::http::Request& r) {
    authorization = std::string(r.header("Authorization"));
    return koord::http::json(200, R"({"kind":"PodList","items":[]})");
  });
  kubelet.start();
  const std::string url = "https://127.0.0.1:" + std::to_string(kubelet.port()) + "/pods/";

  auto tls = resolveKubeletTls("", t.path("absent.yaml").string(), t.root().string(), {});
  REQUIRE(tls.has_value());
  NodeInfo node;
  node.addresses = {{"InternalIP", "127.0.0.1"}, {"Hostname", "node-a"}};

  auto get = [&](const KubeletTls& trust, const std::string& name) {
    koord::http::Client client(io.io, kubeletClientOptions(trust, {}, name, 3000ms));
    koord::http::ClientRequest req;
    req.url = url;
    req.headers.emplace_back("Authorization", "Bearer koordlet-token");
    return client.sendSync(req);
  };

  SECTION("the kubelet's own CA and the Hostname address: pods, with the token") {
    auto r = get(*tls, kubeletServerName(*tls, node));
    REQUIRE(r.has_value());
    CHECK(r->status == 200);
    CHECK(authorization == "Bearer koordlet-token");
  }
  SECTION("a CA that did not sign the kubelet's certificate is refused") {
    KubeletTls wrong = *tls;
    wrong.ca_file = t.path("other-ca.crt").string();
    auto r = get(wrong, kubeletServerName(wrong, node));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == koord::makeError(koord::Errc::kTlsVerifyFailed));
    CHECK(authorization.empty());
  }
  SECTION("the right CA but the address dialled, which the certificate does not name") {
    auto r = get(*tls, "");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == koord::makeError(koord::Errc::kTlsVerifyFailed));
  }
  kubelet.stop();
}
