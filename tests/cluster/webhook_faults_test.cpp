// Faults around koord-manager's admission webhooks, seen from the real apiserver: the webhook
// down (Fail refuses pods in time, control-plane namespaces and Ignore admit them), a review that
// overruns (koord's own deadline answers before the apiserver's timeout), and a serving
// certificate lost or near expiry (reissued, both caBundles follow, served without a restart).
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <csignal>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/core/metrics.h"
#include "koord/http/cert.h"
#include "koord/http/file_util.h"
#include "koord/kube/kubeconfig.h"
#include "manifests.h"
#include "subprocess.h"
#include "webhookserver/cert_provisioner.h"
#include "webhookserver/webhook_configuration.h"
#include "webhookserver/webhook_server.h"
#include "yaml_json.h"

using namespace std::chrono_literals;
namespace json = boost::json;
namespace manager = koord::roles::manager;
using koord::kube::ResourceRef;
using koord::testing::eventually;
using koord::testing::KubeApi;
using koord::testing::named;
using koord::testing::ok;
using koord::testing::str;
using koord::testing::TestNamespace;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;

namespace {

using Clock = std::chrono::steady_clock;
using namespace koord::testing::resources;

// Only namespaces with this label (and the test's value) reach the test's webhooks: a Fail
// webhook that reached every namespace would refuse the other cluster tests' pods while the
// manager is down.
constexpr const char* kScope = "koord-webhook-faults";

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// base64 as Secrets and caBundles hold it; "" when it does not decode.
std::string decoded(const std::string& b64) {
  auto r = koord::kube::decodeBase64(b64);
  return r ? std::move(*r) : std::string();
}

bool contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

void labelNamespace(koord::kube::RestClient& api, const std::string& ns, json::object labels) {
  ok(api.patchSync(named(kNamespaces, ns), koord::kube::PatchType::kMergePatch,
                   json::object{{"metadata", {{"labels", std::move(labels)}}}}),
     "label namespace");
}

json::object plainPod(const std::string& name, const std::string& ns, json::object labels = {},
                      json::object resources = {}) {
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", std::move(labels)}}},
      {"spec",
       {{"containers",
         json::array{json::object{
             {"name", "main"}, {"image", "busybox"}, {"resources", std::move(resources)}}}}}}};
}

// A pod koord's /validate-pod refuses ("must be integer"): seeing it refused shows the
// apiserver calls the webhook server.
json::object refusedPod(const std::string& ns) {
  json::object r{{"cpu", "500m"}, {"memory", "64Mi"}};
  return plainPod("lsr", ns, {{"koordinator.sh/qosClass", "LSR"}},
                  {{"requests", r}, {"limits", r}});
}

struct Timed {
  koord::kube::ApiResult<json::value> result;
  double seconds = 0;
  bool admitted() const { return result.has_value(); }
  std::string why() const { return result ? std::string("admitted") : result.error().message; }
};

// Admission runs for dry runs too (the webhooks declare sideEffects None), and nothing is left
// behind.
Timed dryRunCreate(koord::kube::RestClient& api, const std::string& ns, const json::object& pod) {
  koord::kube::WriteOptions dry;
  dry.dry_run = true;
  auto start = Clock::now();
  auto r = api.createSync(named(kPods, "", ns), pod, dry);
  return {std::move(r), secondsSince(start)};
}

bool coversPods(const json::value& webhook) {
  for (const auto& rule : webhook.at("rules").as_array()) {
    for (const auto& r : rule.at("resources").as_array()) {
      if (r == "pods")
        return true;
    }
  }
  return false;
}

// koord's default webhooks, each narrowed to the test's namespaces (added to what its
// namespaceSelector already says). vnode-writes goes: it covers Nodes, which have no namespace.
json::array scopedDefaultWebhooks(bool mutating, const std::string& scope) {
  json::array out;
  for (auto wh : manager::defaultWebhooks(mutating)) {
    auto& o = wh.as_object();
    if (o.at("name") == "vnode-writes.koordinator.sh")
      continue;
    if (!o.contains("namespaceSelector"))
      o["namespaceSelector"] = json::object{{"matchExpressions", json::array{}}};
    o["namespaceSelector"].as_object()["matchExpressions"].as_array().push_back(json::object{
        {"key", kScope}, {"operator", "In"}, {"values", json::array{json::value(scope)}}});
    out.push_back(std::move(wh));
  }
  return out;
}

