// The scheduling cycle alone, in process: N synthetic nodes (4 CPU / 32 GiB / 110 pods, a
// NodeMetric each), M pods scheduled one after another through a koord-scheduler profile
// (the default plugins this build has plus LoadAwareScheduling), each placement applied to the
// snapshot as the cache would. Prints microseconds per pod; no API server, no binding.
//   koord_bench_scheduler_cycle [--nodes 5000] [--pods 10000] [--parallelism 16]
//                               [--no-loadaware] (the default plugins alone)
//                               [--reservations N [--rounds R] [--only without|with]]
// --reservations N adds the Reservation plugin (PreFilter, Filter, PreScore, Score weight 5000,
// Reserve, as deploy/manifests/koord-scheduler.yaml) to the profile and runs the same pods twice
// per round, without reservations and then with N Available ones (one per nodes/N nodes, half
// the pods owners of one by label), each cycle running the BeforePreFilter transform and the
// snapshot swap as Scheduler::scheduleOne does; it prints both side by side. --only runs one
// of the two in this process (for an instruction count under callgrind); otherwise each run is
// a child process of its own, so that neither inherits the heap the other left.
//   koord_bench_scheduler_cycle --jobs [--nodes 5000] [--pods 10000] [--rounds R]
//                               [--only without|with] [--parallelism 16]
//                               [--jobs-plugin gangs|quotas] (B with that one alone)
// --jobs runs the Scheduler's own loop instead (queue, cache, Permit, binding to a fake API that
// answers at once; cycle_jobs.cpp) twice per round: A, the default plugins and plain pods; B,
// Coscheduling and ElasticQuota as the chart enables them, the pods in gangs of 10 (Strict)
// charged to the leaves of a three-level tree of 1,000 ElasticQuotas. It prints pods/s and the
// loop's us/pod for both and B-A, and fails (exit 1) unless every pod bound and every gang whole.
//   koord_bench_scheduler_cycle --fine-grained [--nodes 5000] [--pods 10000] [--rounds R]
//                               [--only without|with] [--parallelism 16]
// --fine-grained runs the same loop over nodes of 2 sockets x 32 cores x 2 threads and 8 GPUs
// (a NodeResourceTopology and a Device each; cycle_fine_grained.cpp): A, the default plugins;
// B, NodeNUMAResource and DeviceShare too. A third of the pods are LSR, a third share GPUs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "config/scheduler_config.h"
#include "cycle_fine_grained.h"
#include "cycle_jobs.h"
#include "cycle_reservations.h"
#include "framework/plugin_registry.h"
#include "framework/pod_changes.h"
#include "framework/reservation_listener.h"
#include "framework/snapshot.h"
#include "koord/apis/node_metric.h"
#include "plugins/loadaware/load_aware.h"
#include "plugins/reservation/reservation_plugin.h"
#include "runtime/framework.h"
#include "runtime/parallelizer.h"
#include "runtime/schedule_pod.h"
#include "scheduler/builders.h"
#include "scheduler/fake_cluster.h"

using namespace koord::roles::scheduler;
namespace kube = koord::kube;
namespace bench = koord::bench::scheduler;

namespace {

struct Options {
  std::size_t nodes = 5000;
  std::size_t pods = 10000;
  int parallelism = 16;
  bool loadaware = true;
  std::size_t reservations = 0;
  int rounds = 1;
  bool run_without = true, run_with = true;
  bool jobs = false;
  bool jobs_gangs = true, jobs_quotas = true;
  bool fine_grained = false;
};

// The profile: LoadAwareScheduling (unless --no-loadaware) and, with --reservations, the
// Reservation plugin at the points koord-scheduler.yaml enables it, in both runs of a round.
std::string configText(const Options& o) {
  const bool r = o.reservations > 0;
  if (!o.loadaware && !r)
    return R"(
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: koord-scheduler
)";
  auto list = [](std::initializer_list<std::string_view> names) {
    std::string out;
    for (auto n : names) {
      if (!n.empty())
        out += fmt::format("          - name: {}\n", n);
    }
    return out;
  };
  const std::string_view la = o.loadaware ? "LoadAwareScheduling" : "";
  const std::string_view res = r ? "Reservation" : "";
  std::string score;
  if (o.loadaware)
    score += "          - name: LoadAwareScheduling\n            weight: 1\n";
  if (r)
    score += "          - name: Reservation\n            weight: 5000\n";
  std::string text =
      "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n"
      "  - schedulerName: koord-scheduler\n"
      "    plugins:\n";
  if (r)
    text += "      preFilter:\n        enabled:\n" + list({res});
  text += "      filter:\n        enabled:\n" + list({la, res});
  if (r)
    text += "      preScore:\n        enabled:\n" + list({res});
  text += "      score:\n        enabled:\n" + score;
  text += "      reserve:\n        enabled:\n" + list({res, la});
  return text;
}

