// /mutate-pod under load: AdmissionReviews POSTed over TLS at a fixed rate (open loop, so a slow
// answer cannot slow the sender down and hide itself) to koord-manager's webhook server running
// on one pinned core with 3 ClusterColocationProfiles; prints p50/p90/p99/max and server CPU.
//
//   koord_bench_webhook [--rate 1000] [--seconds 30] [--connections 8]
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench_stats.h"
#include "koord/apis/colocation_profile.h"
#include "koord/core/metrics.h"
#include "koord/http/cert.h"
#include "koord/http/client.h"
#include "koord/http/file_util.h"
#include "webhook/admission_review.h"
#include "webhook/pod_mutating.h"
#include "webhookserver/webhook_server.h"

namespace json = boost::json;
namespace wh = koord::manager::webhook;
using Clock = std::chrono::steady_clock;

namespace {

void pin(int cpu) {
  // KOORD_BENCH_NOPIN=1 leaves placement to the scheduler, to tell pinning effects apart.
  if (std::getenv("KOORD_BENCH_NOPIN") != nullptr)
    return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu % std::max(1u, std::thread::hardware_concurrency()), &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

double threadCpuSeconds(pid_t tid) {
  std::ifstream stat(fmt::format("/proc/self/task/{}/stat", tid));
  std::string content((std::istreambuf_iterator<char>(stat)), {});
  auto close = content.rfind(')');
  if (close == std::string::npos)
    return 0;
  std::vector<std::string> fields;
  std::string field;
  for (char c : content.substr(close + 2)) {
    if (c == ' ') {
      fields.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  // After ")": state is field 0, utime field 11, stime field 12 (stat(5) fields 14 and 15).
  if (fields.size() < 13)
    return 0;
  return static_cast<double>(std::stoll(fields[11]) + std::stoll(fields[12])) /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::vector<std::shared_ptr<const koord::apis::ClusterColocationProfile>> profiles() {
  std::vector<std::shared_ptr<const koord::apis::ClusterColocationProfile>> out;
  // Three profiles as operators write them: one matches the benchmark's pods, two do not.
  const char* specs[] = {
      R"({"metadata":{"name":"batch-jobs"},"spec":{"namespaceSelector":{"matchLabels":
         {"koordinator.sh/enable-colocation":"true"}},"selector":{"matchLabels":
         {"app.kubernetes.io/component":"spark-executor"}},"qosClass":"BE",
         "priorityClassName":"koord-batch","koordinatorPriority":1000,
         "schedulerName":"koord-scheduler","labels":{"koordinator.sh/mutated":"true"}}})",
      R"({"metadata":{"name":"mid-services"},"spec":{"selector":{"matchLabels":
         {"tier":"mid"}},"qosClass":"LS","priorityClassName":"koord-mid"}})",
      R"({"metadata":{"name":"sampled"},"spec":{"namespaceSelector":{"matchExpressions":[
         {"key":"team","operator":"In","values":["ads","search"]}]},"probability":"10%",
         "qosClass":"BE","priorityClassName":"koord-batch"}})",
  };
  for (const char* s : specs) {
    auto p = koord::apis::decodeClusterColocationProfile(json::parse(s));
    if (!p) {
      std::fprintf(stderr, "profile: %s\n", p.error().message.c_str());
      std::exit(1);
    }
    out.push_back(std::make_shared<const koord::apis::ClusterColocationProfile>(std::move(*p)));
  }
  return out;
}

std::string review(int i) {
  json::object pod{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", fmt::format("spark-exec-{}", i)},
        {"namespace", "spark"},
        {"labels",
         {{"app.kubernetes.io/component", "spark-executor"}, {"spark-role", "executor"}}}}},
      {"spec",
       {{"containers",
         json::array{json::object{
             {"name", "executor"},
             {"image", "spark:3.5"},
             {"env", json::array{json::object{{"name", "SPARK_EXECUTOR_ID"}, {"value", "1"}}}},
             {"resources",
              {{"requests", {{"cpu", "1"}, {"memory", "4Gi"}}},
               {"limits", {{"cpu", "2"}, {"memory", "4Gi"}}}}}}}},
        {"restartPolicy", "Never"}}}};
  return json::serialize(
      json::object{{"apiVersion", "admission.k8s.io/v1"},
                   {"kind", "AdmissionReview"},
                   {"request",
                    {{"uid", fmt::format("0000-{}", i)},
                     {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                     {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
                     {"namespace", "spark"},
                     {"operation", "CREATE"},
                     {"userInfo", {{"username", "system:serviceaccount:spark:spark"}}},
                     {"object", std::move(pod)},
                     {"dryRun", false}}}});
}

}  // namespace

