// HttpExtenders against a real HTTP(S) server on loopback: the bodies kube-scheduler's extender
// API carries, the answers mapped back onto the nodes (filter, prioritize, bind, preempt), which
// pods an extender is asked about, and what a failing, slow or untrusted extender does to the
// cycle.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "extender/extender_json.h"
#include "extender/http_extenders.h"
#include "fake_extender.h"
#include "framework/snapshot.h"
#include "koord/http/cert.h"

using namespace koord::roles::scheduler;
using koord::roles::scheduler::testing::FakeExtender;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

struct Nodes {
  std::vector<std::shared_ptr<NodeInfo>> owned;
  std::vector<const NodeInfo*> list;

  explicit Nodes(std::initializer_list<const char*> names) {
    for (const char* name : names) {
      auto node = std::make_shared<Node>();
      node->name = name;
      node->uid = std::string("uid-") + name;
      node->labels["zone"] = "z1";
      node->allocatable.milli_cpu = 4000;
      node->allocatable.memory = 8LL << 30;
      node->capacity = node->allocatable;
      node->taints.push_back({"dedicated", "gpu", koord::kube::TaintEffect::kNoSchedule});
      auto info = std::make_shared<NodeInfo>();
      info->node = node;
      owned.push_back(info);
      list.push_back(info.get());
    }
  }
};

std::vector<std::string> names(const std::vector<const NodeInfo*>& nodes) {
  std::vector<std::string> out;
  for (const NodeInfo* n : nodes)
    out.push_back(n->name());
  return out;
}

PodInfo pod(const std::string& name = "web") {
  PodInfo p;
  p.namespace_ = "default";
  p.name = name;
  p.uid = "uid-" + name;
  p.resource_version = "7";
  p.labels["app"] = name;
  p.requests.milli_cpu = 500;
  return p;
}

config::Extender extenderAt(const std::string& url) {
  config::Extender e;
  e.url_prefix = url;
  e.filter_verb = "filter";
  e.http_timeout = 5s;
  return e;
}

// The pod as the API server would give it: with an annotation the projection does not keep.
HttpExtendersOptions fetching(std::atomic<int>* fetches = nullptr) {
  HttpExtendersOptions o;
  o.fetch_pod = [fetches](const PodInfo& p) -> koord::kube::Expected<json::value> {
    if (fetches != nullptr)
      ++*fetches;
    return json::value{{"metadata",
                        {{"name", p.name},
                         {"namespace", p.namespace_},
                         {"annotations", {{"from", "api-server"}}}}}};
  };
  return o;
}

}  // namespace

TEST_CASE("extenders: filter narrows the nodes and its failedNodes become node statuses",
          "[extender]") {
  FakeExtender server({"/ext/filter"});
  server.answer("/ext/filter",
                R"({"Nodes":{"items":[{"metadata":{"name":"c"}},{"metadata":{"name":"a"}}]},)"
                R"("FailedNodes":{"b":"b is reserved for batch"},"Error":""})");
  HttpExtenders extenders({extenderAt(server.url("/ext/"))}, fetching());
  Nodes nodes{"a", "b", "c"};
  std::vector<const NodeInfo*> feasible = nodes.list;
  NodeStatusMap failed;
  failed.emplace("x", Status::unschedulable("Insufficient cpu"));
  auto s = extenders.filter(pod(), feasible, failed);
  REQUIRE(s.ok());
  CHECK(names(feasible) == std::vector<std::string>{"c", "a"});
  REQUIRE(failed.contains("b"));
  CHECK(failed.at("b").code() == Code::kUnschedulable);
  CHECK(failed.at("b").reasons() == std::vector<std::string>{"b is reserved for batch"});
  CHECK(failed.contains("x"));

  // The body: ExtenderArgs with Go's field names, the pod as fetched, whole nodes.
  auto calls = server.callsTo("/ext/filter");
  REQUIRE(calls.size() == 1);
  const json::object& body = calls[0].body.as_object();
  CHECK(body.at("Pod").at("metadata").at("annotations").at("from") == "api-server");
  CHECK(body.at("NodeNames").is_null());
  const json::array& items = body.at("Nodes").at("items").as_array();
  REQUIRE(items.size() == 3);
  CHECK(items[1].at("metadata").at("name") == "b");
  CHECK(items[1].at("metadata").at("labels").at("zone") == "z1");
  CHECK(items[1].at("status").at("allocatable").at("cpu") == "4");
  CHECK(items[1].at("status").at("allocatable").at("memory") == "8Gi");
  CHECK(items[1].at("spec").at("taints").at(0).at("effect") == "NoSchedule");
}

