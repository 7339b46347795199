// Informer benchmark: list+watch of many pods and nodes in a real apiserver, koord's informer
// (whole JSON documents, and a scheduler-style typed projection) side by side with client-go's.
//
//   koord_bench_informer populate [--pods N] [--nodes M]   create the objects (idempotent)
//   koord_bench_informer measure --mode json|text|typed      one measurement, one JSON line
//   koord_bench_informer compare [--peer PATH]               populate, measure both modes and
//                                                            the peer, print a table
// The cluster comes from $KOORD_CLUSTER_ENV (tests/cluster/cluster.sh's env file).
#include <fmt/format.h>
#include <boost/json.hpp>

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "koord/kube/decode.h"
#include "koord/kube/informer.h"
#include "koord/kube/json_document.h"
#include "koord/kube/rest_client.h"
#include "subprocess.h"

namespace json = boost::json;
using namespace koord::kube;
using namespace std::chrono_literals;

namespace {

constexpr const char* kNamespace = "koord-bench";
const ResourceRef kPods{"", "v1", "pods", "", "", ""};
const ResourceRef kNodes{"", "v1", "nodes", "", "", ""};

[[noreturn]] void die(const std::string& msg) {
  std::cerr << "koord_bench_informer: " << msg << "\n";
  std::exit(1);
}

std::map<std::string, std::string> clusterEnv() {
  const char* path = std::getenv("KOORD_CLUSTER_ENV");
  if (path == nullptr)
    die("KOORD_CLUSTER_ENV is not set (the env file of tests/cluster/cluster.sh up)");
  std::ifstream in(path);
  if (!in)
    die(std::string("cannot read ") + path);
  std::map<std::string, std::string> env;
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq != std::string::npos && !line.empty() && line[0] != '#')
      env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

RestConfig restConfig() {
  auto env = clusterEnv();
  RestConfig c;
  c.host = env["KOORD_APISERVER"];
  c.ca_file = env["KOORD_CA_FILE"];
  c.bearer_token = env["KOORD_TOKEN"];
  c.qps = 0;  // unthrottled, as the peer is (its --qps/--burst default high)
  c.timeout = 120s;
  if (c.host.empty())
    die("the env file has no KOORD_APISERVER");
  return c;
}

class Api {
 public:
  explicit Api(RestConfig config, int threads = 1) : guard_(boost::asio::make_work_guard(io)) {
    client_ = std::make_unique<RestClient>(io, std::move(config));
    for (int i = 0; i < threads; ++i)
      threads_.emplace_back([this] { io.run(); });
  }
  ~Api() {
    client_.reset();
    guard_.reset();
    io.stop();
    for (auto& t : threads_)
      t.join();
  }
  RestClient& operator*() { return *client_; }
  RestClient* operator->() { return client_.get(); }
  boost::asio::io_context io;

