// koord::kube::Informer against the real apiserver: initial sync, handlers and indexes, a relist
// after a forced 410 (etcd compacted while the watch was cut off), and an apiserver restart.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/http/client.h"
#include "koord/kube/informer.h"
#include "koord/kube/json_limits.h"
#include "manifests.h"
#include "subprocess.h"
#include "tcp_relay.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using namespace koord::kube;
using koord::testing::KubeApi;
using koord::testing::named;
using koord::testing::ok;
using koord::testing::TestNamespace;
using koord::testing::tokenConfig;
using namespace koord::testing::resources;

namespace {

constexpr const char* kTestLabel = "koord-informer-test";

// What the tests keep of an object: the projection a role would write.
struct Item {
  std::string name;
  std::string namespace_;
  std::string value;  // data.k (ConfigMap) or the template's label "value" (PodTemplate)
  std::string tier;   // metadata.labels.tier
};

std::string field(const json::value& v, std::initializer_list<const char*> path) {
  return koord::testing::str(v, path);
}

Expected<Item> projectConfigMap(const json::value& v) {
  Item it;
  it.name = field(v, {"metadata", "name"});
  it.namespace_ = field(v, {"metadata", "namespace"});
  it.value = field(v, {"data", "k"});
  it.tier = field(v, {"metadata", "labels", "tier"});
  if (it.value == "refuse-me")
    return makeKubeError("data.k: refused by the test projection");
  return it;
}

Expected<Item> projectPodTemplate(const json::value& v) {
  Item it;
  it.name = field(v, {"metadata", "name"});
  it.namespace_ = field(v, {"metadata", "namespace"});
  it.value = field(v, {"template", "metadata", "labels", "value"});
  it.tier = field(v, {"metadata", "labels", "tier"});
  return it;
}

json::value configMap(const std::string& name, const std::string& value, const std::string& tier) {
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", name}, {"labels", {{kTestLabel, "1"}, {"tier", tier}}}}},
      {"data", {{"k", value}}}};
}

json::value podTemplate(const std::string& name, const std::string& value) {
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "PodTemplate"},
      {"metadata", {{"name", name}, {"labels", {{kTestLabel, "1"}}}}},
      {"template",
       {{"metadata", {{"labels", {{"value", value}}}}},
        {"spec",
         {{"containers", json::array{{{"name", "c"}, {"image", "koord.local/busybox:local"}}}}}}}}};
}

// What the handlers saw, in order, as "add name", "update name old->new", "delete name".
struct Journal {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> lines;

  InformerHandlers<Item> handlers() {
    InformerHandlers<Item> h;
    h.on_add = [this](const std::string&, const Item& o) { note("add " + o.name); };
    h.on_update = [this](const std::string&, const Item& a, const Item& b) {
      note("update " + b.name + " " + a.value + "->" + b.value);
    };
    h.on_delete = [this](const std::string&, const Item& o) { note("delete " + o.name); };
    return h;
  }
  void note(std::string line) {
    std::lock_guard lock(mu);
    lines.push_back(std::move(line));
    cv.notify_all();
  }
  bool waitFor(const std::string& line, std::chrono::seconds timeout = 30s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] {
      for (const auto& l : lines) {
        if (l == line)
          return true;
      }
      return false;
    });
  }
  bool has(const std::string& line) {
    std::lock_guard lock(mu);
    for (const auto& l : lines) {
      if (l == line)
        return true;
    }
    return false;
  }
};

ReflectorOptions selectTestObjects() {
  ReflectorOptions o;
  o.label_selector = std::string(kTestLabel) + "=1";
  return o;
}

// key -> value of a fresh list, what the store must equal.
std::map<std::string, std::string> freshList(RestClient& client, const ResourceRef& ref,
                                             bool pod_templates) {
  ListOptions o;
  o.label_selector = std::string(kTestLabel) + "=1";
  auto list = ok(client.listSync(ref, o), "list");
  std::map<std::string, std::string> out;
  for (const auto& item : list.at("items").as_array()) {
    auto p = pod_templates ? projectPodTemplate(item) : projectConfigMap(item);
    REQUIRE(p.has_value());
    out[p->namespace_ + "/" + p->name] = p->value;
  }
  return out;
}

std::map<std::string, std::string> storeContents(const Informer<Item>& inf) {
  std::map<std::string, std::string> out;
  for (const auto& it : inf.store().list())
    out[it->namespace_ + "/" + it->name] = it->value;
  return out;
}