TEST_CASE(
    "extenders: a node-caching extender gets names, answers in any case, and "
    "failedAndUnresolvableNodes wins over failedNodes",
    "[extender]") {
  FakeExtender server({"/ext/filter"});
  server.answer("/ext/filter", R"({"nodenames":["b","b"],"failedNodes":{"a":"busy","zz":"x"},)"
                               R"("failedAndUnresolvableNodes":{"a":"wrong rack","c":"no disk"}})");
  auto e = extenderAt(server.url("/ext"));
  e.node_cache_capable = true;
  HttpExtenders extenders({e}, fetching());
  Nodes nodes{"a", "b", "c"};
  std::vector<const NodeInfo*> feasible = nodes.list;
  NodeStatusMap failed;
  failed.emplace("c", Status::unschedulable("earlier"));
  REQUIRE(extenders.filter(pod(), feasible, failed).ok());
  CHECK(names(feasible) == std::vector<std::string>{"b"});
  CHECK(failed.at("a").code() == Code::kUnschedulableAndUnresolvable);
  CHECK(failed.at("a").reasons() == std::vector<std::string>{"wrong rack"});
  CHECK(failed.at("c").code() == Code::kUnschedulableAndUnresolvable);
  CHECK(failed.at("c").reasons() == std::vector<std::string>{"earlier", "no disk"});
  CHECK_FALSE(failed.contains("zz"));  // never asked about: dropped

  auto calls = server.callsTo("/ext/filter");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].body.at("Nodes").is_null());
  CHECK(calls[0].body.at("NodeNames") == json::array{"a", "b", "c"});
}

TEST_CASE("extenders: a required extender's failure fails the cycle, an ignorable one is skipped",
          "[extender]") {
  FakeExtender server({"/req/filter", "/ign/filter"});
  Nodes nodes{"a", "b"};
  struct Row {
    int status;
    std::string body;
    std::string error;  // the required extender's, "{url}" for its URL
  };
  const Row rows[] = {
      {500, "{}", "Failed filter with extender at URL {url}/filter, code 500"},
      {200, R"({"Error":"quota service down"})", "quota service down"},
      {200, R"({"NodeNames":)", "malformed answer: "},
      {200, R"({"Nodes":{"items":[{"metadata":{"name":"q"}}]}})",
       "extender \"{url}\" claims a filtered node \"q\" which is not found in the input node list"},
      {200, R"({"FailedNodes":{"a":1}})",
       "malformed answer: FailedNodes.a: expected string, got "
       "number"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.body, row.status);
    server.answer("/req/filter", row.body, row.status);
    server.answer("/ign/filter", row.body, row.status);
    const std::string req_url = server.url("/req");
    std::string want = row.error;
    for (auto at = want.find("{url}"); at != std::string::npos; at = want.find("{url}"))
      want.replace(at, 5, req_url);

    auto ignorable = extenderAt(server.url("/ign"));
    ignorable.ignorable = true;
    HttpExtenders skip({ignorable}, fetching());
    std::vector<const NodeInfo*> feasible = nodes.list;
    NodeStatusMap failed;
    REQUIRE(skip.filter(pod(), feasible, failed).ok());
    CHECK(feasible.size() == 2);  // as if it were not there
    CHECK(failed.empty());

    HttpExtenders required({extenderAt(req_url)}, fetching());
    feasible = nodes.list;
    auto s = required.filter(pod(), feasible, failed);
    CHECK(s.code() == Code::kError);
    CHECK_THAT(s.message(), Catch::StartsWith(want));
  }

  SECTION("an extender that is not there") {
    auto gone = extenderAt("http://127.0.0.1:1/x");
    HttpExtenders required({gone}, fetching());
    std::vector<const NodeInfo*> feasible = nodes.list;
    NodeStatusMap failed;
    auto s = required.filter(pod(), feasible, failed);
    CHECK(s.code() == Code::kError);
    CHECK_THAT(s.message(), Catch::StartsWith("Post \"http://127.0.0.1:1/x/filter\": "));
  }
}