struct RunResult {
  std::string plugins;
  std::size_t workers = 0;
  std::size_t placed = 0, unschedulable = 0;
  std::size_t reservations_in_index = 0, reservations_on_nodes = 0;
  std::size_t matched = 0;         // pods the transform gave reservation room back to
  std::size_t in_reservation = 0;  // pods Reserve put into a reservation
  double total_s = 0, mean_us = 0, p50_us = 0, p99_us = 0;
  // The same split by the pods' owner labels (the even pods), in both runs of a round.
  double owner_p50_us = 0, other_p50_us = 0;
};

// One run on a fresh framework and snapshot: `reservations` Available reservations (0: none),
// the pods labelled as owners of o.reservations either way.
kube::Expected<RunResult> runOnce(const Options& o, std::size_t reservations) {
  const PluginRegistry& registry = inTreeRegistry();
  auto cfg = config::parseSchedulerConfigText(configText(o), registry);
  if (!cfg)
    return koord::invalidArgument("config: " + cfg.error().message);
  // The NodeMetrics as LoadAware's declared source, declared before the plugin is built.
  testkit::FakeCluster cluster;
  auto& metrics = cluster.declare<koord::apis::NodeMetric>(loadaware::kNodeMetricSource);
  Parallelizer parallelizer(o.parallelism);
  auto fw = Framework::create(cfg->profiles.front(), registry, cluster, parallelizer);
  if (!fw)
    return koord::invalidArgument("framework: " + fw.error().message);
  // The plugin's informer-side entry, as the scheduler finds it among the built plugins.
  ReservationListener* listener = nullptr;
  for (const auto& p : (*fw)->allPlugins()) {
    if (auto* l = dynamic_cast<ReservationListener*>(p.get()))
      listener = l;
  }
  if (o.reservations > 0 && listener == nullptr)
    return koord::invalidArgument("the profile built no ReservationListener (Reservation plugin)");

  std::mt19937_64 rng(42);
  std::vector<std::shared_ptr<NodeInfo>> building;
  building.reserve(o.nodes);
  const auto now = std::chrono::system_clock::now();
  for (std::size_t i = 0; i < o.nodes; ++i) {
    auto node = std::make_shared<Node>();
    node->name = fmt::format("node-{:05}", i);
    node->labels = {{"kubernetes.io/hostname", node->name},
                    {"topology.kubernetes.io/zone", fmt::format("zone-{}", i % 3)}};
    kube::ResourceList alloc{{"cpu", testkit::quantity("4")},
                             {"memory", testkit::quantity("32Gi")},
                             {"pods", testkit::quantity("110")},
                             {"kubernetes.io/batch-cpu", testkit::quantity("2000")},
                             {"kubernetes.io/batch-memory", testkit::quantity("8Gi")}};
    node->allocatable = Resource::fromList(alloc);
    node->capacity = node->allocatable;
    auto info = std::make_shared<NodeInfo>();
    info->node = node;
    building.push_back(info);

    auto metric = std::make_shared<koord::apis::NodeMetric>();
    metric->name = node->name;
    metric->update_time = now;
    koord::apis::NodeMetricInfo usage;
    usage.node_usage = {
        {"cpu", kube::Quantity::fromMilli(static_cast<std::int64_t>(rng() % 2400))},
        {"memory", kube::Quantity::fromInt(static_cast<std::int64_t>((rng() % 16) * (1LL << 30)))}};
    metric->node_metric = usage;
    // As the cache attaches it; the cluster view keeps it too, for anything that asks by name.
    info->node_metric = metric;
    metrics.set(node->name, metric);
  }
  const Resource pod_requests = testkit::resources("100m", "256Mi");
  RunResult out;
  if (reservations > 0) {
    // Room for every owner a reservation has (half the pods over the reservations, rounded up).
    const std::size_t owners = (o.pods / 2 + reservations - 1) / reservations;
    Resource room;
    room.milli_cpu = pod_requests.milli_cpu * static_cast<std::int64_t>(owners);
    room.memory = pod_requests.memory * static_cast<std::int64_t>(owners);
    bench::placeReservations(building, reservations, room, *listener);
  }
  std::vector<std::shared_ptr<const NodeInfo>> nodes(building.begin(), building.end());
  building.clear();
  Snapshot snapshot(std::move(nodes));
  std::map<std::string, std::size_t, std::less<>> index;
  for (std::size_t i = 0; i < snapshot.nodes().size(); ++i) {
    index.emplace(snapshot.nodes()[i]->name(), i);
    out.reservations_on_nodes += snapshot.nodes()[i]->reservations.size();
  }

  Framework& framework = **fw;
  PodScheduler scheduler(framework, 0, 7);
  std::vector<double> cycle_us, owner_us, other_us;
  cycle_us.reserve(o.pods);
  std::vector<std::shared_ptr<const NodeInfo>> replacements, originals;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < o.pods; ++i) {
    auto pod = std::make_shared<PodInfo>();
    pod->namespace_ = "bench";
    pod->name = fmt::format("pod-{:06}", i);
    pod->uid = fmt::format("00000000-0000-0000-0000-{:012}", i);
    pod->scheduler_name = "koord-scheduler";
    pod->requests = pod_requests;
    pod->non_zero_requests = pod->requests;
    pod->limits = pod->requests;
    bench::labelOwner(*pod, i, o.reservations);
    const auto c0 = std::chrono::steady_clock::now();
    CycleState state;
    // Scheduler::scheduleOne: the transformers' NodeInfos (an owner pod's reservations' room
    // given back) swapped into the snapshot for this cycle, the originals put back after it.
    replacements.clear();
    framework.setSnapshot(&snapshot);
    auto transformed = framework.runPreFilterTransformers(state, *pod, snapshot, replacements);
    if (!transformed.ok()) {
      ++out.unschedulable;
      continue;
    }
    if (!replacements.empty())
      ++out.matched;
    for (auto& r : replacements) {
      const std::size_t at = index.at(r->name());
      originals.push_back(snapshot.nodes()[at]);
      snapshot.replace(std::move(r));
    }
    auto result = scheduler.schedule(state, *pod, snapshot);
    std::string chosen;
    if (auto* r = std::get_if<ScheduleResult>(&result)) {
      chosen = r->node;
      pod->node_name = chosen;
      auto st = framework.runReservePlugins(state, *pod, chosen);
      if (!st.ok())
        return koord::invalidArgument("reserve: " + std::string(st.message()));
      // The plugins' changes (reservation-allocated) go onto the assumed pod, as the scheduler
      // applies them before the cache counts the pod inside its reservation.
      if (const PodChanges* changes = findPodChanges(state))
        changes->applyTo(*pod);
      if (!pod->reservation_uid.empty())
        ++out.in_reservation;
    }
    for (auto& original : originals)
      snapshot.replace(std::move(original));
    originals.clear();
    if (!chosen.empty()) {
      // As the cache's assume: a new NodeInfo for the chosen node, the snapshot's entry replaced.
      const std::size_t at = index.at(chosen);
      auto copy = std::make_shared<NodeInfo>(*snapshot.nodes()[at]);
      copy->addPod(pod);
      snapshot.mutableNodes()[at] = std::move(copy);
      ++out.placed;
    } else {
      ++out.unschedulable;
    }
    cycle_us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - c0).count());
    (pod->labels.contains(bench::kOwnerLabel) ? owner_us : other_us).push_back(cycle_us.back());
  }
  out.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto pct = [](std::vector<double>& v, double p) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()))];
  };
  out.p50_us = pct(cycle_us, 0.5);
  out.p99_us = pct(cycle_us, 0.99);
  out.owner_p50_us = pct(owner_us, 0.5);
  out.other_p50_us = pct(other_us, 0.5);
  out.mean_us = out.total_s * 1e6 / static_cast<double>(o.pods);
  out.plugins = config::describe(framework.plugins());
  out.workers = parallelizer.workers();
  if (listener != nullptr) {
    if (auto* plugin = dynamic_cast<const reservation::ReservationPlugin*>(listener))
      out.reservations_in_index = plugin->index().size();
  }
  return out;
}

