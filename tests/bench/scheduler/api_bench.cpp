// Scheduler API benchmark driver: creates nodes and pods through a real kube-apiserver and times
// how fast a running scheduler (kube-scheduler or koord's) binds them, with its CPU and peak RSS.
//
//   koord_bench_scheduler_api --kubeconfig K --nodes N --pods M --scheduler-name S
//       (--scheduler-pid PID | --binder-only) [--namespace NS] [--qps 5000] [--inflight 8]
//       [--timeout SECONDS] [--ready-timeout SECONDS] [--settle SECONDS]
//       [--control-plane-pids PID,PID] [--reservations N [--reservations-by scheduler|driver]]
//       [--keep]
//   koord_bench_scheduler_api --kubeconfig K --cleanup-only
//
// --binder-only binds every pod itself, round-robin, with no scheduling logic: the apiserver's
// bind ceiling on this machine, the most any scheduler could reach here. --reservations N
// creates N Reservations (one per nodes/N nodes) after the probe pod and has them Available
// before the first pod (api_reservations.h); half the pods are owners of one. --keep leaves the
// run's objects in place (run.sh restarts the scheduler against them), --cleanup-only removes
// them. Run by run.sh, which starts and stops the scheduler; prints one `result ...` line,
// exits non-zero on a bad placement.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "api_common.h"
#include "api_reservations.h"
#include "bench_stats.h"
#include "koord/kube/decode.h"
#include "koord/kube/informer.h"
#include "koord/kube/kubeconfig.h"
#include "koord/kube/quantity.h"
#include "koord/kube/rest_client.h"

namespace json = boost::json;
using namespace koord::kube;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using koord::bench::percentile;
using namespace koord::bench::scheduler_api;

namespace {

constexpr std::int64_t kNodeCpuMilli = 4000;
constexpr std::int64_t kNodeMemory = 32LL << 30;
constexpr std::int64_t kNodePods = 110;

struct Options {
  std::string kubeconfig;
  int nodes = 0;
  int pods = 0;
  std::string scheduler_name;
  int scheduler_pid = 0;
  bool binder_only = false;
  std::string ns = "koord-bench-sched";
  double qps = 5000;
  // The RestClient keeps 8 idle keep-alive connections per host; more requests in flight than
  // that would open a new TLS connection for each extra one and measure handshakes instead.
  int inflight = 8;
  double timeout_s = 0;  // 0: scaled with the pod count
  double ready_timeout_s = 120;
  // The scheduler learns of the nodes through its watch; without a pause the first pods could be
  // placed before it has seen them all, which skews the spread, not the validity.
  double settle_s = 2;
  // The apiserver and etcd: their CPU over the same window says how much of the machine the
  // scheduler's API traffic cost on the other side.
  std::vector<int> control_plane_pids;
  int reservations = 0;
  Availability availability = Availability::kScheduled;
  bool keep = false;
  bool cleanup_only = false;
};

// The pod mix: identical for every scheduler, varied so that a node's fit is not a plain count.
struct Request {
  const char* cpu;
  const char* memory;
};
constexpr Request kMix[] = {{"100m", "128Mi"}, {"250m", "512Mi"}, {"500m", "1Gi"}, {"50m", "64Mi"}};

// What the driver keeps of a pod: enough to time its binding and check the node's fit.
struct BenchPod {
  std::string name;
  std::string node;
  std::int64_t cpu_milli = 0;
  std::int64_t memory = 0;
  /// The reservation its reservation-allocated annotation names ("" for none).
  std::string reservation;
};

Expected<BenchPod> projectPod(const json::value& v) {
  BenchPod p;
  const auto& o = v.as_object();
  if (const auto* md = o.if_contains("metadata"); md && md->is_object()) {
    if (const auto* n = md->get_object().if_contains("name"); n && n->is_string())
      p.name = std::string(n->get_string());
    const auto* ann = md->get_object().if_contains("annotations");
    const auto* alloc =
        ann && ann->is_object()
            ? ann->get_object().if_contains("scheduling.koordinator.sh/reservation-allocated")
            : nullptr;
    if (alloc != nullptr && alloc->is_string()) {
      // {"name":..., "uid":...}; a value that is not that JSON reads as no reservation.
      boost::system::error_code ec;
      auto parsed = json::parse(alloc->get_string(), ec);
      if (!ec && parsed.is_object()) {
        if (const auto* rn = parsed.get_object().if_contains("name"); rn && rn->is_string())
          p.reservation = std::string(rn->get_string());
      }
    }
  }
  const auto* spec = o.if_contains("spec");
  if (spec == nullptr || !spec->is_object())
    return p;
  if (const auto* n = spec->get_object().if_contains("nodeName"); n && n->is_string())
    p.node = std::string(n->get_string());
  if (const auto* cs = spec->get_object().if_contains("containers"); cs && cs->is_array()) {
    for (const auto& c : cs->get_array()) {
      const auto* res = c.is_object() ? c.get_object().if_contains("resources") : nullptr;
      const auto* req =
          res && res->is_object() ? res->get_object().if_contains("requests") : nullptr;
      if (req == nullptr)
        continue;
      auto list = decodeResourceList(*req, "spec.containers[].resources.requests");
      if (!list)
        return list.error();
      if (auto it = list->find("cpu"); it != list->end())
        p.cpu_milli += it->second.milliValue();
      if (auto it = list->find("memory"); it != list->end())
        p.memory += it->second.value();
    }
  }
  return p;
}

// user+system CPU of a process in seconds, from /proc/PID/stat; -1 when it is gone.
double processCpuSeconds(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat))
    return -1;
  // The command name may hold spaces and parentheses; fields count from after its last ')'.
  auto close = stat.rfind(')');
  if (close == std::string::npos)
    return -1;
  std::istringstream rest(stat.substr(close + 2));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;)
    fields.push_back(f);
  if (fields.size() < 13)
    return -1;
  // utime and stime are fields 14 and 15 of stat(5); the state (field 3) is fields[0] here.
  const double ticks = static_cast<double>(std::stoll(fields[11]) + std::stoll(fields[12]));
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// VmHWM in MiB: the process's peak RSS over its whole life.
double processPeakRssMiB(int pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0)
      return static_cast<double>(std::stoll(line.substr(6))) / 1024.0;
  }
  return -1;
}