TEST_CASE("extenders: answers without nodes filter every node out, as kube-scheduler reads them",
          "[extender]") {
  FakeExtender server({"/ext/filter"});
  server.answer("/ext/filter", "null");
  HttpExtenders extenders({extenderAt(server.url("/ext"))}, fetching());
  Nodes nodes{"a"};
  std::vector<const NodeInfo*> feasible = nodes.list;
  NodeStatusMap failed;
  REQUIRE(extenders.filter(pod(), feasible, failed).ok());
  CHECK(feasible.empty());
}

TEST_CASE("extenders: prioritize adds score x weight x 10 per extender; failures give nothing",
          "[extender]") {
  FakeExtender server({"/e1/prioritize", "/e2/prioritize", "/e3/prioritize"});
  server.answer("/e1/prioritize", R"([{"Host":"a","Score":10},{"Host":"b","Score":5}])");
  // Lower-case keys as Go reads them, a host never asked about, a score past the maximum.
  server.answer("/e2/prioritize",
                R"([{"host":"b","score":10},{"host":"nope","score":3},{"Host":"c","Score":99}])");
  server.answer("/e3/prioritize", "{}", 503);
  auto e1 = extenderAt(server.url("/e1"));
  e1.filter_verb.clear();
  e1.prioritize_verb = "prioritize";
  e1.weight = 2;
  auto e2 = e1;
  e2.url_prefix = server.url("/e2");
  e2.weight = 3;
  e2.node_cache_capable = true;
  auto e3 = e1;
  e3.url_prefix = server.url("/e3");
  e3.weight = 100;
  std::atomic<int> fetches{0};
  HttpExtenders extenders({e1, e2, e3}, fetching(&fetches));
  Nodes nodes{"a", "b", "c"};
  std::vector<NodeScore> scores = {{"a", 7}, {"b", 0}, {"c", 0}};
  extenders.prioritize(pod(), nodes.list, scores);
  CHECK(scores[0].score == 7 + 10 * 2 * 10);
  CHECK(scores[1].score == 5 * 2 * 10 + 10 * 3 * 10);
  CHECK(scores[2].score == 10 * 3 * 10);  // clamped to MaxExtenderPriority
  CHECK(server.callsTo("/e2/prioritize").at(0).body.at("NodeNames") == json::array{"a", "b", "c"});
  CHECK(server.callsTo("/e1/prioritize").at(0).body.at("Nodes").at("items").as_array().size() == 3);
  // One pod, one fetch: the three calls (and a later cycle of the unchanged pod) share it.
  extenders.prioritize(pod(), nodes.list, scores);
  CHECK(fetches.load() == 1);
  PodInfo changed = pod();
  changed.resource_version = "8";
  extenders.prioritize(changed, nodes.list, scores);
  CHECK(fetches.load() == 2);
}

TEST_CASE("extenders: a binder extender binds with the pod's names and reports its Error",
          "[extender]") {
  FakeExtender server({"/ext/bind"});
  auto e = extenderAt(server.url("/ext"));
  e.filter_verb.clear();
  e.bind_verb = "bind";
  HttpExtenders extenders({e}, fetching());
  const PodInfo p = pod();
  REQUIRE(extenders.bindsPod(p));

  auto bind = [&] {
    std::promise<Status> result;
    extenders.bind(p, "node-1", [&](Status s) { result.set_value(std::move(s)); });
    auto f = result.get_future();
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    return f.get();
  };
  CHECK(bind().ok());
  auto calls = server.callsTo("/ext/bind");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].body == json::value{{"PodName", "web"},
                                     {"PodNamespace", "default"},
                                     {"PodUID", "uid-web"},
                                     {"Node", "node-1"}});
  server.answer("/ext/bind", R"({"Error":"node-1 refused the pod"})");
  auto refused = bind();
  CHECK(refused.code() == Code::kError);
  CHECK(refused.message() == "node-1 refused the pod");
  server.answer("/ext/bind", "{}", 404);
  CHECK_THAT(bind().message(), Catch::StartsWith("Failed bind with extender at URL"));
}