// Polls until the store equals a fresh list (both change only through the test's writes).
bool converges(RestClient& client, const Informer<Item>& inf, const ResourceRef& ref,
               bool pod_templates, std::chrono::seconds timeout = 30s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto want = freshList(client, ref, pod_templates);
  while (std::chrono::steady_clock::now() < deadline) {
    if (storeContents(inf) == want)
      return true;
    std::this_thread::sleep_for(100ms);
  }
  CHECK(storeContents(inf) == want);
  return false;
}

// The etcd revision now, from etcd's JSON gateway (the apiserver's resourceVersions are
// etcd revisions).
std::int64_t etcdRevision(koord::http::Client& http, const std::string& etcd) {
  koord::http::ClientRequest req;
  req.method = "POST";
  req.url = etcd + "/v3/kv/range";
  req.headers = {{"Content-Type", "application/json"}};
  req.body = R"({"key":"Lw=="})";  // "/": any key will do, we want the header
  auto r = http.sendSync(req);
  REQUIRE(r.has_value());
  REQUIRE(r->status == 200);
  auto v = json::parse(r->body);
  return std::stoll(std::string(v.at("header").at("revision").as_string()));
}

void compactEtcd(koord::http::Client& http, const std::string& etcd, std::int64_t revision) {
  koord::http::ClientRequest req;
  req.method = "POST";
  req.url = etcd + "/v3/kv/compaction";
  req.headers = {{"Content-Type", "application/json"}};
  req.body = fmt::format(R"({{"revision":"{}","physical":true}})", revision);
  auto r = http.sendSync(req);
  REQUIRE(r.has_value());
  INFO(r->body);
  REQUIRE(r->status == 200);
}

}  // namespace

TEST_CASE("Informer syncs, then follows adds, updates and deletes with its indexes", "[cluster]") {
  KubeApi api(tokenConfig());
  TestNamespace ns(*api, "koord-informer");
  ResourceRef cms = named(kConfigMaps, "", ns.name());
  for (int i = 0; i < 5; ++i) {
    ok(api->createSync(cms, configMap("cm-" + std::to_string(i), "v0", i % 2 ? "odd" : "even")),
       "create");
  }

  Informer<Item> inf(*api, api.io, cms, projectConfigMap, selectTestObjects());
  inf.addIndex("tier", [](const Item& it) { return std::vector<std::string>{it.tier}; });
  inf.addIndex(indexes::kNamespace,
               [](const Item& it) { return std::vector<std::string>{it.namespace_}; });
  Journal journal;
  inf.addHandlers(journal.handlers());
  CHECK_FALSE(inf.hasSynced());
  inf.start();
  REQUIRE(inf.waitForSync(30s));
  CHECK_THROWS_AS(inf.addHandlers(journal.handlers()), std::logic_error);

  CHECK(inf.store().size() == 5);
  CHECK(inf.store().byIndex("tier", "even").size() == 3);
  CHECK(inf.store().byIndex("tier", "odd").size() == 2);
  CHECK(inf.store().byIndex(indexes::kNamespace, ns.name()).size() == 5);
  CHECK(inf.store().get(ns.name() + "/cm-3")->value == "v0");
  for (int i = 0; i < 5; ++i)
    CHECK(journal.has("add cm-" + std::to_string(i)));

  // Watch: a new object, a change that moves it between index values, a delete.
  ok(api->createSync(cms, configMap("cm-new", "v0", "odd")), "create");
  REQUIRE(journal.waitFor("add cm-new"));
  auto ref = cms;
  ref.name = "cm-1";
  ok(api->updateSync(ref, configMap("cm-1", "v1", "even")), "update");
  REQUIRE(journal.waitFor("update cm-1 v0->v1"));
  CHECK(inf.store().byIndex("tier", "even").size() == 4);
  CHECK(inf.store().byIndex("tier", "odd").size() == 2);  // cm-3, cm-new
  ref.name = "cm-0";
  ok(api->removeSync(ref), "delete");
  REQUIRE(journal.waitFor("delete cm-0"));
  CHECK(inf.store().get(ns.name() + "/cm-0") == nullptr);
  CHECK(inf.store().byIndex("tier", "even").size() == 3);

  // An object the projection refuses changes nothing and is counted; fixed, it arrives.
  ok(api->createSync(cms, configMap("cm-bad", "refuse-me", "odd")), "create");
  ok(api->createSync(cms, configMap("cm-after-bad", "v0", "odd")), "create");
  REQUIRE(journal.waitFor("add cm-after-bad"));
  CHECK(inf.projectionErrors() == 1);
  CHECK(inf.store().get(ns.name() + "/cm-bad") == nullptr);
  ref.name = "cm-bad";
  ok(api->updateSync(ref, configMap("cm-bad", "fixed", "odd")), "update");
  REQUIRE(journal.waitFor("add cm-bad"));

  CHECK(converges(*api, inf, cms, false));
  CHECK(inf.reflector().listsCompleted() == 1);
  inf.stop();
}

