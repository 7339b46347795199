// kubeconfig and in-cluster config loading, from temporary files.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "koord/kube/kubeconfig.h"

namespace fs = std::filesystem;
using koord::kube::decodeBase64;
using koord::kube::encodeBase64;
using koord::kube::inClusterConfig;
using koord::kube::loadKubeconfig;

namespace {

// A fresh directory removed at scope exit.
struct TempDir {
  TempDir() {
    path = fs::temp_directory_path() /
           ("koord-kubeconfig-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    auto p = path / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path path;
  static inline int counter = 0;
};

// "hello CA" and "cert", base64.
const char* kTwoContexts = R"(apiVersion: v1
kind: Config
current-context: inline
clusters:
- name: inline-cluster
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority-data: aGVsbG8gQ0E=
    tls-server-name: kubernetes.default
- name: file-cluster
  cluster:
    server: 127.0.0.1:8443
    certificate-authority: pki/ca.crt
    insecure-skip-tls-verify: true
users:
- name: inline-user
  user:
    token: abc.def
    client-certificate-data: Y2VydA==
    client-key-data: a2V5
- name: file-user
  user:
    client-certificate: pki/admin.crt
    client-key: /abs/admin.key
    tokenFile: token
contexts:
- name: inline
  context:
    cluster: inline-cluster
    user: inline-user
    namespace: team-a
- name: files
  context:
    cluster: file-cluster
    user: file-user
)";

}  // namespace

TEST_CASE("decodeBase64 is strict standard base64", "[kubeconfig]") {
  CHECK(decodeBase64("aGVsbG8gQ0E=").value() == "hello CA");
  CHECK(decodeBase64("Y2Vy\ndA==").value() == "cert");
  CHECK(decodeBase64("").value() == "");
  CHECK_FALSE(decodeBase64("aGVsbG8gQ0E").has_value());
  CHECK_FALSE(decodeBase64("a*VsbG8gQ0E=").has_value());
  CHECK_FALSE(decodeBase64("Y2=ydA==").has_value());
}

TEST_CASE("encodeBase64 pads and round-trips every length", "[kubeconfig]") {
  CHECK(encodeBase64("") == "");
  CHECK(encodeBase64("c") == "Yw==");
  CHECK(encodeBase64("ce") == "Y2U=");
  CHECK(encodeBase64("cert") == "Y2VydA==");
  CHECK(encodeBase64("hello CA") == "aGVsbG8gQ0E=");
  std::string bytes;
  for (int i = 0; i < 256; ++i)
    bytes += static_cast<char>(i);
  for (std::size_t n = 0; n <= bytes.size(); n += 37)
    CHECK(decodeBase64(encodeBase64(bytes.substr(0, n))).value() == bytes.substr(0, n));
}

TEST_CASE("kubeconfig: the current context with inline data", "[kubeconfig]") {
  TempDir dir;
  auto path = dir.write("kubeconfig", kTwoContexts);
  auto c = loadKubeconfig(path);
  REQUIRE(c.has_value());
  CHECK(c->host == "https://10.0.0.1:6443");
  CHECK(c->ca_pem == "hello CA");
  CHECK(c->ca_file.empty());
  CHECK(c->tls_server_name == "kubernetes.default");
  CHECK_FALSE(c->insecure_skip_verify);
  CHECK(c->bearer_token == "abc.def");
  CHECK(c->client_cert_pem == "cert");
  CHECK(c->client_key_pem == "key");
  CHECK(c->default_namespace == "team-a");
}

TEST_CASE("kubeconfig: file paths resolve against the kubeconfig's directory", "[kubeconfig]") {
  TempDir dir;
  auto path = dir.write("sub/kubeconfig", kTwoContexts);
  dir.write("sub/token", "file-token\n");
  auto c = loadKubeconfig(path, "files");
  REQUIRE(c.has_value());
  CHECK(c->host == "https://127.0.0.1:8443");
  CHECK(c->ca_file == (dir.path / "sub/pki/ca.crt").string());
  CHECK(c->client_cert_file == (dir.path / "sub/pki/admin.crt").string());
  CHECK(c->client_key_file == "/abs/admin.key");
  CHECK(c->insecure_skip_verify);
  CHECK(c->bearer_token_file == (dir.path / "sub/token").string());
  CHECK(c->bearer_token == "file-token");
  CHECK(c->default_namespace.empty());
}

TEST_CASE("kubeconfig: errors name the file and the key", "[kubeconfig]") {
  TempDir dir;
  auto path = dir.write("kubeconfig", kTwoContexts);

  auto missing = loadKubeconfig(path, "nope");
  REQUIRE_FALSE(missing.has_value());
  CHECK_THAT(missing.error().message,
             Catch::Contains(path) && Catch::Contains("contexts") && Catch::Contains("\"nope\""));

  std::string bad = kTwoContexts;
  bad.replace(bad.find("aGVsbG8gQ0E="), 12, "not*base64!!");
  auto b64 = loadKubeconfig(dir.write("bad64", bad));
  REQUIRE_FALSE(b64.has_value());
  CHECK_THAT(b64.error().message,
             Catch::Contains("bad64") &&
                 Catch::Contains("clusters[inline-cluster].cluster.certificate-authority-data"));

  auto no_token_file = loadKubeconfig(path, "files");  // sub/token was not written here
  REQUIRE_FALSE(no_token_file.has_value());
  CHECK_THAT(no_token_file.error().message, Catch::Contains("users[file-user].user.tokenFile"));

  auto absent = loadKubeconfig((dir.path / "absent").string());
  REQUIRE_FALSE(absent.has_value());
  CHECK_THAT(absent.error().message, Catch::Contains("absent"));

  auto not_yaml = loadKubeconfig(dir.write("broken", "clusters: [\n"));
  REQUIRE_FALSE(not_yaml.has_value());
  CHECK_THAT(not_yaml.error().message, Catch::Contains("broken"));

  std::string exec = kTwoContexts;
  exec.replace(exec.find("token: abc.def"), 14, "exec: {command: aws}");
  auto e = loadKubeconfig(dir.write("exec", exec));
  REQUIRE_FALSE(e.has_value());
  CHECK_THAT(e.error().message, Catch::Contains("users[inline-user].user.exec"));

  std::string no_cluster = kTwoContexts;
  no_cluster.replace(no_cluster.find("cluster: inline-cluster"), 23, "cluster: gone");
  auto nc = loadKubeconfig(dir.write("nocluster", no_cluster));
  REQUIRE_FALSE(nc.has_value());
  CHECK_THAT(nc.error().message, Catch::Contains("clusters") && Catch::Contains("\"gone\""));
}

TEST_CASE("in-cluster config from the service account directory", "[kubeconfig]") {
  TempDir dir;
  ::setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);