TEST_CASE("extenders: managedResources limit the pods an extender is asked about", "[extender]") {
  FakeExtender server({"/ext/filter", "/ext/bind"});
  auto e = extenderAt(server.url("/ext"));
  e.bind_verb = "bind";
  e.managed_resources = {{"example.com/gpu", false}, {"example.com/fpga", true}};
  HttpExtenders extenders({e}, fetching());
  Nodes nodes{"a"};

  PodInfo plain = pod("plain");
  PodInfo requesting = pod("requesting");
  requesting.requests.setScalar("example.com/gpu", 1);
  PodInfo limiting = pod("limiting");
  limiting.limits.setScalar("example.com/fpga", 2);
  PodInfo other = pod("other");
  other.requests.setScalar("example.com/nic", 1);

  CHECK_FALSE(extenders.interested(0, plain));
  CHECK(extenders.interested(0, requesting));
  CHECK(extenders.interested(0, limiting));
  CHECK_FALSE(extenders.interested(0, other));
  CHECK_FALSE(extenders.bindsPod(plain));
  CHECK(extenders.bindsPod(requesting));

  for (const PodInfo* p : {&plain, &requesting, &limiting, &other}) {
    std::vector<const NodeInfo*> feasible = nodes.list;
    NodeStatusMap failed;
    REQUIRE(extenders.filter(*p, feasible, failed).ok());
  }
  auto calls = server.callsTo("/ext/filter");
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].body.at("Pod").at("metadata").at("name") == "requesting");
  CHECK(calls[1].body.at("Pod").at("metadata").at("name") == "limiting");

  // An extender without managedResources is asked about every pod.
  HttpExtenders all({extenderAt(server.url("/ext"))}, fetching());
  CHECK(all.interested(0, plain));
}

TEST_CASE(
    "extenders: HTTPS with the extender's CA, refused with another CA, unverified "
    "with enableHTTPS and no CA",
    "[extender]") {
  const auto ca = koord::http::generateCA("extender-ca", 24h);
  const auto leaf =
      koord::http::generateServingCert(ca, "extender", {"extender.local"}, {"127.0.0.1"}, 24h);
  koord::http::TlsServerConfig tls;
  tls.cert_pem = leaf.cert_pem;
  tls.key_pem = leaf.key_pem;
  FakeExtender server({"/ext/filter"}, tls);
  server.answer("/ext/filter", R"({"NodeNames":["a"]})");
  Nodes nodes{"a", "b"};
  auto run = [&](const config::Extender& e) {
    HttpExtenders extenders({e}, fetching());
    std::vector<const NodeInfo*> feasible = nodes.list;
    NodeStatusMap failed;
    auto s = extenders.filter(pod(), feasible, failed);
    return std::make_pair(s, feasible.size());
  };
  auto e = extenderAt(server.url("/ext", true));
  e.node_cache_capable = true;
  e.enable_https = true;

  SECTION("the extender's CA in caData: verified") {
    e.tls_config = config::ExtenderTlsConfig{};
    e.tls_config->ca_data = ca.cert_pem;
    auto [s, left] = run(e);
    CHECK(s.ok());
    CHECK(left == 1);
  }
  SECTION("the CA's name checked against serverName") {
    e.tls_config = config::ExtenderTlsConfig{};
    e.tls_config->ca_data = ca.cert_pem;
    e.tls_config->server_name = "someone-else.local";
    auto [s, left] = run(e);
    CHECK(s.code() == Code::kError);
    e.tls_config->server_name = "extender.local";
    CHECK(run(e).first.ok());
  }
  SECTION("another CA: refused") {
    const auto other = koord::http::generateCA("other-ca", 24h);
    e.tls_config = config::ExtenderTlsConfig{};
    e.tls_config->ca_data = other.cert_pem;
    auto [s, left] = run(e);
    CHECK(s.code() == Code::kError);
    CHECK(left == 2);
    CHECK(server.calls().empty());
  }
  SECTION("enableHTTPS without a CA does not verify, as kube-scheduler") {
    auto [s, left] = run(e);
    CHECK(s.ok());
    CHECK(left == 1);
  }
  SECTION("an https URL without enableHTTPS verifies against the system store") {
    e.enable_https = false;
    auto [s, left] = run(e);
    CHECK(s.code() == Code::kError);
  }
  SECTION("a client certificate that does not load is a startup error naming the extender") {
    e.tls_config = config::ExtenderTlsConfig{};
    e.tls_config->cert_data = "not a certificate";
    e.tls_config->key_data = "not a key";
    CHECK_THROWS_WITH(HttpExtenders({e}, fetching()), Catch::StartsWith("extenders[0] (https://"));
  }
}