// runOnce in a child process. A run leaves the heap holding what its 10,000 pods and their
// NodeInfo copies freed, and a second run in the same process was slower for it whatever it
// ran (docs/benchmarks.md), which the side-by-side figures must not charge to whichever run
// comes second.
kube::Expected<RunResult> runInChild(const Options& o, std::size_t reservations) {
  int fds[2];
  if (::pipe(fds) != 0)
    return koord::invalidArgument("pipe failed");
  std::fflush(stdout);
  const pid_t pid = ::fork();
  if (pid < 0)
    return koord::invalidArgument("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    auto r = runOnce(o, reservations);
    std::string text =
        r ? fmt::format("ok {} {} {} {} {} {} {} {} {} {} {} {} {}\n{}", r->workers, r->placed,
                        r->unschedulable, r->reservations_in_index, r->reservations_on_nodes,
                        r->matched, r->in_reservation, r->total_s, r->mean_us, r->p50_us, r->p99_us,
                        r->owner_p50_us, r->other_p50_us, r->plugins)
          : "error " + r.error().message;
    std::size_t off = 0;
    while (off < text.size()) {
      const auto n = ::write(fds[1], text.data() + off, text.size() - off);
      if (n <= 0)
        break;
      off += static_cast<std::size_t>(n);
    }
    ::_exit(r ? 0 : 1);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  for (;;) {
    const auto n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0)
      break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (text.starts_with("error "))
    return koord::invalidArgument(text.substr(6));
  RunResult r;
  const auto eol = text.find('\n');
  if (!text.starts_with("ok ") || eol == std::string::npos)
    return koord::invalidArgument("the run's child process reported nothing");
  r.plugins = text.substr(eol + 1);
  std::istringstream in(text.substr(3, eol - 3));
  in >> r.workers >> r.placed >> r.unschedulable >> r.reservations_in_index >>
      r.reservations_on_nodes >> r.matched >> r.in_reservation >> r.total_s >> r.mean_us >>
      r.p50_us >> r.p99_us >> r.owner_p50_us >> r.other_p50_us;
  if (!in)
    return koord::invalidArgument("the run's child process reported: " + text);
  return r;
}

void printRun(const Options& o, std::string_view label, const RunResult& r) {
  fmt::print(
      "{}: placed {}, unschedulable {}; {:.1f} us/pod mean, p50 {:.1f} us, p99 {:.1f} us; "
      "{:.0f} pods/s",
      label, r.placed, r.unschedulable, r.mean_us, r.p50_us, r.p99_us,
      static_cast<double>(o.pods) / r.total_s);
  if (o.reservations > 0)
    fmt::print(
        "; p50 {:.1f} us for owner pods, {:.1f} us for the others; reservations: {} on nodes, {} "
        "in the plugin's index; {} pods matched one, {} placed into one",
        r.owner_p50_us, r.other_p50_us, r.reservations_on_nodes, r.reservations_in_index, r.matched,
        r.in_reservation);
  fmt::print("\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--no-loadaware") {
      o.loadaware = false;
      continue;
    }
    if (a == "--jobs") {
      o.jobs = true;
      continue;
    }
    if (a == "--fine-grained") {
      o.fine_grained = true;
      continue;
    }
    if (i + 1 >= argc)
      break;
    if (a == "--nodes")
      o.nodes = std::strtoul(argv[i + 1], nullptr, 10);
    else if (a == "--pods")
      o.pods = std::strtoul(argv[i + 1], nullptr, 10);
    else if (a == "--parallelism")
      o.parallelism = std::atoi(argv[i + 1]);
    else if (a == "--reservations")
      o.reservations = std::strtoul(argv[i + 1], nullptr, 10);
    else if (a == "--rounds")
      o.rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--jobs-plugin") {
      o.jobs_gangs = std::string_view(argv[i + 1]) == "gangs";
      o.jobs_quotas = std::string_view(argv[i + 1]) == "quotas";
      if (!o.jobs_gangs && !o.jobs_quotas) {
        fmt::print(stderr, "--jobs-plugin: want gangs or quotas, not {}\n", argv[i + 1]);
        return 2;
      }
    } else if (a == "--only") {
      o.run_without = std::string_view(argv[i + 1]) == "without";
      o.run_with = std::string_view(argv[i + 1]) == "with";
      if (!o.run_without && !o.run_with) {
        fmt::print(stderr, "--only: want without or with, not {}\n", argv[i + 1]);
        return 2;
      }
    }
    ++i;
  }

  if (o.fine_grained) {
    bench::FineGrainedOptions fo;
    fo.nodes = o.nodes;
    fo.pods = o.pods;
    fo.parallelism = o.parallelism;
    fo.rounds = o.rounds;
    fo.run_without = o.run_without;
    fo.run_with = o.run_with;
    return bench::runFineGrained(fo);
  }
  if (o.jobs) {
    bench::JobsOptions jo;
    jo.nodes = o.nodes;
    jo.pods = o.pods;
    jo.parallelism = o.parallelism;
    jo.rounds = o.rounds;
    jo.run_without = o.run_without;
    jo.run_with = o.run_with;
    jo.with_gangs = o.jobs_gangs;
    jo.with_quotas = o.jobs_quotas;
    return bench::runJobs(jo);
  }

  if (o.reservations == 0) {
    auto r = runOnce(o, 0);
    if (!r) {
      fmt::print(stderr, "{}\n", r.error().message);
      return 1;
    }
    fmt::print(
        "koord scheduler cycle (in process): {} nodes, {} pods, parallelism {} ({} workers)\n"
        "plugins: {}\n",
        o.nodes, o.pods, o.parallelism, r->workers, r->plugins);
    printRun(o, "koord", *r);
    return 0;
  }

  // Rounds alternate the two runs (A B A B) so that drift in the machine hits both alike; each
  // run is a process of its own (runInChild) unless --only asks for one run in this process.
  const bool one_run = o.rounds == 1 && !(o.run_without && o.run_with);
  std::vector<RunResult> without, with;
  for (int round = 0; round < o.rounds; ++round) {
    for (std::size_t n : {std::size_t{0}, o.reservations}) {
      if (!(n == 0 ? o.run_without : o.run_with))
        continue;
      auto r = one_run ? runOnce(o, n) : runInChild(o, n);
      if (!r) {
        fmt::print(stderr, "{}\n", r.error().message);
        return 1;
      }
      if (round == 0 && (n == 0 || !o.run_without))
        fmt::print(
            "koord scheduler cycle (in process): {} nodes, {} pods, parallelism {} ({} workers), "
            "{} rounds\nplugins: {}\n",
            o.nodes, o.pods, o.parallelism, r->workers, o.rounds, r->plugins);
      printRun(o,
               fmt::format("round {} {}", round + 1,
                           n == 0 ? "without reservations" : fmt::format("{} reservations", n)),
               *r);
      std::fflush(stdout);
      (n == 0 ? without : with).push_back(std::move(*r));
    }
  }
  if (without.empty() || with.empty())
    return 0;
  fmt::print("\n{:<6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11} {:>11}\n", "", "p50", "p50", "p50",
             "p99", "p99", "p99", "owners p50", "others p50");
  fmt::print("{:<6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11} {:>11}\n", "round", "without",
             "with", "diff", "without", "with", "diff", "diff", "diff");
  for (std::size_t i = 0; i < with.size(); ++i) {
    const auto& a = without[i];
    const auto& b = with[i];
    fmt::print(
        "{:<6} {:>9.1f} {:>9.1f} {:>+9.1f} {:>9.1f} {:>9.1f} {:>+9.1f} {:>+11.1f} {:>+11.1f}\n",
        i + 1, a.p50_us, b.p50_us, b.p50_us - a.p50_us, a.p99_us, b.p99_us, b.p99_us - a.p99_us,
        b.owner_p50_us - a.owner_p50_us, b.other_p50_us - a.other_p50_us);
  }
  fmt::print("(us per pod; the bar: the p50 difference within +20 us)\n");
  return 0;
}