// The manager's two configurations, created as an operator's would be (empty, with koord's
// webhooks in the template annotation) for the manager to fill in, and removed at the end.
struct Configurations {
  koord::kube::RestClient& api;
  std::string id;
  Configurations(koord::kube::RestClient& client, std::string name, const std::string& scope)
      : api(client), id(std::move(name)) {
    for (bool mutating : {true, false}) {
      ok(api.createSync(
             mutating ? kMutatingWebhooks : kValidatingWebhooks,
             json::object{
                 {"apiVersion", "admissionregistration.k8s.io/v1"},
                 {"kind",
                  mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration"},
                 {"metadata",
                  {{"name", this->name(mutating)},
                   {"annotations",
                    {{"template", json::serialize(scopedDefaultWebhooks(mutating, scope))}}}}},
                 {"webhooks", json::array{}}}),
         "create webhook configuration");
    }
  }
  ~Configurations() {
    (void)api.removeSync(named(kMutatingWebhooks, name(true)));
    (void)api.removeSync(named(kValidatingWebhooks, name(false)));
  }
  Configurations(const Configurations&) = delete;
  Configurations& operator=(const Configurations&) = delete;

  std::string name(bool mutating) const { return id + (mutating ? "-mutating" : "-validating"); }
  ResourceRef ref(bool mutating) const {
    return named(mutating ? kMutatingWebhooks : kValidatingWebhooks, name(mutating));
  }

  // Both hold webhooks pointing at `port`, all with one caBundle (decoded into *ca when given),
  // and every pod webhook has failurePolicy `policy`.
  bool renderedFor(int port, const std::string& policy, std::string* ca = nullptr) const {
    std::string bundle;
    for (bool mutating : {true, false}) {
      auto c = api.getSync(ref(mutating));
      const auto* whs = c ? c->as_object().if_contains("webhooks") : nullptr;
      if (whs == nullptr || !whs->is_array() || whs->as_array().empty())
        return false;
      for (const auto& wh : whs->as_array()) {
        const auto url = str(wh, {"clientConfig", "url"});
        const auto b = str(wh, {"clientConfig", "caBundle"});
        if (url.rfind("https://127.0.0.1:" + std::to_string(port) + "/", 0) != 0 || b.empty() ||
            (!bundle.empty() && b != bundle))
          return false;
        bundle = b;
        if (coversPods(wh) && str(wh, {"failurePolicy"}) != policy)
          return false;
      }
    }
    if (ca != nullptr)
      *ca = decoded(bundle);
    return true;
  }
};

// One koord manager process with its own ports and cert dir, serving the test's configurations
// at https://127.0.0.1:<webhook_port>. Its controllers are off and it does not elect a leader:
// it touches nothing of the other tests' (Nodes, NodeMetrics, the manager Lease).
struct Manager {
  int health_port = koord::testing::freeLoopbackPort();
  int metrics_port = koord::testing::freeLoopbackPort();
  int webhook_port = koord::testing::freeLoopbackPort();
  std::unique_ptr<koord::testing::Subprocess> process;

  Manager(const std::string& ns, const std::string& id, const std::string& cert_dir,
          const std::string& failure_policy_pods = "") {
    auto env = koord::testing::readClusterEnv();
    std::vector<std::string> args{
        koord::testing::koordBinary(),
        "manager",
        "--kubeconfig=" + koord::testing::needEnv(env, "KOORD_KUBECONFIG"),
        "--enable-leader-election=false",
        "--controllers=-colocationprofile,-nodemetric,-noderesource,-nodeslo,-quotaprofile",
        "--config-namespace=" + ns,
        "--metrics-addr=127.0.0.1:" + std::to_string(metrics_port),
        "--health-probe-addr=127.0.0.1:" + std::to_string(health_port),
        "-v=2"};
    std::optional<std::string> policy;
    if (!failure_policy_pods.empty())
      policy = failure_policy_pods;
    process = std::make_unique<koord::testing::Subprocess>(
        args, std::map<std::string, std::optional<std::string>>{
                  {"WEBHOOK_PORT", std::to_string(webhook_port)},
                  {"WEBHOOK_HOST", "127.0.0.1"},
                  {"WEBHOOK_CERT_DIR", cert_dir},
                  {"POD_NAMESPACE", ns},
                  {"MUTATING_WEBHOOK_NAME", id + "-mutating"},
                  {"VALIDATING_WEBHOOK_NAME", id + "-validating"},
                  {"WEBHOOK_CONFIGURATION_FAILURE_POLICY_PODS", policy}});
  }