TEST_CASE("extenders: a call past httpTimeout fails the cycle without waiting for the answer",
          "[extender]") {
  FakeExtender server({"/slow/filter"});
  server.slow_delay = 1s;
  auto e = extenderAt(server.url("/slow"));
  e.http_timeout = 200ms;
  HttpExtenders extenders({e}, fetching());
  Nodes nodes{"a"};
  std::vector<const NodeInfo*> feasible = nodes.list;
  NodeStatusMap failed;
  const auto start = std::chrono::steady_clock::now();
  auto s = extenders.filter(pod(), feasible, failed);
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(s.code() == Code::kError);
  CHECK_THAT(s.message(), Catch::StartsWith("Post \"" + server.url("/slow") + "/filter\": "));
  CHECK(took < 800ms);
  CHECK(took >= 150ms);
}

TEST_CASE(
    "extenders: a pod that cannot be fetched is the call's failure; a Reservation's "
    "stand-in is sent as projected",
    "[extender]") {
  FakeExtender server({"/ext/filter"});
  server.answer("/ext/filter", R"({"Nodes":{"items":[{"metadata":{"name":"a"}}]}})");
  HttpExtendersOptions broken;
  broken.fetch_pod = [](const PodInfo&) -> koord::kube::Expected<json::value> {
    return koord::kube::makeKubeError("pods \"web\" not found");
  };
  HttpExtenders extenders({extenderAt(server.url("/ext"))}, broken);
  Nodes nodes{"a", "b"};
  std::vector<const NodeInfo*> feasible = nodes.list;
  NodeStatusMap failed;
  auto s = extenders.filter(pod(), feasible, failed);
  CHECK(s.code() == Code::kError);
  CHECK(s.message() == "getting pod default/web to send: pods \"web\" not found");
  CHECK(server.calls().empty());

  PodInfo reserve = pod("r1");
  reserve.reserve_pod = true;
  reserve.namespace_.clear();
  reserve.requests.setScalar("example.com/gpu", 1);
  feasible = nodes.list;
  REQUIRE(extenders.filter(reserve, feasible, failed).ok());
  CHECK(names(feasible) == std::vector<std::string>{"a"});
  auto calls = server.callsTo("/ext/filter");
  REQUIRE(calls.size() == 1);
  const json::value& sent = calls[0].body.at("Pod");
  CHECK(sent.at("metadata").at("name") == "r1");
  CHECK(sent.at("metadata").at("labels").at("app") == "r1");
  const json::value& requests =
      sent.at("spec").at("containers").at(0).at("resources").at("requests");
  CHECK(requests.at("cpu") == "500m");
  CHECK(requests.at("example.com/gpu") == "1");
}

namespace {

// A snapshot whose nodes carry the named pods (uid "uid-<name>", priority 1), and preemption
// candidates built from them.
struct Cluster {
  Snapshot snapshot;
  std::map<std::string, std::shared_ptr<const PodInfo>> pods;