 private:
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::vector<std::thread> threads_;
  std::unique_ptr<RestClient> client_;
};

// ---- the objects: a two-container Deployment-style pod (~3 KB of JSON) and a kubelet-style node

json::value benchPod(int i) {
  const std::string name = fmt::format("bench-pod-{:05d}", i);
  const std::string app = fmt::format("app-{:03d}", i % 100);
  auto container = [&](const std::string& cname, const std::string& image, int port) {
    return json::object{
        {"name", cname},
        {"image", image},
        {"imagePullPolicy", "IfNotPresent"},
        {"ports", json::array{{{"name", "http"}, {"containerPort", port}, {"protocol", "TCP"}}}},
        {"env",
         json::array{{{"name", "APP_NAME"}, {"value", app}},
                     {{"name", "LOG_LEVEL"}, {"value", "info"}},
                     {{"name", "POD_NAME"},
                      {"valueFrom",
                       {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", "metadata.name"}}}}}}}},
        {"resources",
         {{"requests", {{"cpu", "250m"}, {"memory", "256Mi"}}},
          {"limits", {{"cpu", "500m"}, {"memory", "512Mi"}}}}},
        {"readinessProbe",
         {{"httpGet", {{"path", "/readyz"}, {"port", port}, {"scheme", "HTTP"}}},
          {"periodSeconds", 10},
          {"timeoutSeconds", 1},
          {"successThreshold", 1},
          {"failureThreshold", 3}}},
        {"livenessProbe",
         {{"httpGet", {{"path", "/healthz"}, {"port", port}, {"scheme", "HTTP"}}},
          {"initialDelaySeconds", 15},
          {"periodSeconds", 20},
          {"timeoutSeconds", 1},
          {"successThreshold", 1},
          {"failureThreshold", 3}}},
        {"volumeMounts", json::array{{{"name", "config"}, {"mountPath", "/etc/app"}},
                                     {{"name", "data"}, {"mountPath", "/var/lib/app"}}}},
        {"terminationMessagePath", "/dev/termination-log"},
        {"terminationMessagePolicy", "File"}};
  };
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", kNamespace},
        {"labels", {{"app", app}, {"pod-template-hash", "5d4f8c7b9"}, {"tier", "backend"}}},
        {"annotations", {{"koordinator.sh/qosClass", "LS"}, {"prometheus.io/scrape", "true"}}}}},
      {"spec",
       {{"containers", json::array{container("app", "registry.example/app:1.4.2", 8080),
                                   container("sidecar", "registry.example/proxy:2.0.1", 15000)}},
        {"volumes", json::array{{{"name", "config"}, {"configMap", {{"name", app + "-config"}}}},
                                {{"name", "data"}, {"emptyDir", json::object{}}}}},
        {"restartPolicy", "Always"},
        {"terminationGracePeriodSeconds", 30},
        {"dnsPolicy", "ClusterFirst"},
        {"schedulerName", "koord-scheduler"},
        {"nodeSelector", {{"kubernetes.io/os", "linux"}}},
        {"tolerations", json::array{{{"key", "node.kubernetes.io/not-ready"},
                                     {"operator", "Exists"},
                                     {"effect", "NoExecute"},
                                     {"tolerationSeconds", 300}}}}}}};
}

json::value benchNode(int i) {
  const std::string name = fmt::format("bench-node-{:04d}", i);
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"labels",
         {{"kubernetes.io/hostname", name},
          {"kubernetes.io/os", "linux"},
          {"kubernetes.io/arch", "amd64"},
          {"topology.kubernetes.io/zone", fmt::format("zone-{}", i % 3)},
          {"node.kubernetes.io/instance-type", "bench.large"}}}}},
      {"spec", {{"podCIDR", fmt::format("10.{}.{}.0/24", 100 + i / 256, i % 256)}}},
      {"status",
       {{"capacity",
         {{"cpu", "32"}, {"memory", "131072Mi"}, {"pods", "110"}, {"ephemeral-storage", "500Gi"}}},
        {"allocatable",
         {{"cpu", "31500m"},
          {"memory", "129024Mi"},
          {"pods", "110"},
          {"ephemeral-storage", "450Gi"}}},
        {"addresses", json::array{{{"type", "InternalIP"},
                                   {"address", fmt::format("10.0.{}.{}", i / 256, i % 256)}},
                                  {{"type", "Hostname"}, {"address", name}}}},
        {"nodeInfo",
         {{"machineID", fmt::format("{:032x}", i)},
          {"systemUUID", fmt::format("{:032x}", i + 1)},
          {"bootID", fmt::format("{:032x}", i + 2)},
          {"kernelVersion", "6.1.0-bench"},
          {"osImage", "Debian GNU/Linux 12 (bookworm)"},
          {"containerRuntimeVersion", "containerd://1.6.20"},
          {"kubeletVersion", "v1.20.2"},
          {"kubeProxyVersion", "v1.20.2"},
          {"operatingSystem", "linux"},
          {"architecture", "amd64"}}}}}};
}

// ---- populate ----------------------------------------------------------------------------------

std::int64_t countObjects(RestClient& c, const ResourceRef& ref, const std::string& selector) {
  ListOptions o;
  o.label_selector = selector;
  o.limit = 1;
  auto r = c.listSync(ref, o);
  if (!r)
    die("list " + resourcePath(ref) + ": " + r.error().message);
  const auto& md = r->at("metadata").as_object();
  std::int64_t n = static_cast<std::int64_t>(r->at("items").as_array().size());
  if (const auto* rest = md.if_contains("remainingItemCount"); rest && rest->is_int64())
    n += rest->as_int64();
  return n;
}