  std::string logTail() const {
    auto log = process->stderrSoFar();
    return log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
  }
};

bool hasControlPlaneExemption(const json::value& webhook) {
  const auto* sel = webhook.as_object().if_contains("namespaceSelector");
  if (sel == nullptr)
    return false;
  for (const auto& e : sel->at("matchExpressions").as_array()) {
    if (str(e, {"key"}) == "control-plane" && str(e, {"operator"}) == "DoesNotExist")
      return true;
  }
  return false;
}

// The DER bytes of a PEM certificate, so two encodings of one certificate compare equal; "" when
// it does not parse.
std::string certDer(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> in(BIO_new_mem_buf(pem.data(), int(pem.size())),
                                               BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr), X509_free);
  if (!cert)
    return "";
  unsigned char* der = nullptr;
  int len = i2d_X509(cert.get(), &der);
  if (len <= 0)
    return "";
  std::string out(reinterpret_cast<const char*>(der), std::size_t(len));
  OPENSSL_free(der);
  return out;
}

// What a new TLS connection to 127.0.0.1:port is shown, as DER; "" when the handshake fails.
std::string servedCertDer(int port) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free);
  std::unique_ptr<BIO, decltype(&BIO_free_all)> bio(BIO_new_ssl_connect(ctx.get()), BIO_free_all);
  std::string host = "127.0.0.1:" + std::to_string(port);
  BIO_set_conn_hostname(bio.get(), host.c_str());
  SSL* ssl = nullptr;
  BIO_get_ssl(bio.get(), &ssl);
  if (ssl == nullptr || BIO_do_connect(bio.get()) <= 0 || BIO_do_handshake(bio.get()) <= 0)
    return "";
  std::unique_ptr<X509, decltype(&X509_free)> cert(SSL_get1_peer_certificate(ssl), X509_free);
  if (!cert)
    return "";
  unsigned char* der = nullptr;
  int len = i2d_X509(cert.get(), &der);
  if (len <= 0)
    return "";
  std::string out(reinterpret_cast<const char*>(der), std::size_t(len));
  OPENSSL_free(der);
  return out;
}

}  // namespace