  using Layout = std::vector<std::pair<std::string, std::vector<std::string>>>;
  explicit Cluster(const Layout& layout) {
    std::vector<std::shared_ptr<const NodeInfo>> infos;
    for (const auto& [name, pod_names] : layout) {
      auto node = std::make_shared<Node>();
      node->name = name;
      node->allocatable.milli_cpu = 4000;
      auto info = std::make_shared<NodeInfo>();
      info->node = node;
      for (const auto& pod_name : pod_names) {
        auto p = std::make_shared<PodInfo>(pod(pod_name));
        p->node_name = name;
        p->priority = 1;
        pods[pod_name] = p;
        info->addPod(p);
      }
      infos.push_back(info);
    }
    snapshot = Snapshot(std::move(infos));
  }
  PreemptionCandidate candidate(const std::string& node, const std::vector<std::string>& victims,
                                std::int64_t pdb = 0) const {
    PreemptionCandidate c{node, {}, pdb};
    for (const auto& v : victims)
      c.victims.push_back(pods.at(v));
    return c;
  }
};

// "node: victim,victim (pdb n)" per candidate, in order.
std::vector<std::string> describe(const std::vector<PreemptionCandidate>& candidates) {
  std::vector<std::string> out;
  for (const auto& c : candidates) {
    std::string line = c.node + ":";
    for (std::size_t i = 0; i < c.victims.size(); ++i)
      line += (i == 0 ? " " : ",") + c.victims[i]->name;
    if (c.num_pdb_violations != 0)
      line += " (pdb " + std::to_string(c.num_pdb_violations) + ")";
    out.push_back(line);
  }
  return out;
}

config::Extender preempterAt(const std::string& url) {
  config::Extender e = extenderAt(url);
  e.filter_verb.clear();
  e.preempt_verb = "preempt";
  return e;
}

}  // namespace

TEST_CASE("extenders: preempt narrows the candidates to the extender's nodes and victims",
          "[extender][preempt]") {
  FakeExtender server({"/ext/preempt"});
  // Another order than the candidates', a victim dropped, a PDB count past the victims.
  server.answer("/ext/preempt", R"({"NodeNameToMetaVictims":{)"
                                R"("c":{"Pods":[{"UID":"uid-vc1"}],"NumPDBViolations":5},)"
                                R"("a":{"Pods":[{"UID":"uid-va2"}],"NumPDBViolations":0}}})");
  HttpExtenders extenders({preempterAt(server.url("/ext"))}, fetching());
  Cluster cluster({{"a", {"va1", "va2"}}, {"b", {"vb1"}}, {"c", {"vc1"}}});
  std::vector<PreemptionCandidate> candidates = {cluster.candidate("a", {"va1", "va2"}),
                                                 cluster.candidate("b", {"vb1"}),
                                                 cluster.candidate("c", {"vc1"}, 1)};
  const PodInfo preemptor = pod("high");
  REQUIRE(extenders.preemptsFor(preemptor));
  const Status s = extenders.processPreemption(preemptor, cluster.snapshot, candidates);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(describe(candidates) == std::vector<std::string>{"a: va2", "c: vc1 (pdb 1)"});
  // The victims are the snapshot's own pods, not copies.
  CHECK(candidates[0].victims[0] == cluster.pods.at("va2"));

  // ExtenderPreemptionArgs: the API's pod, whole victims rebuilt from their projection.
  auto calls = server.callsTo("/ext/preempt");
  REQUIRE(calls.size() == 1);
  const json::object& body = calls[0].body.as_object();
  CHECK(body.at("Pod").at("metadata").at("annotations").at("from") == "api-server");
  CHECK(body.at("NodeNameToMetaVictims").is_null());
  const json::object& victims = body.at("NodeNameToVictims").as_object();
  REQUIRE(victims.size() == 3);
  const json::array& on_a = victims.at("a").at("Pods").as_array();
  REQUIRE(on_a.size() == 2);
  CHECK(on_a[1].at("metadata").at("uid") == "uid-va2");
  CHECK(on_a[1].at("metadata").at("name") == "va2");
  CHECK(on_a[1].at("spec").at("nodeName") == "a");
  CHECK(on_a[1].at("spec").at("priority").as_int64() == 1);
  CHECK(victims.at("a").at("NumPDBViolations").as_int64() == 0);
  CHECK(victims.at("c").at("NumPDBViolations").as_int64() == 1);
}