// Creates objects 0..n-1 with at most `window` requests in flight; AlreadyExists counts as done.
void createAll(Api& api, const ResourceRef& ref, int n, json::value (*make)(int)) {
  constexpr int window = 64;
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0, failed = 0;
  std::string first_error;
  for (int i = 0; i < n; ++i) {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return in_flight < window; });
      ++in_flight;
    }
    api->create(ref, make(i), [&](ApiResult<json::value> r) {
      std::lock_guard lock(mu);
      --in_flight;
      if (!r && !isAlreadyExists(r.error())) {
        if (failed++ == 0)
          first_error = r.error().message;
      }
      cv.notify_all();
    });
  }
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return in_flight == 0; });
  if (failed > 0)
    die(fmt::format("{} creates of {} failed; first: {}", failed, resourcePath(ref), first_error));
}

void populate(int pods, int nodes) {
  Api api(restConfig(), 2);
  ResourceRef ns{"", "v1", "namespaces", "", "", ""};
  auto r = api->createSync(
      ns, json::object{
              {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNamespace}}}});
  if (!r && !isAlreadyExists(r.error()))
    die("create namespace: " + r.error().message);
  auto t0 = std::chrono::steady_clock::now();
  // No selector: the apiserver gives remainingItemCount only for unfiltered lists, and the
  // bench cluster holds nothing else.
  if (countObjects(*api, kNodes, "") < nodes)
    createAll(api, kNodes, nodes, benchNode);
  ResourceRef pods_ref = kPods;
  pods_ref.namespace_ = kNamespace;
  if (countObjects(*api, pods_ref, "") < pods)
    createAll(api, pods_ref, pods, benchPod);
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  std::cerr << fmt::format("populated {} pods and {} nodes in {:.1f} s\n", pods, nodes,
                           took.count());
}

// ---- measure -----------------------------------------------------------------------------------

// What a scheduler keeps of a pod and a node.
struct BenchPodInfo {
  std::string namespace_, name, uid, node_name, scheduler_name, phase;
  Labels labels;
  ResourceList requests;  // summed over containers
  std::int32_t priority = 0;
};

struct BenchNodeInfo {
  std::string name;
  Labels labels;
  ResourceList allocatable;
  std::vector<Taint> taints;
  bool unschedulable = false;
};

const json::value* at(const json::value& v, std::initializer_list<const char*> path) {
  const json::value* cur = &v;
  for (const char* k : path) {
    const auto* o = cur->if_object();
    cur = o != nullptr ? o->if_contains(k) : nullptr;
    if (cur == nullptr)
      return nullptr;
  }
  return cur;
}

std::string text(const json::value& v, std::initializer_list<const char*> path) {
  const auto* p = at(v, path);
  return p != nullptr && p->is_string() ? std::string(p->get_string()) : std::string();
}

Expected<BenchPodInfo> projectPod(const json::value& v) {
  BenchPodInfo p;
  p.namespace_ = text(v, {"metadata", "namespace"});
  p.name = text(v, {"metadata", "name"});
  p.uid = text(v, {"metadata", "uid"});
  p.node_name = text(v, {"spec", "nodeName"});
  p.scheduler_name = text(v, {"spec", "schedulerName"});
  p.phase = text(v, {"status", "phase"});
  if (const auto* l = at(v, {"metadata", "labels"})) {
    auto labels = decodeStringMap(*l);
    if (!labels)
      return labels.error();
    p.labels = std::move(*labels);
  }
  if (const auto* prio = at(v, {"spec", "priority"}); prio && prio->is_int64())
    p.priority = static_cast<std::int32_t>(prio->get_int64());
  if (const auto* cs = at(v, {"spec", "containers"}); cs && cs->is_array()) {
    for (const auto& c : cs->get_array()) {
      const auto* req = at(c, {"resources", "requests"});
      if (req == nullptr)
        continue;
      auto list = decodeResourceList(*req, "spec.containers[].resources.requests");
      if (!list)
        return list.error();
      for (auto& [name, q] : *list) {
        auto [it, fresh] = p.requests.try_emplace(name, q);
        if (!fresh)
          it->second = Quantity::fromMilli(it->second.milliValue() + q.milliValue());
      }
    }
  }
  return p;
}