// A crashed scheduler stays a zombie until run.sh reaps it, and kill(pid, 0) succeeds on a
// zombie: the state letter in /proc tells.
bool processAlive(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat))
    return false;
  auto close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size())
    return false;
  const char state = stat[close + 2];
  return state != 'Z' && state != 'X';
}

class Api {
 public:
  explicit Api(RestConfig config) : guard_(boost::asio::make_work_guard(io)) {
    client_ = std::make_unique<RestClient>(io, std::move(config));
    for (int i = 0; i < 2; ++i)
      threads_.emplace_back([this] { io.run(); });
  }
  ~Api() {
    client_.reset();
    guard_.reset();
    io.stop();
    for (auto& t : threads_)
      t.join();
  }
  RestClient* operator->() { return client_.get(); }
  RestClient& client() { return *client_; }
  boost::asio::io_context io;

 private:
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::vector<std::thread> threads_;
  std::unique_ptr<RestClient> client_;
};

const ResourceRef kNodes{"", "v1", "nodes", "", "", ""};

json::value nodeObject(const std::string& name, const std::string& run, int i) {
  const std::string now = [] {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return std::string(buf);
  }();
  const json::object resources{{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}};
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"metadata",
                       {{"name", name},
                        {"labels",
                         {{"bench", "sched"},
                          {"bench-run", run},
                          {"kubernetes.io/hostname", name},
                          {"kubernetes.io/os", "linux"},
                          {"kubernetes.io/arch", "amd64"},
                          {"topology.kubernetes.io/zone", fmt::format("zone-{}", i % 3)}}}}},
                      {"status",
                       {{"capacity", resources},
                        {"allocatable", resources},
                        {"conditions", json::array{{{"type", "Ready"},
                                                    {"status", "True"},
                                                    {"reason", "KubeletReady"},
                                                    {"lastHeartbeatTime", now},
                                                    {"lastTransitionTime", now}}}}}}};
}