TEST_CASE(
    "extenders: a node-caching extender is sent victims' UIDs and may answer in any case, "
    "with nodes of the snapshot that were no candidates",
    "[extender][preempt]") {
  FakeExtender server({"/ext/preempt"});
  server.answer("/ext/preempt",
                R"({"nodeNameToMetaVictims":{"d":{"pods":[{"uid":"uid-vd1"}]},)"
                R"("b":{"pods":[{"uid":"uid-vb2"},{"uid":"uid-vb1"},{"uid":"uid-vb2"}],)"
                R"("numPDBViolations":1}}})");
  auto e = preempterAt(server.url("/ext"));
  e.node_cache_capable = true;
  HttpExtenders extenders({e}, fetching());
  Cluster cluster({{"a", {"va1"}}, {"b", {"vb1", "vb2"}}, {"d", {"vd1"}}});
  std::vector<PreemptionCandidate> candidates = {cluster.candidate("a", {"va1"}),
                                                 cluster.candidate("b", {"vb1", "vb2"}, 2)};
  REQUIRE(extenders.processPreemption(pod("high"), cluster.snapshot, candidates).ok());
  // The candidates' order first, then what the answer added; a UID named twice counts once.
  CHECK(describe(candidates) == std::vector<std::string>{"b: vb2,vb1 (pdb 1)", "d: vd1"});

  auto calls = server.callsTo("/ext/preempt");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].body.at("NodeNameToVictims").is_null());
  const json::value want =
      json::parse(R"({"a":{"Pods":[{"UID":"uid-va1"}],"NumPDBViolations":0},)"
                  R"("b":{"Pods":[{"UID":"uid-vb1"},{"UID":"uid-vb2"}],"NumPDBViolations":2}})");
  CHECK(calls[0].body.at("NodeNameToMetaVictims") == want);
}

TEST_CASE(
    "extenders: a preempt answer naming an unknown node or pod is the extender's error; a "
    "required one's fails preemption, an ignorable one's keeps the candidates",
    "[extender][preempt]") {
  FakeExtender server({"/req/preempt", "/ign/preempt"});
  Cluster cluster({{"a", {"va1"}}, {"b", {"vb1"}}});
  const std::vector<PreemptionCandidate> sent = {cluster.candidate("a", {"va1"}),
                                                 cluster.candidate("b", {"vb1"})};
  struct Row {
    int status;
    std::string body;
    std::string error;  // "{url}" for the required extender's URL
  };
  const Row rows[] = {
      {200, R"({"NodeNameToMetaVictims":{"zz":{"Pods":[]}}})",
       "nodeinfo not found for node name \"zz\""},
      // A pod of the snapshot, but on another node.
      {200, R"({"NodeNameToMetaVictims":{"a":{"Pods":[{"UID":"uid-vb1"}]}}})",
       "extender: {url} claims to preempt pod (UID: uid-vb1) on node: a, but the pod is not "
       "found on that node"},
      {200, R"({"NodeNameToMetaVictims":{"a":{"Pods":[{}]}}})",
       "extender: {url} claims to preempt pod (UID: ) on node: a"},
      {500, "{}", "Failed preempt with extender at URL {url}/preempt, code 500"},
      {200,
       R"({"NodeNameToMetaVictims":{"a":{"Pods":[{"UID":"uid-va1"}],)"
       R"("NumPDBViolations":"1"}}})",
       "malformed answer: NodeNameToMetaVictims.a.NumPDBViolations: expected integer"},
      {200, R"({"NodeNameToMetaVictims":["a"]})",
       "malformed answer: NodeNameToMetaVictims: expected object, got array"},
      {200, R"({"NodeNameToMetaVictims":)", "malformed answer: "},
  };
  for (const Row& row : rows) {
    CAPTURE(row.body, row.status);
    server.answer("/req/preempt", row.body, row.status);
    server.answer("/ign/preempt", row.body, row.status);
    const std::string req_url = server.url("/req");
    std::string want = row.error;
    for (auto at = want.find("{url}"); at != std::string::npos; at = want.find("{url}"))
      want.replace(at, 5, req_url);

    auto ignorable = preempterAt(server.url("/ign"));
    ignorable.ignorable = true;
    HttpExtenders skip({ignorable}, fetching());
    std::vector<PreemptionCandidate> candidates = sent;
    REQUIRE(skip.processPreemption(pod("high"), cluster.snapshot, candidates).ok());
    CHECK(describe(candidates) == describe(sent));

    HttpExtenders required({preempterAt(req_url)}, fetching());
    candidates = sent;
    const Status s = required.processPreemption(pod("high"), cluster.snapshot, candidates);
    CHECK(s.code() == Code::kError);
    CHECK_THAT(s.message(), Catch::StartsWith(want));
  }
}