Expected<BenchNodeInfo> projectNode(const json::value& v) {
  BenchNodeInfo n;
  n.name = text(v, {"metadata", "name"});
  if (const auto* l = at(v, {"metadata", "labels"})) {
    auto labels = decodeStringMap(*l);
    if (!labels)
      return labels.error();
    n.labels = std::move(*labels);
  }
  if (const auto* a = at(v, {"status", "allocatable"})) {
    auto list = decodeResourceList(*a, "status.allocatable");
    if (!list)
      return list.error();
    n.allocatable = std::move(*list);
  }
  if (const auto* t = at(v, {"spec", "taints"})) {
    auto taints = decodeTaints(*t);
    if (!taints)
      return taints.error();
    n.taints = std::move(*taints);
  }
  if (const auto* u = at(v, {"spec", "unschedulable"}); u && u->is_bool())
    n.unschedulable = u->get_bool();
  return n;
}

std::size_t heapInUse() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

std::int64_t statusKiB(const char* key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) == 0)
      return std::stoll(line.substr(std::string(key).size()));
  }
  return 0;
}

double cpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return sec(ru.ru_utime) + sec(ru.ru_stime);
}

template <typename Pod, typename Node>
void measureWith(const std::string& mode, Projection<Pod> pod_projection,
                 Projection<Node> node_projection) {
  Api api(restConfig(), 1);
  malloc_trim(0);
  const std::size_t heap_before = heapInUse();
  const double cpu_before = cpuSeconds();
  auto t0 = std::chrono::steady_clock::now();
  Informer<Pod> pods(*api, api.io, kPods, std::move(pod_projection));
  Informer<Node> nodes(*api, api.io, kNodes, std::move(node_projection));
  pods.start();
  nodes.start();
  if (!pods.waitForSync(300s) || !nodes.waitForSync(300s))
    die("informers did not sync in 300 s");
  std::chrono::duration<double> sync = std::chrono::steady_clock::now() - t0;
  const double cpu = cpuSeconds() - cpu_before;
  // hasSynced turns true inside the list's callback, while the decoded list is still alive;
  // a handler posted now runs (the io_context has one thread) only after it is freed.
  std::promise<void> drained;
  boost::asio::post(api.io, [&drained] { drained.set_value(); });
  drained.get_future().wait();
  malloc_trim(0);
  const std::size_t heap_after = heapInUse();
  const auto objects = pods.store().size() + nodes.store().size();
  const double per_object = objects ? static_cast<double>(heap_after - heap_before) / objects : 0;
  json::object out{{"peer", "koord"},
                   {"mode", mode},
                   {"objects", objects},
                   {"pods", pods.store().size()},
                   {"nodes", nodes.store().size()},
                   {"sync_seconds", sync.count()},
                   {"objects_per_second", objects / sync.count()},
                   {"heap_bytes", heap_after - heap_before},
                   {"heap_bytes_per_object", per_object},
                   {"rss_peak_bytes", statusKiB("VmHWM:") * 1024},
                   {"rss_bytes", statusKiB("VmRSS:") * 1024},
                   {"cpu_seconds", cpu}};
  std::cout << json::serialize(out) << std::endl;
  pods.stop();
  nodes.stop();
  if (std::getenv("KOORD_BENCH_DEBUG") != nullptr) {
    malloc_trim(0);
    std::cerr << fmt::format("heap: before {} after-sync {} after-stop {}\n", heap_before,
                             heap_after, heapInUse());
    malloc_stats();
  }
}

void measure(const std::string& mode) {
  if (mode == "json") {
    measureWith<json::value, json::value>(mode, wholeDocument, wholeDocument);
  } else if (mode == "text") {
    measureWith<std::string, std::string>(mode, wholeDocumentText, wholeDocumentText);
  } else if (mode == "typed") {
    measureWith<BenchPodInfo, BenchNodeInfo>(mode, projectPod, projectNode);
  } else {
    die("--mode must be json, text or typed");
  }
}