// A NodeMetric whose schema-free status.nodeMetric.nodeUsage.devices entry nests `depth` levels
// in all, as text: json::serialize recurses per level and is not for objects this deep.
std::string deepNodeMetricStatus(const std::string& name, const std::string& rv,
                                 std::size_t depth) {
  // object, status, nodeMetric, nodeUsage, devices, the entry
  constexpr std::size_t kOpened = 6;
  std::string open, close;
  for (std::size_t i = kOpened; i < depth; ++i) {
    open += (i % 2) != 0u ? "[" : R"({"a":)";
    close.insert(0, (i % 2) != 0u ? "]" : "}");
  }
  return R"({"apiVersion":"slo.koordinator.sh/v1alpha1","kind":"NodeMetric","metadata":{"name":")" +
         name + R"(","resourceVersion":")" + rv +
         R"("},"status":{"nodeMetric":{"nodeUsage":{"devices":[{"x":)" + open + "1" + close +
         "}]}}}}";
}

TEST_CASE("Informer syncs and follows NodeMetrics nested as deep as the apiserver stores",
          "[cluster]") {
  // Boost.JSON's default depth (32) refused these: the watch retried the same resourceVersion
  // for good (every node read as stale after 180 s) and a new informer never synced.
  KubeApi api(tokenConfig());
  koord::testing::applyManifestFile(
      *api, koord::testing::crdsDir() + "/slo.koordinator.sh_nodemetrics.yaml");
  const ResourceRef metrics = kNodeMetrics;
  const std::string deep = koord::testing::uniqueName("koord-deep");
  const std::string after = koord::testing::uniqueName("koord-after-deep");
  auto create = [&](const std::string& name) {
    json::value body = json::object{{"apiVersion", "slo.koordinator.sh/v1alpha1"},
                                    {"kind", "NodeMetric"},
                                    {"metadata", {{"name", name}}}};
    auto r = api->createSync(metrics, body);
    for (int i = 0; i < 50 && !r && r.error().code == 404; ++i) {  // a new group's discovery lags
      std::this_thread::sleep_for(200ms);
      r = api->createSync(metrics, body);
    }
    return ok(std::move(r), "create NodeMetric");
  };
  struct Removal {
    KubeApi& api;
    ResourceRef ref;
    ~Removal() { (void)api->removeSync(ref); }
  };
  auto created = create(deep);
  Removal remove_deep{api, [&] {
                        auto r = metrics;
                        r.name = deep;
                        return r;
                      }()};

  auto project = [](const json::value& v) -> Expected<Item> {
    Item it;
    it.name = field(v, {"metadata", "name"});
    it.value = field(v, {"metadata", "resourceVersion"});
    return it;
  };
  Informer<Item> inf(*api, api.io, metrics, project);
  Journal journal;
  inf.addHandlers(journal.handlers());
  inf.start();
  REQUIRE(inf.waitForSync(30s));

  // The status written through the watch: a deep MODIFIED event, then an ADDED after it.
  const std::size_t depth = koord::kube::kMaxApiObjectDepth - 500;
  auto written = api->rawSync(
      "PUT", "/apis/slo.koordinator.sh/v1alpha1/nodemetrics/" + deep + "/status",
      deepNodeMetricStatus(
          deep, std::string(created.at("metadata").at("resourceVersion").as_string()), depth),
      "application/json");
  INFO((written ? std::string() : written.error().message));
  REQUIRE(written.has_value());
  const std::string deep_rv(written->at("metadata").at("resourceVersion").as_string());
  REQUIRE(journal.waitFor("update " + deep + " " +
                          std::string(created.at("metadata").at("resourceVersion").as_string()) +
                          "->" + deep_rv));
  create(after);
  Removal remove_after{api, [&] {
                         auto r = metrics;
                         r.name = after;
                         return r;
                       }()};
  REQUIRE(journal.waitFor("add " + after));
  inf.stop();

  // A new informer (a restarted scheduler) lists the deep object and syncs.
  Informer<Item> fresh(*api, api.io, metrics, project);
  fresh.start();
  REQUIRE(fresh.waitForSync(30s));
  auto got = fresh.store().get(deep);
  REQUIRE(got != nullptr);
  CHECK(got->value == deep_rv);
  fresh.stop();
}

TEST_CASE("Informer relists after 410 when etcd was compacted while its watch was cut off",
          "[cluster]") {
  auto env = koord::testing::readClusterEnv();
  const std::string etcd = koord::testing::needEnv(env, "KOORD_ETCD_ENDPOINT");
  auto config = tokenConfig();
  const std::string host = config.host;  // https://127.0.0.1:PORT
  const int port = std::stoi(host.substr(host.rfind(':') + 1));
  koord::testing::TcpRelay relay("127.0.0.1", port);

  KubeApi api(config);  // direct: the test's own writes
  auto relayed = config;
  relayed.host = "https://127.0.0.1:" + std::to_string(relay.port());
  KubeApi informer_api(relayed);

  TestNamespace ns(*api, "koord-informer-410");
  ResourceRef pts = named(kPodTemplates, "", ns.name());
  // 150 objects: 20 are deleted, 100 changed and 30 left alone while the watch is cut off, and
  // 380 new ones appear: 500 writes the informer never sees as events.
  constexpr int kInitial = 150, kDeleted = 20, kChanged = 100, kCreated = 380;
  for (int i = 0; i < kInitial; ++i)
    ok(api->createSync(pts, podTemplate("pt-" + std::to_string(i), "v0")), "create");

  auto options = selectTestObjects();
  options.page_size = 50;  // the relist after 410 reads etcd in pages
  Informer<Item> inf(*informer_api, informer_api.io, pts, projectPodTemplate, options);
  Journal journal;
  inf.addHandlers(journal.handlers());
  inf.start();
  REQUIRE(inf.waitForSync(30s));
  REQUIRE(inf.store().size() == kInitial);
  const auto synced_rv = inf.reflector().lastSyncResourceVersion();

  // The watch is cut off; meanwhile objects go, change and appear, and etcd forgets history.
  relay.cut();
  auto ref = pts;
  for (int i = 0; i < kDeleted; ++i) {
    ref.name = "pt-" + std::to_string(i);
    ok(api->removeSync(ref), "delete");
  }
  for (int i = kDeleted; i < kDeleted + kChanged; ++i) {
    ref.name = "pt-" + std::to_string(i);
    ok(api->updateSync(ref, podTemplate(ref.name, "v1")), "update");
  }
  for (int i = kInitial; i < kInitial + kCreated; ++i)
    ok(api->createSync(pts, podTemplate("pt-" + std::to_string(i), "v0")), "create");
  koord::http::Client http(api.io, {});
  const auto revision = etcdRevision(http, etcd);
  REQUIRE(revision > std::stoll(synced_rv));
  compactEtcd(http, etcd, revision);

  relay.restore();
  const auto restored = std::chrono::steady_clock::now();
  REQUIRE(converges(*api, inf, pts, true));
  INFO("converged " << std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - restored)
                           .count()
                    << " ms after the watch was restored");
  CHECK(inf.store().size() == kInitial - kDeleted + kCreated);
  CHECK(inf.reflector().listsCompleted() == 2);
  // Each change is announced exactly once, and nothing else is: the initial adds, then one
  // handler call per object the relist found different.
  std::map<std::string, int> calls;
  {
    std::lock_guard lock(journal.mu);
    for (const auto& line : journal.lines)
      ++calls[line];
    CHECK(journal.lines.size() ==
          static_cast<std::size_t>(kInitial + kDeleted + kChanged + kCreated));
  }
  for (int i = 0; i < kDeleted; ++i)
    CHECK(calls["delete pt-" + std::to_string(i)] == 1);
  for (int i = kDeleted; i < kDeleted + kChanged; ++i)
    CHECK(calls["update pt-" + std::to_string(i) + " v0->v1"] == 1);
  for (int i = 0; i < kInitial + kCreated; ++i)
    CHECK(calls["add pt-" + std::to_string(i)] == 1);
  // Unchanged objects are not announced again by the relist.
  for (int i = kDeleted + kChanged; i < kInitial; ++i)
    CHECK(calls.count("update pt-" + std::to_string(i) + " v0->v0") == 0);

  // And it keeps watching from the relist's version.
  ok(api->createSync(pts, podTemplate("pt-after", "v0")), "create");
  CHECK(journal.waitFor("add pt-after"));
  inf.stop();
}

// Reliability check 2: while the apiserver cannot be reached, each informer knocks at most
// once a second (the backoff, not a hot loop), keeps what it had, and catches up by itself.
TEST_CASE("Informers cut off from the apiserver retry at most once a second and catch up",
          "[cluster]") {
  auto config = tokenConfig();
  const int port = std::stoi(config.host.substr(config.host.rfind(':') + 1));
  koord::testing::TcpRelay relay("127.0.0.1", port);
  KubeApi api(config);
  auto relayed = config;
  relayed.host = "https://127.0.0.1:" + std::to_string(relay.port());
  KubeApi informer_api(relayed);

  TestNamespace ns(*api, "koord-informer-outage");
  ResourceRef cms = named(kConfigMaps, "", ns.name());
  ResourceRef pts = named(kPodTemplates, "", ns.name());
  ok(api->createSync(cms, configMap("cm-0", "v0", "a")), "create");
  ok(api->createSync(pts, podTemplate("pt-0", "v0")), "create");
  Informer<Item> cm_inf(*informer_api, informer_api.io, cms, projectConfigMap, selectTestObjects());
  Informer<Item> pt_inf(*informer_api, informer_api.io, pts, projectPodTemplate,
                        selectTestObjects());
  Journal journal;
  cm_inf.addHandlers(journal.handlers());
  cm_inf.start();
  pt_inf.start();
  REQUIRE(cm_inf.waitForSync(30s));
  REQUIRE(pt_inf.waitForSync(30s));

  relay.cut();
  const int refused_before = relay.connectionsRefused();
  // Long enough for the backoff to reach its cap, so the cap is what is measured.
  constexpr auto kOutage = 90s;
  const auto cut_at = std::chrono::steady_clock::now();
  ok(api->createSync(cms, configMap("cm-during", "v0", "a")), "create during the outage");
  std::this_thread::sleep_for(kOutage);
  const int attempts = relay.connectionsRefused() - refused_before;
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - cut_at)
          .count();
  INFO(attempts << " connection attempts by 2 informers in " << seconds << " s");
  CHECK(attempts >= 2);                  // they did notice and try again...
  CHECK(attempts <= 2 * (seconds + 1));  // ...at most once a second each
  // What they knew stays; nothing was announced while nothing could be known.
  CHECK(cm_inf.hasSynced());
  CHECK(cm_inf.store().size() == 1);
  CHECK(pt_inf.store().size() == 1);
  CHECK_FALSE(journal.has("add cm-during"));

  relay.restore();
  CHECK(journal.waitFor("add cm-during", 60s));
  CHECK(converges(*api, cm_inf, cms, false, 60s));
  CHECK(converges(*api, pt_inf, pts, true, 60s));
  cm_inf.stop();
  pt_inf.stop();
}

// Run alone (RUN_SERIAL): it restarts the apiserver every other test talks to.
TEST_CASE("Informer keeps working across an apiserver restart", "[restart]") {
  const char* cluster_sh = std::getenv("KOORD_CLUSTER_SH");
  REQUIRE(cluster_sh != nullptr);
  KubeApi api(tokenConfig());
  TestNamespace ns(*api, "koord-informer-restart");
  ResourceRef cms = named(kConfigMaps, "", ns.name());
  for (int i = 0; i < 3; ++i)
    ok(api->createSync(cms, configMap("cm-" + std::to_string(i), "v0", "a")), "create");

  Informer<Item> inf(*api, api.io, cms, projectConfigMap, selectTestObjects());
  Journal journal;
  inf.addHandlers(journal.handlers());
  inf.start();
  REQUIRE(inf.waitForSync(30s));
  const auto watches_before = inf.reflector().watchesOpened();

  auto restart = koord::testing::run({cluster_sh, "restart-apiserver"}, {}, 120s);
  INFO(restart.err);
  REQUIRE(restart.exit_code == 0);

  // Written after the restart: only a watch (or relist) that came back can see them.
  ok(api->createSync(cms, configMap("cm-after", "v0", "a")), "create after restart");
  auto ref = cms;
  ref.name = "cm-0";
  ok(api->removeSync(ref), "delete after restart");
  CHECK(journal.waitFor("add cm-after", 60s));
  CHECK(journal.waitFor("delete cm-0", 60s));
  CHECK(converges(*api, inf, cms, false));
  CHECK(inf.reflector().watchesOpened() > watches_before);
  inf.stop();
}