TEST_CASE(
    "webhook down: Fail refuses pods within the timeout, control-plane namespaces and Ignore "
    "admit them, and the manager comes back",
    "[webhook-down]") {
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);
  const std::string id = uniqueName("koord-whdown");
  TestNamespace sys(*api, "koord-whdown-sys");
  TestNamespace apps(*api, "koord-whdown-apps");
  // The manager's own namespace carries the labels koord's install gives koordinator-system.
  auto ns_manifest =
      koord::testing::yamlFileToJson(koord::testing::deployDir() + "/manifests/namespace.yaml");
  REQUIRE(ns_manifest.size() == 1);
  json::object sys_labels = ns_manifest[0].at("metadata").at("labels").as_object();
  REQUIRE(sys_labels.contains("control-plane"));
  sys_labels[kScope] = id;
  labelNamespace(*api, sys.name(), sys_labels);
  labelNamespace(*api, apps.name(), {{kScope, id}});
  Configurations configs(*api, id, id);
  const auto tmp = std::filesystem::temp_directory_path() / id;
  const json::object ordinary = plainPod("ordinary", apps.name());
  const json::object managers_own = plainPod("koord-manager-x", sys.name());

  // Serving: the apiserver calls it (a pod it refuses is refused), and the pod webhooks it
  // installed fail closed with koord's timeout and exempt control-plane namespaces.
  auto serving = [&](Manager& m, const std::string& policy) {
    const auto started = Clock::now();
    bool rendered = eventually(60s, [&] { return configs.renderedFor(m.webhook_port, policy); });
    INFO("manager's log: " << m.logTail());
    REQUIRE(rendered);
    REQUIRE(eventually(30s, [&] {
      return contains(dryRunCreate(*api, apps.name(), refusedPod(apps.name())).why(),
                      "must be integer");
    }));
    return secondsSince(started);
  };

  auto m1 = std::make_unique<Manager>(sys.name(), id, (tmp / "1").string());
  const double first_start = serving(*m1, "Fail");
  std::size_t pod_webhooks = 0;
  for (bool mutating : {true, false}) {
    auto config = ok(api->getSync(configs.ref(mutating)), "read configuration");
    for (const auto& wh : config.at("webhooks").as_array()) {
      if (!coversPods(wh))
        continue;
      ++pod_webhooks;
      INFO(json::serialize(wh));
      CHECK(str(wh, {"failurePolicy"}) == "Fail");
      CHECK(wh.at("timeoutSeconds") == 10);
      CHECK(hasControlPlaneExemption(wh));
    }
  }
  CHECK(pod_webhooks == 3);  // mpod-create, mpod-update, vpod

  // Hung (SIGSTOP: connections are accepted, nothing answers): the apiserver waits out
  // timeoutSeconds, then Fail refuses.
  m1->process->signal(SIGSTOP);
  auto hung = dryRunCreate(*api, apps.name(), ordinary);
  WARN("hung webhook, Fail: refused after " << hung.seconds << " s: " << hung.why());
  CHECK_FALSE(hung.admitted());
  CHECK(contains(hung.why(), "failed calling webhook"));
  CHECK(hung.seconds >= 9);
  CHECK(hung.seconds <= 10 + 3);
  auto exempt_hung = dryRunCreate(*api, sys.name(), managers_own);
  INFO(exempt_hung.why());
  CHECK(exempt_hung.admitted());
  CHECK(exempt_hung.seconds < 3);

  // Gone (SIGKILL: connections refused): Fail refuses at once; the manager's namespace still
  // admits the pod that would bring it back.
  m1->process->signal(SIGKILL);
  (void)m1->process->wait(10s);
  auto down = dryRunCreate(*api, apps.name(), ordinary);
  WARN("dead webhook, Fail: refused after " << down.seconds << " s: " << down.why());
  CHECK_FALSE(down.admitted());
  CHECK(contains(down.why(), "failed calling webhook"));
  CHECK(down.seconds < 3);
  auto exempt_down = dryRunCreate(*api, sys.name(), managers_own);
  INFO(exempt_down.why());
  CHECK(exempt_down.admitted());

  // Ignore (WEBHOOK_CONFIGURATION_FAILURE_POLICY_PODS, rendered by the manager): a dead webhook
  // admits pods.
  auto m2 = std::make_unique<Manager>(sys.name(), id, (tmp / "2").string(), "Ignore");
  serving(*m2, "Ignore");
  // Hung under Ignore: admitted, but only once the apiserver has waited out each pod webhook's
  // timeoutSeconds (the mutating and the validating one, one after the other).
  m2->process->signal(SIGSTOP);
  auto hung_ignored = dryRunCreate(*api, apps.name(), ordinary);
  WARN("hung webhook, Ignore: " << hung_ignored.why() << " after " << hung_ignored.seconds << " s");
  CHECK(hung_ignored.admitted());
  CHECK(hung_ignored.seconds >= 9);
  CHECK(hung_ignored.seconds <= 2 * 10 + 3);
  m2->process->signal(SIGKILL);
  (void)m2->process->wait(10s);
  Timed ignored;
  CHECK(eventually(10s, [&] {
    ignored = dryRunCreate(*api, apps.name(), ordinary);
    return ignored.admitted();
  }));
  WARN("dead webhook, Ignore: " << ignored.why() << " after " << ignored.seconds << " s");
  CHECK(ignored.seconds < 3);

  // The manager comes back and puts Fail back; ordinary pods pass through it again.
  auto m3 = std::make_unique<Manager>(sys.name(), id, (tmp / "3").string());
  const double restart = serving(*m3, "Fail");
  auto again = dryRunCreate(*api, apps.name(), ordinary);
  INFO(again.why());
  CHECK(again.admitted());
  WARN("manager serving " << first_start << " s after its first start, " << restart
                          << " s after the restart");
  m3->process->signal(SIGTERM);
  auto stopped = m3->process->wait(20s);
  INFO("manager's log: " << stopped.err.substr(stopped.err.size() > 4000 ? stopped.err.size() - 4000
                                                                         : 0));
  CHECK(stopped.exit_code == 0);
  std::filesystem::remove_all(tmp);
}

namespace {

// koord's WebhookServer in this process, its /slow handler holding each review past any
// deadline (until released). A pod named warm-up* is refused at once instead, so the test can
// tell when the apiserver has loaded a configuration.
struct SlowWebhook {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{
      boost::asio::make_work_guard(io)};
  std::thread thread{[this] { io.run(); }};
  koord::metrics::Registry registry;
  std::unique_ptr<manager::WebhookServer> server;
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  std::atomic<int> held{0};