int main(int argc, char** argv) {
  int rate = 1000;
  int seconds = 30;
  int connections = 8;
  bool trivial = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--trivial")
      trivial = true;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    int v = std::atoi(argv[i + 1]);
    if (flag == "--rate")
      rate = v;
    else if (flag == "--seconds")
      seconds = v;
    else if (flag == "--connections")
      connections = v;
  }

  // A serving certificate as the manager would issue it.
  auto dir =
      std::filesystem::temp_directory_path() / fmt::format("koord-bench-webhook-{}", getpid());
  std::filesystem::create_directories(dir);
  auto ca = koord::http::generateCA("bench-ca", std::chrono::hours(24));
  auto serving = koord::http::generateServingCert(ca, "localhost", {"localhost"}, {"127.0.0.1"},
                                                  std::chrono::hours(24));
  (void)koord::http::writeFileAtomic((dir / "cert.pem").string(), serving.cert_pem);
  (void)koord::http::writeFileAtomic((dir / "key.pem").string(), serving.key_pem);

  // The server: one io thread pinned to CPU 0, as "on one core" asks.
  boost::asio::io_context server_io;
  auto server_guard = boost::asio::make_work_guard(server_io);
  koord::metrics::Registry registry;
  koord::roles::manager::WebhookServerOptions so;
  so.address = "127.0.0.1:0";
  so.cert_file = (dir / "cert.pem").string();
  so.key_file = (dir / "key.pem").string();
  koord::roles::manager::WebhookServer server(server_io, so, registry);
  wh::PodMutatingContext ctx;
  auto profile_list = profiles();
  ctx.profiles = [profile_list] { return profile_list; };
  ctx.namespace_labels = [](std::string_view) -> std::optional<koord::kube::Labels> {
    return koord::kube::Labels{{"koordinator.sh/enable-colocation", "true"}, {"team", "data"}};
  };
  ctx.priority_class = [](std::string_view name) -> std::optional<wh::PriorityClassInfo> {
    if (name == "koord-batch")
      return wh::PriorityClassInfo{5000, "PreemptLowerPriority"};
    if (name == "koord-mid")
      return wh::PriorityClassInfo{7000, "PreemptLowerPriority"};
    return std::nullopt;
  };
  auto handler = wh::podMutatingHandler(ctx);
  {
    // The admission logic alone, without HTTP and TLS: what each request costs at least.
    const std::string body = review(0);
    const int n = 20000;
    auto t0 = std::chrono::steady_clock::now();
    std::size_t bytes = 0;
    for (int i = 0; i < n; ++i)
      bytes += wh::serve(body, handler).body.size();
    double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
        n;
    std::printf("admission logic alone: %.1f us per review (%zu bytes answered)\n", us, bytes / n);
  }
  // --trivial answers a fixed review: the HTTP and TLS stack's own cost, for comparison.
  const std::string fixed = wh::serve(review(0), handler).body;
  server.handle("/mutate-pod", [handler, trivial, fixed](std::string_view body) {
    if (trivial)
      return koord::roles::manager::AdmissionAnswer{200, fixed, "patched"};
    auto r = wh::serve(body, handler);
    return koord::roles::manager::AdmissionAnswer{r.http_status, std::move(r.body),
                                                  std::move(r.outcome)};
  });
  server.start();
  std::atomic<pid_t> server_tid{0};
  std::thread server_thread([&] {
    pin(0);
    server_tid = static_cast<pid_t>(syscall(SYS_gettid));
    server_io.run();
  });

  // The client: its own io thread on the other core.
  boost::asio::io_context client_io;
  auto client_guard = boost::asio::make_work_guard(client_io);
  koord::http::ClientOptions co;
  co.ca_pem = ca.cert_pem;
  co.max_idle_per_host = static_cast<std::size_t>(connections);
  koord::http::Client client(client_io, co);
  std::atomic<pid_t> client_tid{0};
  std::thread client_thread([&] {
    pin(1);
    client_tid = static_cast<pid_t>(syscall(SYS_gettid));
    client_io.run();
  });

  // The sender shares the client's core: the server's core runs nothing but the server.
  pin(1);
  const std::string url = fmt::format("https://127.0.0.1:{}/mutate-pod", server.port());
  std::vector<std::string> bodies;
  for (int i = 0; i < 64; ++i)
    bodies.push_back(review(i));
  auto post = [&](int i, std::function<void(bool ok)> done) {
    koord::http::ClientRequest req;
    req.method = "POST";
    req.url = url;
    req.headers = {{"Content-Type", "application/json"}};
    req.body = bodies[static_cast<std::size_t>(i) % bodies.size()];
    req.timeout = std::chrono::milliseconds(10000);
    client.send(std::move(req), [done = std::move(done)](koord::Result<koord::http::Response> r) {
      done(r && r->status == 200 && r->body.find("\"patch\"") != std::string::npos);
    });
  };
  // Warm-up: connections, TLS sessions, caches.
  for (int i = 0; i < 200; ++i) {
    std::promise<bool> p;
    post(i, [&p](bool ok) { p.set_value(ok); });
    if (!p.get_future().get()) {
      std::fprintf(stderr, "warm-up request %d failed\n", i);
      return 1;
    }
  }

  const int total = rate * seconds;
  std::vector<double> latencies_ms(static_cast<std::size_t>(total), -1);
  // From the moment the request was written to the pool: the server's share of the latency,
  // without the sender's own lateness (a sleeping thread on a busy VM wakes up late).
  std::vector<double> service_ms(static_cast<std::size_t>(total), -1);
  std::atomic<int> completed{0};
  std::atomic<int> failed{0};
  std::promise<void> all_done;
  // Like the apiserver's client, at most `connections` requests are in flight (each on its own
  // keep-alive connection); the rest wait their turn, and that wait counts in their latency.
  std::mutex queue_mu;
  std::deque<std::pair<int, Clock::time_point>> waiting;
  int in_flight = 0;
  std::function<void(int, Clock::time_point)> launch;
  launch = [&](int i, Clock::time_point due) {
    auto sent = Clock::now();
    post(i, [&, i, due, sent](bool ok) {
      service_ms[static_cast<std::size_t>(i)] =
          std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
      // From when the request was due, not when it was sent: coordinated omission counts.
      latencies_ms[static_cast<std::size_t>(i)] =
          std::chrono::duration<double, std::milli>(Clock::now() - due).count();
      if (!ok)
        ++failed;
      std::optional<std::pair<int, Clock::time_point>> next;
      {
        std::lock_guard lock(queue_mu);
        if (!waiting.empty()) {
          next = waiting.front();
          waiting.pop_front();
        } else {
          --in_flight;
        }
      }
      if (next)
        launch(next->first, next->second);
      if (++completed == total)
        all_done.set_value();
    });
  };
  // One sample of steal per second of the run (window w covers requests due in [w, w+1) s).
  koord::bench::StealSampler steal(Clock::now(), [] { pin(1); });
  double cpu_before = threadCpuSeconds(server_tid);
  double client_cpu_before = threadCpuSeconds(client_tid);
  auto start = Clock::now();
  const auto interval = std::chrono::nanoseconds(1'000'000'000 / rate);
  for (int i = 0; i < total; ++i) {
    auto due = start + interval * i;
    std::this_thread::sleep_until(due);
    {
      std::lock_guard lock(queue_mu);
      if (in_flight >= connections) {
        waiting.emplace_back(i, due);
        continue;
      }
      ++in_flight;
    }
    launch(i, due);
  }
  all_done.get_future().wait();
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  double cpu = threadCpuSeconds(server_tid) - cpu_before;
  double client_cpu = threadCpuSeconds(client_tid) - client_cpu_before;
  steal.stop();
  std::vector<double> quiet_ms;
  for (int i = 0; i < total; ++i) {
    auto w = static_cast<std::size_t>(i / rate);
    if (steal.quiet(static_cast<int>(w)))
      quiet_ms.push_back(latencies_ms[static_cast<std::size_t>(i)]);
  }

  std::sort(latencies_ms.begin(), latencies_ms.end());
  std::sort(service_ms.begin(), service_ms.end());
  auto pct_of = [&](const std::vector<double>& v, double p) {
    return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(total)))];
  };
  auto pct = [&](double p) { return pct_of(latencies_ms, p); };
  std::printf(
      "koord-manager /mutate-pod over TLS, 3 ClusterColocationProfiles, server on 1 core\n");
  std::printf(
      "| rate/s | requests | failed | p50 ms | p90 ms | p99 ms | max ms | server CPU %% |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::printf("| %d | %d | %d | %.3f | %.3f | %.3f | %.3f | %.1f |\n", rate, total, failed.load(),
              pct(0.50), pct(0.90), pct(0.99), latencies_ms.back(), 100.0 * cpu / wall);
  std::printf("from send to answer: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms\n",
              pct_of(service_ms, 0.5), pct_of(service_ms, 0.9), pct_of(service_ms, 0.99),
              service_ms.back());
  std::printf(
      "server CPU: %.2f s over %.1f s wall (%.1f us per request); %zu connections; "
      "load generator's io thread %.1f%% CPU\n",
      cpu, wall, 1e6 * cpu / total, client.connectionsOpened(), 100.0 * client_cpu / wall);

  const long ticks_per_s = sysconf(_SC_CLK_TCK);
  std::printf("hypervisor steal during the run: %.1f%% of both CPUs; %zu of %zu seconds had none\n",
              100.0 * static_cast<double>(steal.totalTicks()) /
                  (static_cast<double>(ticks_per_s) * wall *
                   static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)))),
              static_cast<std::size_t>(steal.quietSeconds()),
              static_cast<std::size_t>(steal.seconds()));
  if (!quiet_ms.empty()) {
    std::sort(quiet_ms.begin(), quiet_ms.end());
    auto q = [&](double p) {
      return quiet_ms[std::min(quiet_ms.size() - 1,
                               static_cast<std::size_t>(p * static_cast<double>(quiet_ms.size())))];
    };
    std::printf(
        "requests due in steal-free seconds (%zu): p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, "
        "max %.3f ms\n",
        quiet_ms.size(), q(0.5), q(0.9), q(0.99), quiet_ms.back());
  }
  if (std::getenv("KOORD_BENCH_METRICS") != nullptr)
    std::printf("%s", registry.render().c_str());
  client_guard.reset();
  server.stop();
  server_guard.reset();
  client_io.stop();
  server_io.stop();
  client_thread.join();
  server_thread.join();
  std::filesystem::remove_all(dir);
  return failed.load() == 0 ? 0 : 1;
}