// ---- compare -----------------------------------------------------------------------------------

std::optional<json::object> runJsonLine(std::vector<std::string> argv) {
  auto r = koord::testing::run(argv, {}, 600s);
  if (r.exit_code != 0) {
    std::cerr << argv[0] << " failed (" << r.exit_code << "): " << r.err << "\n";
    return std::nullopt;
  }
  std::istringstream lines(r.out);
  std::optional<json::object> last;
  for (std::string line; std::getline(lines, line);) {
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (!ec && v.is_object())
      last = v.as_object();
  }
  if (!last)
    std::cerr << argv[0] << " printed no JSON line: " << r.out << "\n";
  return last;
}

double num(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr)
    return 0;
  if (v->is_double())
    return v->get_double();
  if (v->is_int64())
    return static_cast<double>(v->get_int64());
  if (v->is_uint64())
    return static_cast<double>(v->get_uint64());
  return 0;
}

void compare(const std::string& self, const std::string& peer, int pods, int nodes, int rounds) {
  populate(pods, nodes);
  struct Row {
    std::string label;
    std::vector<std::string> argv;
  };
  std::vector<Row> rows;
  if (!peer.empty()) {
    auto kubeconfig = clusterEnv()["KOORD_KUBECONFIG"];
    rows.push_back({"client-go v1.20.2 (typed Go structs)", {peer, "--kubeconfig", kubeconfig}});
  }
  rows.push_back({"koord (whole documents, JSON DOM)", {self, "measure", "--mode", "json"}});
  rows.push_back({"koord (whole documents, JSON text)", {self, "measure", "--mode", "text"}});
  rows.push_back({"koord (typed projection)", {self, "measure", "--mode", "typed"}});
  std::cout << fmt::format("informer list+watch sync: {} pods + {} nodes, best of {} runs\n", pods,
                           nodes, rounds);
  std::cout << fmt::format("{:<38} {:>8} {:>10} {:>12} {:>10} {:>9} {:>7}\n", "", "sync s",
                           "objects/s", "bytes/object", "heap MiB", "peak RSS", "CPU s");
  for (const auto& row : rows) {
    std::optional<json::object> best;
    for (int i = 0; i < rounds; ++i) {
      auto r = runJsonLine(row.argv);
      if (r && (!best || num(*r, "sync_seconds") < num(*best, "sync_seconds")))
        best = r;
    }
    if (!best) {
      std::cout << fmt::format("{:<38} failed\n", row.label);
      continue;
    }
    std::cout << fmt::format("{:<38} {:>8.2f} {:>10.0f} {:>12.0f} {:>10.1f} {:>9.0f} {:>7.2f}\n",
                             row.label, num(*best, "sync_seconds"),
                             num(*best, "objects_per_second"), num(*best, "heap_bytes_per_object"),
                             num(*best, "heap_bytes") / (1 << 20),
                             num(*best, "rss_peak_bytes") / (1 << 20), num(*best, "cpu_seconds"));
    std::cout << "  " << json::serialize(*best) << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty())
    die("usage: populate|measure|compare [--pods N] [--nodes M] [--mode json|text|typed] [--peer "
        "P] [--rounds R]");
  int pods = 10000, nodes = 1000, rounds = 1;
  std::string mode, peer;
  for (std::size_t i = 1; i < args.size(); ++i) {
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size())
        die("missing value for " + args[i]);
      return args[++i];
    };
    if (args[i] == "--pods")
      pods = std::stoi(value());
    else if (args[i] == "--nodes")
      nodes = std::stoi(value());
    else if (args[i] == "--mode")
      mode = value();
    else if (args[i] == "--peer")
      peer = value();
    else if (args[i] == "--rounds")
      rounds = std::stoi(value());
    else
      die("unknown argument " + args[i]);
  }
  if (args[0] == "populate")
    populate(pods, nodes);
  else if (args[0] == "measure")
    measure(mode);
  else if (args[0] == "compare")
    compare(argv[0], peer, pods, nodes, rounds);
  else
    die("unknown command " + args[0]);
  return 0;
}