  SlowWebhook(const std::string& cert_file, const std::string& key_file,
              std::chrono::milliseconds deadline) {
    manager::WebhookServerOptions o;
    o.address = "127.0.0.1:0";
    o.cert_file = cert_file;
    o.key_file = key_file;
    o.request_deadline = deadline;
    server = std::make_unique<manager::WebhookServer>(io, o, registry);
    server->handle("/slow", [this](std::string_view body) { return review(body); });
    server->start();
  }
  ~SlowWebhook() {
    {
      std::lock_guard lock(mu);
      released = true;
    }
    cv.notify_all();
    server.reset();
    guard.reset();
    io.stop();
    thread.join();
  }
  SlowWebhook(const SlowWebhook&) = delete;
  SlowWebhook& operator=(const SlowWebhook&) = delete;

  manager::AdmissionAnswer review(std::string_view body) {
    boost::system::error_code ec;
    auto request = json::parse(body, ec);
    const std::string uid = ec ? "" : str(request, {"request", "uid"});
    const std::string name = ec ? "" : str(request, {"request", "name"});
    auto answer = [&](bool allowed) {
      json::object response{{"uid", uid}, {"allowed", allowed}};
      if (!allowed)
        response["status"] = json::object{{"code", 403}, {"message", "warm-up seen"}};
      return json::serialize(json::object{{"apiVersion", "admission.k8s.io/v1"},
                                          {"kind", "AdmissionReview"},
                                          {"response", std::move(response)}});
    };
    if (name.rfind("warm-up", 0) == 0)
      return {200, answer(false), "denied"};
    ++held;
    std::unique_lock lock(mu);
    cv.wait_for(lock, 15s, [this] { return released; });
    return {200, answer(true), "allowed"};
  }
};

json::object slowWebhook(const std::string& name, int port, const std::string& ca_pem,
                         const char* policy, const std::string& scope) {
  return json::object{{"name", name},
                      {"admissionReviewVersions", json::array{"v1"}},
                      {"clientConfig",
                       {{"url", "https://127.0.0.1:" + std::to_string(port) + "/slow"},
                        {"caBundle", koord::kube::encodeBase64(ca_pem)}}},
                      {"failurePolicy", policy},
                      {"sideEffects", "None"},
                      {"timeoutSeconds", 10},
                      {"namespaceSelector", {{"matchLabels", {{kScope, scope}}}}},
                      {"rules", json::array{json::object{{"apiGroups", json::array{""}},
                                                         {"apiVersions", json::array{"v1"}},
                                                         {"operations", json::array{"CREATE"}},
                                                         {"resources", json::array{"pods"}}}}}};
}

}  // namespace