json::value podObject(const std::string& name, const std::string& ns,
                      const std::string& scheduler_name, const Request& req,
                      const std::string& owner = "") {
  json::object labels{{"bench", "sched"}};
  if (!owner.empty())
    labels[kOwnerLabel] = owner;
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", std::move(labels)}}},
      {"spec",
       {{"schedulerName", scheduler_name},
        {"automountServiceAccountToken", false},
        {"terminationGracePeriodSeconds", 0},
        {"containers",
         json::array{{{"name", "pause"},
                      {"image", "k8s.gcr.io/pause:3.2"},
                      {"resources", {{"requests", {{"cpu", req.cpu}, {"memory", req.memory}}}}}}}},
        // No kubelet heartbeats these nodes; if anything taints them, pods still fit.
        {"tolerations", json::array{{{"operator", "Exists"}}}}}}};
}

// Tracks bindings as the pod watch reports them.
struct Tracker {
  std::mutex mu;
  std::condition_variable cv;
  std::string bench_prefix;  // the measured pods' names start with it
  std::unordered_map<std::string, Clock::time_point> created;
  std::vector<double> latencies_ms;  // create sent -> binding seen
  std::unordered_set<std::string> bound;
  std::unordered_set<std::string> present;  // any pod of the namespace the watch holds
  Clock::time_point last_bind{};
  // Binder-only: unbound pods seen, handed to the binder.
  std::function<void(const std::string&)> on_unbound;

  void seen(const BenchPod& p) {
    std::lock_guard lock(mu);
    present.insert(p.name);
    if (p.node.empty()) {
      if (on_unbound && p.name.rfind(bench_prefix, 0) == 0)
        on_unbound(p.name);
    } else if (bound.insert(p.name).second) {
      last_bind = Clock::now();
      if (auto it = created.find(p.name); it != created.end())
        latencies_ms.push_back(
            std::chrono::duration<double, std::milli>(last_bind - it->second).count());
    }
    cv.notify_all();
  }
  void gone(const BenchPod& p) {
    std::lock_guard lock(mu);
    present.erase(p.name);
    cv.notify_all();
  }
};

// Binds pods round-robin over the nodes with at most `window` binds in flight.
class Binder {
 public:
  Binder(RestClient& client, std::string ns, std::vector<std::string> nodes, int window)
      : client_(client), ns_(std::move(ns)), nodes_(std::move(nodes)), window_(window) {}

  void add(const std::string& pod) {
    std::lock_guard lock(mu_);
    if (!queued_.insert(pod).second)
      return;
    pending_.push_back(pod);
    pumpLocked();
  }
  int failures() {
    std::lock_guard lock(mu_);
    return failures_;
  }
  std::string firstError() {
    std::lock_guard lock(mu_);
    return first_error_;
  }