TEST_CASE(
    "extenders: preempt extenders narrow in turn, past an ignorable failure, until one "
    "leaves no candidate",
    "[extender][preempt]") {
  FakeExtender server({"/ign/preempt", "/e1/preempt", "/e2/preempt", "/e3/preempt"});
  server.answer("/ign/preempt", "{}", 503);
  server.answer("/e1/preempt", R"({"NodeNameToMetaVictims":{"a":{"Pods":[{"UID":"uid-va1"}]},)"
                               R"("b":{"Pods":[{"UID":"uid-vb1"}]}}})");
  server.answer("/e2/preempt", R"({"NodeNameToMetaVictims":{}})");
  auto ignorable = preempterAt(server.url("/ign"));
  ignorable.ignorable = true;
  auto e1 = preempterAt(server.url("/e1"));
  e1.node_cache_capable = true;
  auto e2 = preempterAt(server.url("/e2"));
  auto e3 = preempterAt(server.url("/e3"));
  HttpExtenders extenders({ignorable, e1, e2, e3}, fetching());
  Cluster cluster({{"a", {"va1"}}, {"b", {"vb1"}}, {"c", {"vc1"}}});
  std::vector<PreemptionCandidate> candidates = {cluster.candidate("a", {"va1"}),
                                                 cluster.candidate("b", {"vb1"}),
                                                 cluster.candidate("c", {"vc1"})};
  REQUIRE(extenders.processPreemption(pod("high"), cluster.snapshot, candidates).ok());
  CHECK(candidates.empty());
  CHECK(server.callsTo("/ign/preempt").size() == 1);
  // e2 got what e1 left; e3 is not asked once nothing is left.
  auto second = server.callsTo("/e2/preempt");
  REQUIRE(second.size() == 1);
  CHECK(second[0].body.at("NodeNameToVictims").as_object().size() == 2);
  CHECK(server.callsTo("/e3/preempt").empty());
}

TEST_CASE(
    "extenders: preemption asks only the interested extenders with a preempt verb; with "
    "none the candidates stay",
    "[extender][preempt]") {
  FakeExtender server({"/gpu/preempt", "/filter/filter", "/filter/preempt"});
  server.answer("/gpu/preempt", R"({"NodeNameToMetaVictims":{}})");
  auto gpu = preempterAt(server.url("/gpu"));
  gpu.managed_resources = {{"example.com/gpu", false}};
  auto filter_only = extenderAt(server.url("/filter"));
  HttpExtenders extenders({gpu, filter_only}, fetching());
  Cluster cluster(Cluster::Layout{{"a", {"va1"}}});
  const std::vector<PreemptionCandidate> sent = {cluster.candidate("a", {"va1"})};

  const PodInfo plain = pod("plain");
  CHECK_FALSE(extenders.preemptsFor(plain));
  std::vector<PreemptionCandidate> candidates = sent;
  REQUIRE(extenders.processPreemption(plain, cluster.snapshot, candidates).ok());
  CHECK(describe(candidates) == describe(sent));
  CHECK(server.calls().empty());

  PodInfo gpu_pod = pod("trainer");
  gpu_pod.requests.setScalar("example.com/gpu", 1);
  CHECK(extenders.preemptsFor(gpu_pod));
  REQUIRE(extenders.processPreemption(gpu_pod, cluster.snapshot, candidates).ok());
  CHECK(candidates.empty());
  CHECK(server.callsTo("/gpu/preempt").size() == 1);
  CHECK(server.callsTo("/filter/preempt").empty());
}