TEST_CASE("webhook overrun: koord's deadline answers 503 before the apiserver's timeout",
          "[webhook-overrun]") {
  KubeApi api(tokenConfig());
  const std::string id = uniqueName("koord-whslow");
  const auto dir = std::filesystem::temp_directory_path() / id;
  std::filesystem::create_directories(dir);
  auto ca = koord::http::generateCA("koord-overrun-test-ca", 24h);
  auto serving = koord::http::generateServingCert(ca, "127.0.0.1", {}, {"127.0.0.1"}, 24h);
  REQUIRE(koord::http::writeFileAtomic((dir / "cert.pem").string(), serving.cert_pem, 0644));
  REQUIRE(koord::http::writeFileAtomic((dir / "key.pem").string(), serving.key_pem, 0600));
  // koord's server with the manager's deadline, and one whose deadline is past the apiserver's
  // timeout: what the apiserver does when the webhook server does not answer for itself.
  const manager::WebhookServerOptions defaults;
  REQUIRE(defaults.request_deadline < 10s);
  SlowWebhook koord_server((dir / "cert.pem").string(), (dir / "key.pem").string(),
                           defaults.request_deadline);
  SlowWebhook no_deadline((dir / "cert.pem").string(), (dir / "key.pem").string(), 60s);

  struct Case {
    const char* what;
    std::unique_ptr<TestNamespace> ns;
    std::unique_ptr<KubeApi> api;  // one each: the three creates run at once
    Timed result;
  };
  Case cases[] = {{"fail", nullptr, nullptr, {}},
                  {"ignore", nullptr, nullptr, {}},
                  {"apiserver-timeout", nullptr, nullptr, {}}};
  json::array webhooks;
  for (auto& c : cases) {
    c.ns = std::make_unique<TestNamespace>(*api, "koord-whslow");
    c.api = std::make_unique<KubeApi>(tokenConfig());
    const std::string scope = id + "-" + c.what;
    labelNamespace(*api, c.ns->name(), {{kScope, scope}});
    const bool control = std::string(c.what) == "apiserver-timeout";
    webhooks.push_back(
        slowWebhook(std::string(c.what) + ".overrun.koord.test",
                    control ? no_deadline.server->port() : koord_server.server->port(), ca.cert_pem,
                    std::string(c.what) == "ignore" ? "Ignore" : "Fail", scope));
  }
  ok(api->createSync(kValidatingWebhooks,
                     json::object{{"apiVersion", "admissionregistration.k8s.io/v1"},
                                  {"kind", "ValidatingWebhookConfiguration"},
                                  {"metadata", {{"name", id}}},
                                  {"webhooks", std::move(webhooks)}}),
     "create webhook configuration");
  struct Cleanup {
    KubeApi& api;
    std::string name;
    ~Cleanup() { (void)api->removeSync(named(kValidatingWebhooks, name)); }
  } cleanup{api, id};
  for (auto& c : cases) {
    REQUIRE(eventually(30s, [&] {
      auto r = dryRunCreate(*api, c.ns->name(), plainPod("warm-up", c.ns->name()));
      return contains(r.why(), "warm-up seen");
    }));
  }

  std::vector<std::future<Timed>> running;
  for (auto& c : cases) {
    running.push_back(std::async(std::launch::async, [&c] {
      return dryRunCreate(**c.api, c.ns->name(), plainPod("slow", c.ns->name()));
    }));
  }
  for (std::size_t i = 0; i < running.size(); ++i)
    cases[i].result = running[i].get();
  for (auto& c : cases)
    WARN(c.what << ": " << c.result.why() << " after " << c.result.seconds << " s");
  CHECK(koord_server.held == 2);
  CHECK(no_deadline.held == 1);

  const double deadline = std::chrono::duration<double>(defaults.request_deadline).count();
  // Fail: refused with the webhook's own 503, at koord's deadline, before the apiserver's 10 s.
  const auto& fail = cases[0].result;
  CHECK_FALSE(fail.admitted());
  CHECK(contains(fail.why(), "failed calling webhook"));
  CHECK(contains(fail.why(), "unable to handle the request"));
  CHECK_FALSE(contains(fail.why(), "deadline exceeded"));
  CHECK_FALSE(contains(fail.why(), "Timeout"));
  CHECK(fail.seconds >= deadline - 0.5);
  CHECK(fail.seconds < 10);
  // Ignore: admitted at koord's deadline.
  const auto& ignore = cases[1].result;
  CHECK(ignore.admitted());
  CHECK(ignore.seconds >= deadline - 0.5);
  CHECK(ignore.seconds < 10);
  // Without koord's deadline the apiserver gives up at its own, and says so.
  const auto& timeout = cases[2].result;
  CHECK_FALSE(timeout.admitted());
  CHECK(contains(timeout.why(), "failed calling webhook"));
  CHECK((contains(timeout.why(), "deadline exceeded") || contains(timeout.why(), "Timeout")));
  CHECK(timeout.seconds >= 10 - 0.5);
  CHECK(timeout.seconds <= 10 + 3);
  std::filesystem::remove_all(dir);
}