 private:
  void pumpLocked() {
    while (in_flight_ < window_ && !pending_.empty()) {
      std::string pod = std::move(pending_.front());
      pending_.pop_front();
      const std::string& node = nodes_[next_++ % nodes_.size()];
      ++in_flight_;
      json::value body =
          json::object{{"apiVersion", "v1"},
                       {"kind", "Binding"},
                       {"metadata", {{"name", pod}, {"namespace", ns_}}},
                       {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
      client_.create(ResourceRef{"", "v1", "pods", ns_, pod, "binding"}, std::move(body),
                     [this](ApiResult<json::value> r) {
                       std::lock_guard lock(mu_);
                       --in_flight_;
                       if (!r && failures_++ == 0)
                         first_error_ = r.error().message;
                       pumpLocked();
                     });
    }
  }

  RestClient& client_;
  const std::string ns_;
  const std::vector<std::string> nodes_;
  const int window_;
  std::mutex mu_;
  std::deque<std::string> pending_;
  std::unordered_set<std::string> queued_;
  std::size_t next_ = 0;
  int in_flight_ = 0;
  int failures_ = 0;
  std::string first_error_;
};

// The names of the bench objects the apiserver lists; nullopt when the list fails.
std::optional<std::vector<std::string>> benchNames(RestClient& c, const ResourceRef& ref) {
  ListOptions o;
  o.label_selector = "bench=sched";
  std::vector<std::string> names;
  auto r = c.listSync(ref, o);
  if (!r)
    return std::nullopt;
  for (const auto& item : r->at("items").as_array())
    names.emplace_back(item.at("metadata").at("name").as_string());
  return names;
}

// Deletes the bench pods (grace 0: no kubelet will ever confirm them) and nodes, one request each
// with `window` in flight, until the apiserver lists none, so the next scheduler starts from an
// empty cluster. Not a deletecollection: the apiserver deletes those serially (one worker by
// default) and gave up after its 34 s request timeout on 10,000 pods, still deleting minutes on.
bool cleanUp(RestClient& c, const std::string& ns, int window) {
  const ResourceRef pod_ref{"", "v1", "pods", ns, "", ""};
  DeleteOptions grace0;
  grace0.grace_period_seconds = 0;
  const auto t0 = Clock::now();
  std::size_t deleted = 0;
  // Reservations first: a scheduler still running would otherwise keep their room while the
  // pods go.
  if (!deleteReservations(c, window, deleted))
    return false;
  for (int round = 0; round < 5; ++round) {
    auto pods = benchNames(c, pod_ref);
    auto nodes = benchNames(c, kNodes);
    if (pods && nodes && pods->empty() && nodes->empty()) {
      if (deleted > 0)
        say(fmt::format("deleted {} bench objects in {:.1f} s", deleted,
                        std::chrono::duration<double>(Clock::now() - t0).count()));
      return true;
    }
    deleted += (pods ? pods->size() : 0) + (nodes ? nodes->size() : 0);
    for (const auto& [ref, names] : {std::pair{pod_ref, pods}, std::pair{kNodes, nodes}}) {
      if (!names)
        continue;
      std::string err;
      const int failed = runWindowed(
          static_cast<int>(names->size()), window,
          [&](int i, std::function<void(std::string)> done) {
            ResourceRef one = ref;
            one.name = (*names)[static_cast<std::size_t>(i)];
            c.remove(one, grace0, [done = std::move(done)](ApiResult<json::value> r) {
              done(r || isNotFound(r.error()) ? std::string() : r.error().message);
            });
          },
          &err);
      if (failed > 0)
        say(fmt::format("{} deletes of {} failed; first: {}", failed, resourcePath(ref), err));
    }
  }
  say("bench pods or nodes still listed after 5 rounds of deletes");
  return false;
}

Options parseArgs(int argc, char** argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size())
        die("missing value for " + args[i]);
      return args[++i];
    };
    const std::string& a = args[i];
    if (a == "--kubeconfig")
      o.kubeconfig = value();
    else if (a == "--nodes")
      o.nodes = std::stoi(value());
    else if (a == "--pods")
      o.pods = std::stoi(value());
    else if (a == "--scheduler-name")
      o.scheduler_name = value();
    else if (a == "--scheduler-pid")
      o.scheduler_pid = std::stoi(value());
    else if (a == "--binder-only")
      o.binder_only = true;
    else if (a == "--namespace")
      o.ns = value();
    else if (a == "--qps")
      o.qps = std::stod(value());
    else if (a == "--inflight")
      o.inflight = std::stoi(value());
    else if (a == "--timeout")
      o.timeout_s = std::stod(value());
    else if (a == "--ready-timeout")
      o.ready_timeout_s = std::stod(value());
    else if (a == "--settle")
      o.settle_s = std::stod(value());
    else if (a == "--reservations")
      o.reservations = std::stoi(value());
    else if (a == "--reservations-by") {
      const std::string by = value();
      if (by == "scheduler")
        o.availability = Availability::kScheduled;
      else if (by == "driver")
        o.availability = Availability::kWritten;
      else
        die("--reservations-by: want scheduler or driver, not " + by);
    } else if (a == "--keep")
      o.keep = true;
    else if (a == "--cleanup-only")
      o.cleanup_only = true;
    else if (a == "--control-plane-pids") {
      std::istringstream list(value());
      for (std::string pid; std::getline(list, pid, ',');)
        o.control_plane_pids.push_back(std::stoi(pid));
    } else
      die("unknown argument " + a);
  }
  if (o.cleanup_only) {
    if (o.kubeconfig.empty())
      die("--cleanup-only needs --kubeconfig");
    return o;
  }
  if (o.kubeconfig.empty() || o.nodes <= 0 || o.pods <= 0 || o.scheduler_name.empty())
    die("usage: --kubeconfig K --nodes N --pods M --scheduler-name S (--scheduler-pid PID | "
        "--binder-only) [--namespace NS] [--qps 5000] [--inflight 8] [--timeout S]");
  if (o.binder_only == (o.scheduler_pid > 0))
    die("give exactly one of --scheduler-pid and --binder-only");
  if (o.inflight <= 0)
    die("--inflight must be positive");
  if (o.reservations < 0 || o.reservations > o.nodes)
    die("--reservations must be between 0 and the node count");
  if (o.reservations > 0 && o.binder_only)
    die("--reservations needs a scheduler (not --binder-only)");
  if (o.timeout_s <= 0)
    o.timeout_s = std::max(300.0, o.pods / 20.0);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parseArgs(argc, argv);
  // The binder-only run has no scheduler process: the driver's own CPU is what binding cost.
  const int pid = o.binder_only || o.cleanup_only ? static_cast<int>(getpid()) : o.scheduler_pid;
  if (!processAlive(pid))
    die(fmt::format("no process {}", pid));

  auto config = loadKubeconfig(o.kubeconfig);
  if (!config)
    die("--kubeconfig: " + config.error().message);
  config->qps = o.qps;
  config->burst = static_cast<int>(o.qps);
  config->timeout = 120s;
  config->user_agent = "koord-bench-scheduler-api";
  Api api(std::move(*config));
  RestClient& c = api.client();

  auto ns = c.createSync(
      ResourceRef{"", "v1", "namespaces", "", "", ""},
      json::object{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", o.ns}}}});
  if (!ns && !isAlreadyExists(ns.error()))
    die("create namespace: " + ns.error().message);
  // The ServiceAccount admission plugin refuses pods until the namespace's default account exists.
  if (!pollUntil(60, [&] {
        return c.getSync(ResourceRef{"", "v1", "serviceaccounts", o.ns, "default", ""}).has_value();
      }))
    die("the namespace's default service account did not appear in 60 s");
  // Leftovers of an interrupted run would be counted against this scheduler's placements.
  if (!cleanUp(c, o.ns, o.inflight))
    die("could not clear earlier bench objects");
  if (o.cleanup_only)
    return 0;

  const std::string run = fmt::format("r{}", std::time(nullptr) % 100000000);
  std::vector<std::string> node_names;
  node_names.reserve(o.nodes);
  for (int i = 0; i < o.nodes; ++i)
    node_names.push_back(fmt::format("{}-n{:05d}", run, i));

  int exit_code = 0;
  // From here on the cluster holds this run's objects: a failure removes them before leaving, so
  // the next scheduler's run starts from an empty cluster. _Exit: the io threads are still running.
  auto fail = [&](const std::string& msg) {
    say(msg);
    cleanUp(c, o.ns, o.inflight);
    std::_Exit(1);
  };
  {
    auto t0 = Clock::now();
    std::string err;
    const int failed = runWindowed(
        o.nodes, o.inflight,
        [&](int i, std::function<void(std::string)> done) {
          c.create(kNodes, nodeObject(node_names[i], run, i),
                   [done = std::move(done)](ApiResult<json::value> r) {
                     done(r ? std::string() : r.error().message);
                   });
        },
        &err);
    if (failed > 0)
      fail(fmt::format("{} of {} node creates failed; first: {}", failed, o.nodes, err));
    const bool listed = pollUntil(60, [&] {
      ListOptions ours;
      ours.label_selector = "bench-run=" + run;
      auto r = c.listSync(kNodes, ours);
      return r && r->at("items").as_array().size() == static_cast<std::size_t>(o.nodes);
    });
    if (!listed)
      fail("the apiserver does not list all the nodes 60 s after creating them");
    say(fmt::format("{} nodes created in {:.1f} s", o.nodes,
                    std::chrono::duration<double>(Clock::now() - t0).count()));
  }

  Tracker tracker;
  tracker.bench_prefix = run + "-pod-";
  std::unique_ptr<Binder> binder;
  if (o.binder_only) {
    binder = std::make_unique<Binder>(c, o.ns, node_names, o.inflight);
    tracker.on_unbound = [&binder](const std::string& pod) { binder->add(pod); };
  }
  Informer<BenchPod> watch(c, api.io, ResourceRef{"", "v1", "pods", o.ns, "", ""}, projectPod);
  watch.addHandlers(
      {[&](const std::string&, const BenchPod& p) { tracker.seen(p); },
       [&](const std::string&, const BenchPod&, const BenchPod& p) { tracker.seen(p); },
       [&](const std::string&, const BenchPod& p) { tracker.gone(p); }});
  watch.start();
  if (!watch.waitForSync(60s))
    fail("the pod watch did not sync in 60 s");

  const ResourceRef pods_ref{"", "v1", "pods", o.ns, "", ""};
  if (!o.binder_only) {
    // One pod through the scheduler before measuring: it is up, its caches synced, and it has
    // started seeing the nodes.
    const std::string probe = run + "-probe";
    const auto t0 = Clock::now();
    auto r = c.createSync(pods_ref, podObject(probe, o.ns, o.scheduler_name, kMix[3]));
    if (!r)
      fail("create the probe pod: " + r.error().message);
    const auto deadline = t0 + std::chrono::duration<double>(o.ready_timeout_s);
    std::unique_lock lock(tracker.mu);
    bool bound = false;
    // Woken twice a second as well: a scheduler's exit sends no watch event.
    while (!(bound = tracker.bound.contains(probe)) && Clock::now() < deadline && processAlive(pid))
      tracker.cv.wait_for(lock, 500ms);
    lock.unlock();
    if (!processAlive(pid))
      fail("the scheduler exited before binding the probe pod");
    if (!bound)
      fail(fmt::format("the scheduler did not bind the probe pod in {} s", o.ready_timeout_s));
    say(fmt::format("probe pod bound {:.1f} s after its creation",
                    std::chrono::duration<double>(Clock::now() - t0).count()));
    DeleteOptions del;
    del.grace_period_seconds = 0;
    auto d = c.removeSync(ResourceRef{"", "v1", "pods", o.ns, probe, ""}, del);
    if (!d)
      fail("delete the probe pod: " + d.error().message);
    lock.lock();
    tracker.cv.wait_for(lock, 30s, [&] { return !tracker.present.contains(probe); });
    tracker.bound.clear();
    tracker.latencies_ms.clear();
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::duration<double>(o.settle_s));
  }

  // The reservations, each keeping the room its owner pods will ask for (up to half a node).
  std::vector<ReservationPlan> plan(static_cast<std::size_t>(o.reservations));
  for (int k = 0; k < o.reservations; ++k) {
    auto& p = plan[static_cast<std::size_t>(k)];
    p.name = fmt::format("{}-res-{:05d}", run, k);
    p.node = node_names[static_cast<std::size_t>(k) * node_names.size() /
                        static_cast<std::size_t>(o.reservations)];
    p.owner = ownerValue(run, k);
  }
  int owner_pods = 0;
  for (int i = 0; i < o.pods; ++i) {
    const int k = ownedReservation(i, o.reservations);
    if (k < 0)
      continue;
    const Request& req = kMix[static_cast<std::size_t>(i) % std::size(kMix)];
    plan[static_cast<std::size_t>(k)].cpu_milli += Quantity::parse(req.cpu).value().milliValue();
    plan[static_cast<std::size_t>(k)].memory += Quantity::parse(req.memory).value().value();
    ++owner_pods;
  }
  // At most half a node each: a reservation with more owners than that keeps room for the first
  // ones, and the rest take the node's own room like any pod.
  for (auto& p : plan) {
    p.cpu_milli = std::min(p.cpu_milli, kNodeCpuMilli / 2);
    p.memory = std::min(p.memory, kNodeMemory / 2);
  }
  double reservations_s = 0;
  if (o.reservations > 0) {
    auto made = makeAvailable(c, plan, run, o.scheduler_name, o.availability, o.inflight,
                              std::max(300.0, o.reservations / 5.0));
    if (!made)
      fail("reservations: " + made.error().message);
    reservations_s = *made;
    say(fmt::format("{} reservations Available {:.1f} s after the first create ({})",
                    o.reservations, reservations_s,
                    o.availability == Availability::kScheduled ? "placed by the scheduler"
                                                               : "status written by the driver"));
    // As after the nodes: the scheduler sees the last Available ones through its watch.
    std::this_thread::sleep_for(std::chrono::duration<double>(o.settle_s));
  }

  std::vector<std::string> pod_names;
  pod_names.reserve(o.pods);
  for (int i = 0; i < o.pods; ++i)
    pod_names.push_back(fmt::format("{}{:06d}", tracker.bench_prefix, i));

  auto controlPlaneCpu = [&] {
    double sum = 0;
    for (int p : o.control_plane_pids)
      sum += std::max(0.0, processCpuSeconds(p));
    return sum;
  };
  const double cp_before = controlPlaneCpu();
  const double cpu_before = processCpuSeconds(pid);
  const auto t_first = Clock::now();
  std::string create_error;
  const int create_failed = runWindowed(
      o.pods, o.inflight,
      [&](int i, std::function<void(std::string)> done) {
        {
          std::lock_guard lock(tracker.mu);
          tracker.created[pod_names[i]] = Clock::now();
        }
        const int k = ownedReservation(i, o.reservations);
        c.create(pods_ref,
                 podObject(pod_names[i], o.ns, o.scheduler_name,
                           kMix[static_cast<std::size_t>(i) % std::size(kMix)],
                           k < 0 ? std::string() : ownerValue(run, k)),
                 [done = std::move(done)](ApiResult<json::value> r) {
                   done(r ? std::string() : r.error().message);
                 });
      },
      &create_error);
  const double create_s = std::chrono::duration<double>(Clock::now() - t_first).count();
  if (create_failed > 0) {
    say(fmt::format("{} of {} pod creates failed; first: {}", create_failed, o.pods, create_error));
    exit_code = 1;
  }
  say(fmt::format("{} pods created in {:.1f} s ({:.0f}/s)", o.pods - create_failed, create_s,
                  (o.pods - create_failed) / create_s));

  const int expected = o.pods - create_failed;
  bool all_bound = false;
  bool scheduler_died = false;
  {
    const auto deadline = Clock::now() + std::chrono::duration<double>(o.timeout_s);
    std::unique_lock lock(tracker.mu);
    std::size_t last_count = 0;
    auto last_progress = Clock::now();
    while (true) {
      if (tracker.bound.size() >= static_cast<std::size_t>(expected)) {
        all_bound = true;
        break;
      }
      if (Clock::now() >= deadline)
        break;
      if (!processAlive(pid)) {
        scheduler_died = true;
        break;
      }
      if (tracker.bound.size() != last_count) {
        last_count = tracker.bound.size();
        last_progress = Clock::now();
      } else if (Clock::now() - last_progress > 10s) {
        say(fmt::format("{} of {} pods bound, none in the last 10 s", last_count, expected));
        last_progress = Clock::now();
      }
      tracker.cv.wait_for(lock, 500ms);
    }
  }
  const double cpu_after = processCpuSeconds(pid);
  const double cp_s = controlPlaneCpu() - cp_before;
  const double rss_mib = processPeakRssMiB(pid);
  if (scheduler_died)
    say("the scheduler exited while pods were pending");

  std::size_t bound_count;
  double elapsed_s, p50_ms, p99_ms;
  {
    std::lock_guard lock(tracker.mu);
    bound_count = tracker.bound.size();
    elapsed_s = bound_count > 0 ? std::chrono::duration<double>(tracker.last_bind - t_first).count()
                                : std::chrono::duration<double>(Clock::now() - t_first).count();
    p50_ms = percentile(tracker.latencies_ms, 0.50);
    p99_ms = percentile(tracker.latencies_ms, 0.99);
  }
  if (!all_bound) {
    say(fmt::format("only {} of {} pods bound", bound_count, expected));
    exit_code = 1;
  }
  if (binder && binder->failures() > 0)
    say(fmt::format("{} binds failed; first: {}", binder->failures(), binder->firstError()));

  // Every placement: a node of this run, and the sums of the pods' requests plus the room the
  // node's reservations still keep within its allocatable (the watch's view, which has every
  // binding by now). A pod placed into a reservation must be one of its owners, on its node.
  std::unordered_set<std::string> known(node_names.begin(), node_names.end());
  struct Use {
    std::int64_t cpu = 0, memory = 0, pods = 0;
  };
  std::unordered_map<std::string, Use> use;
  std::unordered_map<std::string, std::size_t> plan_index;
  for (std::size_t k = 0; k < plan.size(); ++k)
    plan_index.emplace(plan[k].name, k);
  std::vector<Use> taken(plan.size());  // by the owners placed into each reservation
  int invalid = 0, in_reservation = 0;
  for (const auto& p : watch.store().list()) {
    if (p->name.rfind(tracker.bench_prefix, 0) != 0 || p->node.empty())
      continue;
    if (!known.contains(p->node)) {
      if (invalid++ < 5)
        say(fmt::format("pod {} bound to {}, which is not a node of this run", p->name, p->node));
      continue;
    }
    auto& u = use[p->node];
    u.cpu += p->cpu_milli;
    u.memory += p->memory;
    ++u.pods;
    if (p->reservation.empty())
      continue;
    const int i = std::stoi(p->name.substr(tracker.bench_prefix.size()));
    auto k = plan_index.find(p->reservation);
    if (k == plan_index.end() ||
        static_cast<int>(k->second) != ownedReservation(i, o.reservations) ||
        plan[k->second].node != p->node) {
      if (invalid++ < 5)
        say(fmt::format(
            "pod {} on {} placed into reservation {}, which is not one of its own there", p->name,
            p->node, p->reservation));
      continue;
    }
    ++in_reservation;
    taken[k->second].cpu += p->cpu_milli;
    taken[k->second].memory += p->memory;
  }
  const std::size_t nodes_used = use.size();
  for (std::size_t k = 0; k < plan.size(); ++k) {
    auto& u = use[plan[k].node];
    u.cpu += std::max<std::int64_t>(0, plan[k].cpu_milli - taken[k].cpu);
    u.memory += std::max<std::int64_t>(0, plan[k].memory - taken[k].memory);
  }
  std::int64_t max_pods = 0;
  for (const auto& [node, u] : use) {
    max_pods = std::max(max_pods, u.pods);
    if (u.cpu > kNodeCpuMilli || u.memory > kNodeMemory || u.pods > kNodePods) {
      if (invalid++ < 5)
        say(fmt::format("node {} overcommitted: {} pods, cpu {}m of {}m, memory {} of {}", node,
                        u.pods, u.cpu, kNodeCpuMilli, u.memory, kNodeMemory));
    }
  }
  if (invalid > 0) {
    say(fmt::format("{} invalid placements", invalid));
    exit_code = 1;
  }
  watch.stop();

  const double cpu_s = cpu_before >= 0 && cpu_after >= 0 ? cpu_after - cpu_before : -1;
  const double pods_per_s = bound_count > 0 ? static_cast<double>(bound_count) / elapsed_s : 0;
  std::cout << fmt::format(
                   "result scheduler={} nodes={} pods={} bound={} seconds={:.2f} pods_per_s={:.1f} "
                   "cpu_s={:.2f} cpu_ms_per_pod={:.3f} peak_rss_mib={:.1f} valid={} "
                   "max_pods_per_node={} nodes_used={} bind_p50_ms={:.0f} bind_p99_ms={:.0f} "
                   "create_per_s={:.0f} control_plane_cpu_s={:.2f} reservations={} "
                   "reservations_s={:.2f} owner_pods={} in_reservation={}",
                   o.binder_only ? "binder-only" : o.scheduler_name, o.nodes, o.pods, bound_count,
                   elapsed_s, pods_per_s, cpu_s,
                   bound_count > 0 ? cpu_s * 1000.0 / static_cast<double>(bound_count) : 0.0,
                   rss_mib, invalid == 0 && all_bound ? "yes" : "no", max_pods, nodes_used, p50_ms,
                   p99_ms, expected / create_s, cp_s, o.reservations, reservations_s, owner_pods,
                   in_reservation)
            << std::endl;

  // --keep: run.sh restarts the scheduler against the populated cluster, then cleans up.
  if (!o.keep && !cleanUp(c, o.ns, o.inflight))
    exit_code = 1;
  return exit_code;
}