  auto no_token = inClusterConfig(dir.path.string());
  REQUIRE_FALSE(no_token.has_value());
  CHECK_THAT(no_token.error().message, Catch::Contains("token"));

  dir.write("token", "sa-token\n");
  dir.write("ca.crt", "PEM");
  dir.write("namespace", "koord-system");
  auto c = inClusterConfig(dir.path.string());
  REQUIRE(c.has_value());
  CHECK(c->host == "https://10.96.0.1:443");
  CHECK(c->bearer_token == "sa-token");
  CHECK(c->bearer_token_file == (dir.path / "token").string());
  CHECK(c->ca_file == (dir.path / "ca.crt").string());
  CHECK(c->default_namespace == "koord-system");

  ::setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  CHECK(inClusterConfig(dir.path.string())->host == "https://[fd00::1]:443");

  ::unsetenv("KUBERNETES_SERVICE_HOST");
  auto no_env = inClusterConfig(dir.path.string());
  REQUIRE_FALSE(no_env.has_value());
  CHECK_THAT(no_env.error().message, Catch::Contains("KUBERNETES_SERVICE_HOST"));
  ::unsetenv("KUBERNETES_SERVICE_PORT");
}

TEST_CASE("resolveConfig: the flag, then the first $KUBECONFIG path", "[kubeconfig]") {
  TempDir dir;
  auto path = dir.write("kubeconfig", kTwoContexts);
  CHECK(koord::kube::resolveConfig(path)->host == "https://10.0.0.1:6443");
  ::setenv("KUBECONFIG", (":" + path + ":/nonexistent").c_str(), 1);
  auto c = koord::kube::resolveConfig("");
  ::unsetenv("KUBECONFIG");
  REQUIRE(c.has_value());
  CHECK(c->bearer_token == "abc.def");
}