namespace {

// What the manager's certificate machinery shows at one moment.
struct CertState {
  std::string ca;          // the CA Secret's ca-cert.pem
  std::string serving;     // the serving Secret's cert.pem
  std::string serving_ca;  // the serving Secret's ca-cert.pem
  std::string bundles;     // every webhook's caBundle in both configurations, "" unless one
  std::string served_der;  // what the TLS server shows a new connection
  bool consistent() const {
    return !ca.empty() && serving_ca == ca && bundles == ca && !served_der.empty() &&
           served_der == certDer(serving);
  }
};

// Reads, changes and writes back one object; a write that lost to the manager's is tried again.
void modify(koord::kube::RestClient& api, const ResourceRef& ref,
            const std::function<void(json::object&)>& change, const char* what) {
  for (int attempt = 1;; ++attempt) {
    auto obj = ok(api.getSync(ref), what);
    change(obj.as_object());
    auto r = api.updateSync(ref, obj);
    if (r || attempt == 5 || !koord::kube::isConflict(r.error())) {
      ok(std::move(r), what);
      return;
    }
  }
}

std::string secretValue(const json::value& secret, const char* key) {
  return decoded(str(secret, {"data", key}));
}

// Pod creates through the webhooks, ten a second, each remembered with when it ended and why it
// failed, so a test can say how long the apiserver could not create pods.
class Prober {
 public:
  explicit Prober(const std::string& ns)
      : api_(tokenConfig()), ns_(ns), thread_([this] { run(); }) {}
  ~Prober() {
    stop_ = true;
    thread_.join();
  }
  Prober(const Prober&) = delete;
  Prober& operator=(const Prober&) = delete;

  struct Failure {
    Clock::time_point at;
    std::string why;
  };
  // The failures at or after `since`.
  std::vector<Failure> failuresSince(Clock::time_point since) {
    std::lock_guard lock(mu_);
    std::vector<Failure> out;
    for (const auto& f : failures_) {
      if (f.at >= since)
        out.push_back(f);
    }
    return out;
  }
  std::size_t probes() const { return probes_; }

 private:
  void run() {
    const auto pod = plainPod("probe", ns_);
    while (!stop_) {
      auto r = dryRunCreate(*api_, ns_, pod);
      ++probes_;
      if (!r.admitted()) {
        std::lock_guard lock(mu_);
        failures_.push_back({Clock::now(), r.why()});
      }
      std::this_thread::sleep_for(100ms);
    }
  }

  KubeApi api_;
  std::string ns_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> probes_{0};
  std::mutex mu_;
  std::vector<Failure> failures_;
  std::thread thread_;
};

}  // namespace

TEST_CASE(
    "webhook certs: a deleted or expiring certificate is reissued, both caBundles follow, "
    "and the new one is served without a restart",
    "[webhook-certs]") {
  KubeApi api(tokenConfig());
  koord::testing::applyCrds(*api);
  const std::string id = uniqueName("koord-whcert");
  TestNamespace sys(*api, "koord-whcert-sys");
  TestNamespace apps(*api, "koord-whcert-apps");
  labelNamespace(*api, apps.name(), {{kScope, id}});
  Configurations configs(*api, id, id);
  const auto tmp = std::filesystem::temp_directory_path() / id;
  Manager m(sys.name(), id, (tmp / "certs").string());
  {
    bool rendered = eventually(60s, [&] { return configs.renderedFor(m.webhook_port, "Fail"); });
    INFO("manager's log: " << m.logTail());
    REQUIRE(rendered);
  }
  REQUIRE(eventually(30s, [&] {
    return contains(dryRunCreate(*api, apps.name(), refusedPod(apps.name())).why(),
                    "must be integer");
  }));

  manager::CertProvisionerConfig names;  // the manager's defaults, with its namespace and host
  names.namespace_ = sys.name();
  names.host = "127.0.0.1";
  const auto serving_ref = named(kSecrets, names.secret_name, sys.name());
  const auto ca_ref = named(kSecrets, manager::caSecretName(names), sys.name());
  auto observe = [&] {
    CertState s;
    if (auto ca = api->getSync(ca_ref))
      s.ca = secretValue(*ca, "ca-cert.pem");
    if (auto serving = api->getSync(serving_ref)) {
      s.serving = secretValue(*serving, "cert.pem");
      s.serving_ca = secretValue(*serving, "ca-cert.pem");
    }
    std::string ca;
    if (configs.renderedFor(m.webhook_port, "Fail", &ca))
      s.bundles = ca;
    s.served_der = servedCertDer(m.webhook_port);
    return s;
  };
  CertState before;
  REQUIRE(eventually(30s, [&] {
    before = observe();
    return before.consistent();
  }));

  Prober prober(apps.name());
  // Recovered: the state is consistent, `done` says the change was undone, and a pod create
  // through the webhooks succeeds. Returns the seconds since `at`, or -1 after 60 s.
  auto recovered = [&](Clock::time_point at, const std::function<bool(const CertState&)>& done,
                       CertState& now) {
    bool ok = eventually(60s, [&] {
      now = observe();
      return now.consistent() && done(now) &&
             dryRunCreate(*api, apps.name(), plainPod("after", apps.name())).admitted();
    });
    INFO("manager's log: " << m.logTail());
    REQUIRE(ok);
    return secondsSince(at);
  };
  // How long pod creates failed after `at`: from the first failure to the last.
  auto failureWindow = [&](Clock::time_point at, const char* what) {
    auto failures = prober.failuresSince(at);
    if (failures.empty())
      return 0.0;
    double window =
        std::chrono::duration<double>(failures.back().at - failures.front().at).count() + 0.1;
    WARN(what << ": " << failures.size() << " pod creates failed over " << window
              << " s, the first with: " << failures.front().why);
    return window;
  };

  // 1. Both Secrets deleted: a new CA and serving certificate, and both configurations' caBundle.
  const auto deleted_at = Clock::now();
  ok(api->removeSync(serving_ref), "delete the serving Secret");
  ok(api->removeSync(ca_ref), "delete the CA Secret");
  CertState after_delete;
  const double reissued = recovered(
      deleted_at,
      [&](const CertState& s) { return s.ca != before.ca && s.serving != before.serving; },
      after_delete);
  WARN("Secrets deleted: new CA and certificate served and in both caBundles after " << reissued
                                                                                     << " s");
  // The manager's watches bring its pass forward; its periodic pass alone would leave up to a
  // minute to the next check.
  CHECK(reissued <= 20);
  CHECK(failureWindow(deleted_at, "Secrets deleted") <= 60);

  // 2. A valid serving certificate that expires within renew_before, from the current CA.
  std::vector<std::string> dns;
  for (const auto& n : manager::servingNames(names)) {
    if (n != names.host)
      dns.push_back(n);
  }
  auto ca_secret = ok(api->getSync(ca_ref), "read the CA Secret");
  const koord::http::KeyPair ca_pair{secretValue(ca_secret, "ca-cert.pem"),
                                     secretValue(ca_secret, "ca-key.pem")};
  const auto expiring = koord::http::generateServingCert(
      ca_pair, names.service_name + "." + sys.name() + ".svc", dns, {names.host}, 24h * 30);
  REQUIRE(koord::http::certNotAfter(expiring.cert_pem) - std::chrono::system_clock::now() <
          names.renew_before);
  const auto replaced_at = Clock::now();
  modify(
      *api, serving_ref,
      [&](json::object& secret) {
        auto& data = secret["data"].as_object();
        data["cert.pem"] = koord::kube::encodeBase64(expiring.cert_pem);
        data["key.pem"] = koord::kube::encodeBase64(expiring.key_pem);
      },
      "install an expiring certificate");
  CertState after_expiring;
  const double renewed = recovered(
      replaced_at,
      [&](const CertState& s) {
        return s.ca == after_delete.ca && s.serving != expiring.cert_pem &&
               s.serving != after_delete.serving &&
               koord::http::certNotAfter(s.serving) - std::chrono::system_clock::now() >
                   names.renew_before;
      },
      after_expiring);
  WARN("expiring certificate installed: replaced and served after " << renewed << " s");
  CHECK(renewed <= 20);
  CHECK(failureWindow(replaced_at, "expiring certificate") <= 60);

  // 3. The caBundles overwritten with another CA (a `kubectl replace` of the configurations
  // would do it): pod creates fail on x509 until the manager puts its CA back.
  const auto stranger = koord::http::generateCA("someone-elses-ca", 24h);
  const auto overwritten_at = Clock::now();
  for (bool mutating : {true, false}) {
    modify(
        *api, configs.ref(mutating),
        [&](json::object& config) {
          for (auto& wh : config["webhooks"].as_array())
            wh.as_object()["clientConfig"].as_object()["caBundle"] =
                koord::kube::encodeBase64(stranger.cert_pem);
        },
        "overwrite the caBundle");
  }
  CertState after_overwrite;
  const double restored = recovered(
      overwritten_at, [&](const CertState& s) { return s.ca == after_delete.ca; }, after_overwrite);
  WARN("caBundles overwritten: put back after " << restored << " s");
  CHECK(restored <= 20);
  CHECK(failureWindow(overwritten_at, "caBundles overwritten") <= 60);
  CHECK(prober.probes() > 0);

  m.process->signal(SIGTERM);
  auto stopped = m.process->wait(20s);
  CHECK(stopped.exit_code == 0);
  std::filesystem::remove_all(tmp);
}
