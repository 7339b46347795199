#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include "koord/http/client.h"
#include "subprocess.h"
#include "temp_tree.h"

using namespace std::chrono_literals;
using koord::testing::run;

namespace {

std::string bin(const std::string& name) {
  return std::string(KOORD_BIN_DIR) + "/" + name;
}

int countLines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

// A blocking HTTP GET for probing a role from the outside.
class Prober {
 public:
  explicit Prober(koord::http::ClientOptions options = {})
      : guard_(boost::asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {
    client_ = std::make_unique<koord::http::Client>(io_, std::move(options));
  }
  ~Prober() {
    client_.reset();
    guard_.reset();
    io_.stop();
    thread_.join();
  }
  koord::Result<koord::http::Response> get(const std::string& url) {
    koord::http::ClientRequest req;
    req.url = url;
    req.timeout = 2s;
    return client_->sendSync(req);
  }
  // Polls until the URL answers at all (the role binds after parsing flags).
  koord::Result<koord::http::Response> waitFor(const std::string& url) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (true) {
      auto r = get(url);
      if (r || std::chrono::steady_clock::now() > deadline)
        return r;
      std::this_thread::sleep_for(50ms);
    }
  }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::thread thread_;
  std::unique_ptr<koord::http::Client> client_;
};

}  // namespace

TEST_CASE("koord --help lists every role with a summary", "[cli]") {
  auto r = run({bin("koord"), "--help"});
  REQUIRE(r.exit_code == 0);
  for (const char* role : {"manager", "scheduler", "descheduler", "koordlet", "device-daemon",
                           "runtime-proxy", "koord-manager", "koord-runtime-proxy"}) {
    INFO(role);
    CHECK(r.out.find(role) != std::string::npos);
  }
  CHECK(r.err.empty());
}

TEST_CASE("koord version prints the version and git commit", "[cli]") {
  auto r = run({bin("koord"), "version"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("koord version ", 0) == 0);
  CHECK(r.out.find("git commit") != std::string::npos);
}

TEST_CASE("symlinks dispatch on argv[0]", "[cli]") {
  auto r = run({bin("koord-scheduler"), "--help"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Usage:\n  koord-scheduler [flags]") != std::string::npos);
  CHECK(r.out.find("--leader-elect") != std::string::npos);
  CHECK(r.out.find("--config string") != std::string::npos);
  for (const char* link : {"koord-manager", "koord-descheduler", "koordlet", "koord-device-daemon",
                           "koord-runtime-proxy"}) {
    INFO(link);
    auto h = run({bin(link), "--help"});
    CHECK(h.exit_code == 0);
    CHECK(h.out.find(std::string("  ") + link + " [flags]") != std::string::npos);
  }
}

// The operator commands run without a cluster on the recording cluster/cli made.
TEST_CASE("operator commands: koord top, and kubectl koord as a plugin", "[cli]") {
  const std::string recording =
      std::string(KOORD_SOURCE_DIR) + "/tests/unit/cli/data/cluster-snapshot.json";
  auto plugin = run({bin("kubectl-koord"), "--help"});
  REQUIRE(plugin.exit_code == 0);
  CHECK(plugin.out.find("Usage:\n  kubectl-koord <command> [flags]\n  kubectl koord <command>") !=
        std::string::npos);
  CHECK(plugin.out.find("snapshot") != std::string::npos);
  auto nodes = run({bin("koord"), "top", "nodes", "--snapshot", recording});
  REQUIRE(nodes.exit_code == 0);
  CHECK(nodes.out.rfind("NAME ", 0) == 0);
  CHECK(nodes.out.find("3500m") != std::string::npos);
  auto pods =
      run({bin("kubectl-koord"), "top", "pods", "-A", "--snapshot", recording, "-o", "yaml"});
  REQUIRE(pods.exit_code == 0);
  CHECK(pods.out.find("priorityClass: koord-batch") != std::string::npos);
  // Usage errors exit 2 naming the word; a file that is not there exits 1 naming it.
  auto none = run({bin("koord"), "top"});
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("nodes or pods") != std::string::npos);
  auto format = run({bin("koord"), "top", "nodes", "--snapshot", recording, "-o", "xml"});
  CHECK(format.exit_code == 2);
  CHECK(format.err.find("\"xml\"") != std::string::npos);
  auto unknown = run({bin("kubectl-koord"), "explode"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("unknown command \"explode\"") != std::string::npos);
  auto missing = run({bin("koord"), "top", "nodes", "--snapshot", "/nonexistent/s.json"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("/nonexistent/s.json: cannot open") != std::string::npos);
}

TEST_CASE("koord explain on the recording: the refusing plugin per node", "[cli]") {
  const std::string recording =
      std::string(KOORD_SOURCE_DIR) + "/tests/unit/cli/data/cluster-snapshot.json";
  std::string ns;
  {
    std::ifstream in(recording);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    const boost::json::value snapshot = boost::json::parse(text);
    for (const auto& item : snapshot.at("items").as_array()) {
      if (item.at("kind").as_string() == "Pod")
        ns = std::string(item.at("metadata").at("namespace").as_string());
    }
  }
  REQUIRE_FALSE(ns.empty());
  auto explain =
      run({bin("kubectl-koord"), "explain", "pod", ns + "/ls-pending", "--snapshot", recording});
  INFO(explain.err);
  REQUIRE(explain.exit_code == 0);
  CHECK(explain.out.find("LoadAwareScheduling   node(s) cpu usage exceed threshold") !=
        std::string::npos);
  CHECK(explain.out.find("fits 1 of 2 node(s)") != std::string::npos);
  auto gone = run({bin("koord"), "explain", "pod", ns + "/nope", "--snapshot", recording});
  CHECK(gone.exit_code == 1);
  CHECK(gone.err.find("pod " + ns + "/nope is not in the snapshot") != std::string::npos);
  auto usage = run({bin("koord"), "explain", "node", "x", "--snapshot", recording});
  CHECK(usage.exit_code == 2);
  CHECK(usage.err.find("explain pod NAMESPACE/NAME") != std::string::npos);
}

TEST_CASE("koord runs the runtime-proxy from its own executable, and loads no gRPC itself",
          "[cli]") {
  auto h = run({bin("koord"), "runtime-proxy", "--help"});
  CHECK(h.exit_code == 0);
  CHECK(h.out.find("Usage:\n  koord-runtime-proxy [flags]") != std::string::npos);
  CHECK(h.out.find("--remote-runtime-service-endpoint") != std::string::npos);

  // Only the runtime-proxy needs gRPC: the roles in koord do not load it at all.
  auto koord_libs = run({"/usr/bin/ldd", bin("koord")});
  REQUIRE(koord_libs.exit_code == 0);
  CHECK(koord_libs.out.find("libgrpc") == std::string::npos);
  CHECK(koord_libs.out.find("libabsl") == std::string::npos);
  auto proxy_libs = run({"/usr/bin/ldd", bin("koord-runtime-proxy")});
  REQUIRE(proxy_libs.exit_code == 0);
  CHECK(proxy_libs.out.find("libgrpc++") != std::string::npos);

  // A copy of koord with nothing beside it, then with a link to itself left by an older
  // install: each says why in one line and exits 127, rather than failing obscurely or looping.
  koord::testing::TempTree tree("koord-exec");
  const auto copy = tree.root() / "koord";
  std::filesystem::copy_file(bin("koord"), copy);
  auto missing = run({copy.string(), "runtime-proxy", "--help"});
  CHECK(missing.exit_code == 127);
  CHECK(countLines(missing.err) == 1);
  CHECK(missing.err.find((tree.root() / "koord-runtime-proxy").string() + ", which is not there") !=
        std::string::npos);
  std::filesystem::create_symlink("koord", tree.root() / "koord-runtime-proxy");
  auto self = run({(tree.root() / "koord-runtime-proxy").string(), "--help"});
  CHECK(self.exit_code == 127);
  CHECK(self.err.find("is a link to koord itself") != std::string::npos);
}

TEST_CASE("an unknown role exits 2 with one line naming it", "[cli]") {
  auto r = run({bin("koord"), "bogus"});
  CHECK(r.exit_code == 2);
  CHECK(countLines(r.err) == 1);
  CHECK(r.err.find("\"bogus\"") != std::string::npos);
  CHECK(r.out.empty());
  auto none = run({bin("koord")});
  CHECK(none.exit_code == 2);
}

TEST_CASE("an unknown flag exits 2 with one line naming it", "[cli]") {
  auto r = run({bin("koord"), "device-daemon", "--oneshot", "--bogus"});
  CHECK(r.exit_code == 2);
  CHECK(countLines(r.err) == 1);
  CHECK(r.err.find("--bogus") != std::string::npos);
  auto go = run({bin("koordlet"), "-bogus=1"}, {{"NODE_NAME", "n"}});
  CHECK(go.exit_code == 2);
  CHECK(go.err.find("-bogus") != std::string::npos);
}

TEST_CASE("bad values exit 2 and name the flag, config faults exit 1", "[cli]") {
  auto gates = run({bin("koord"), "manager", "--feature-gates=Bogus=true"});
  CHECK(gates.exit_code == 2);
  CHECK(gates.err.find("Bogus") != std::string::npos);
  auto lease = run({bin("koord"), "scheduler", "--leader-elect-lease-duration=5s"});
  CHECK(lease.exit_code == 2);
  CHECK(lease.err.find("lease-duration") != std::string::npos);
  auto env = run({bin("koord"), "device-daemon"}, {{"KDD_SLEEP_INTERVAL", "often"}});
  CHECK(env.exit_code == 2);
  CHECK(env.err.find("KDD_SLEEP_INTERVAL") != std::string::npos);
  auto node = run({bin("koordlet"), "-addr=127.0.0.1:0"}, {{"NODE_NAME", std::nullopt}});
  CHECK(node.exit_code == 1);
  CHECK(node.err.find("NODE_NAME") != std::string::npos);
  auto docker = run({bin("koord"), "runtime-proxy", "--backend-runtime-mode=Docker"});
  CHECK(docker.exit_code == 1);
  CHECK(docker.err.find("not supported") != std::string::npos);
  auto port = run(
      {bin("koord"), "manager", "--metrics-addr=127.0.0.1:0", "--health-probe-addr=127.0.0.1:0"},
      {{"WEBHOOK_PORT", "nope"}});
  CHECK(port.exit_code == 1);
  CHECK(port.err.find("WEBHOOK_PORT") != std::string::npos);
  auto policy = run(
      {bin("koord"), "manager", "--metrics-addr=127.0.0.1:0", "--health-probe-addr=127.0.0.1:0"},
      {{"WEBHOOK_CONFIGURATION_FAILURE_POLICY_PODS", "Sometimes"}});
  CHECK(policy.exit_code == 1);
  CHECK(policy.err.find("WEBHOOK_CONFIGURATION_FAILURE_POLICY_PODS=\"Sometimes\"") !=
        std::string::npos);
  // "--feature-gates=" (Koordinator's manifests with no gate set) is no gate, not an error.
  auto no_gates =
      run({bin("koord"), "manager", "--feature-gates=", "--kubeconfig=/nonexistent/kc"});
  CHECK(no_gates.exit_code == 1);
  CHECK(no_gates.err.find("bad flag syntax") == std::string::npos);
}

TEST_CASE("manager without an API server configuration exits 1 saying so", "[cli]") {
  auto r = run({bin("koord"), "manager", "--kubeconfig=/nonexistent/kubeconfig",
                "--metrics-addr=127.0.0.1:0", "--health-probe-addr=127.0.0.1:0"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("/nonexistent/kubeconfig") != std::string::npos);
}

TEST_CASE("manager that cannot reach the API server serves health, stays unready, stops on SIGTERM",
          "[cli]") {
  // A kubeconfig for a port nothing listens on: the manager must wait and retry, never act.
  std::string dir =
      std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/koord-cli-manager";
  std::filesystem::create_directories(dir);
  int dead_port = koord::testing::freeLoopbackPort();
  {
    std::ofstream kc(dir + "/kubeconfig");
    kc << "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
       << "clusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:" << dead_port
       << "\n    insecure-skip-tls-verify: true\n"
       << "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n"
       << "users:\n- name: u\n  user:\n    token: t\n";
  }
  int metrics_port = koord::testing::freeLoopbackPort();
  int health_port = koord::testing::freeLoopbackPort();
  koord::testing::Subprocess manager(
      {bin("koord"), "manager", "--kubeconfig=" + dir + "/kubeconfig",
       "--metrics-addr=127.0.0.1:" + std::to_string(metrics_port),
       "--health-probe-addr=127.0.0.1:" + std::to_string(health_port),
       // One gate koord reads and one it accepts without acting on it.
       "--feature-gates=ConfigMapValidatingWebhook=true,ElasticQuotaEnableUpdateResourceKey=true"},
      {{"WEBHOOK_PORT", std::to_string(koord::testing::freeLoopbackPort())},
       {"WEBHOOK_CERT_DIR", dir + "/certs"}});
  Prober probe;
  auto healthz = probe.waitFor("http://127.0.0.1:" + std::to_string(health_port) + "/healthz");
  REQUIRE(healthz.has_value());
  CHECK(healthz->status == 200);
  auto readyz = probe.get("http://127.0.0.1:" + std::to_string(health_port) + "/readyz");
  REQUIRE(readyz.has_value());
  CHECK(readyz->status == 503);
  CHECK(readyz->body.find("not synced") != std::string::npos);
  auto metrics = probe.get("http://127.0.0.1:" + std::to_string(metrics_port) + "/metrics");
  REQUIRE(metrics.has_value());
  CHECK(metrics->status == 200);
  CHECK(metrics->content_type.find("text/plain; version=0.0.4") != std::string::npos);
  CHECK(metrics->body.find("# TYPE koord_http_server_requests_total counter") != std::string::npos);
  // /metrics lives on the metrics address only, as in Koordinator.
  auto wrong = probe.get("http://127.0.0.1:" + std::to_string(health_port) + "/metrics");
  REQUIRE(wrong.has_value());
  CHECK(wrong->status == 404);

  manager.signal(SIGTERM);
  auto r = manager.wait(15s);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("shutting down (SIGTERM)") != std::string::npos);
  // A gate set but read by nothing says so at startup, once; a gate koord reads does not.
  const std::string no_effect =
      "manager: feature gate ElasticQuotaEnableUpdateResourceKey=true has no effect in koord yet";
  CHECK(r.err.find(no_effect) != std::string::npos);
  CHECK(r.err.find(no_effect) == r.err.rfind(no_effect));
  CHECK(r.err.find("ConfigMapValidatingWebhook=true has no effect") == std::string::npos);
  // Nothing but the health servers may have happened: no certificates without the API server.
  CHECK_FALSE(std::filesystem::exists(dir + "/certs/cert.pem"));
}

namespace {

// What a koordlet needs to start without a node: a cgroup root the kubelet has made kubepods in,
// a sysfs with one CPU, and a kubeconfig for an API server that is not there.
std::vector<std::string> koordletArgs(const std::string& dir, int port) {
  namespace fs = std::filesystem;
  fs::create_directories(dir + "/cgroup/cpu/kubepods/besteffort");
  fs::create_directories(dir + "/sys/devices/system/cpu/cpu0/topology");
  std::ofstream(dir + "/sys/devices/system/cpu/online") << "0\n";
  std::ofstream(dir + "/sys/devices/system/cpu/cpu0/topology/core_id") << "0\n";
  std::ofstream(dir + "/sys/devices/system/cpu/cpu0/topology/physical_package_id") << "0\n";
  std::ofstream(dir + "/kubeconfig")
      << "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n"
      << "    server: https://127.0.0.1:" << koord::testing::freeLoopbackPort()
      << "\n    insecure-skip-tls-verify: true\ncontexts:\n- name: c\n  context:\n"
      << "    cluster: k\n    user: u\nusers:\n- name: u\n  user:\n    token: t\n";
  return {bin("koordlet"), "-addr=127.0.0.1:" + std::to_string(port),
          "-kubeconfig=" + dir + "/kubeconfig", "-cgroup-root-dir=" + dir + "/cgroup",
          "-sys-root-dir=" + dir + "/sys", "-proc-root-dir=/proc",
          // Its checkpoints in the test's directory, never the host's /metric-data.
          "-tsdb-path=" + dir + "/metric-data",
          "-prediction-checkpoint-filepath=" + dir + "/prediction-checkpoints"};
}

}  // namespace

TEST_CASE("a koordlet without its API server serves health, stays unready, stops on SIGINT",
          "[cli]") {
  std::string dir =
      std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/koord-cli-koordlet";
  int port = koord::testing::freeLoopbackPort();
  koord::testing::Subprocess first(koordletArgs(dir, port), {{"NODE_NAME", "node-a"}});
  Prober probe;
  auto up = probe.waitFor("http://127.0.0.1:" + std::to_string(port) + "/healthz");
  REQUIRE(up.has_value());
  CHECK(up->status == 200);
  auto readyz = probe.get("http://127.0.0.1:" + std::to_string(port) + "/readyz");
  REQUIRE(readyz.has_value());
  CHECK(readyz->status == 503);
  CHECK(readyz->body.find("not synced") != std::string::npos);
  // Nothing was written to the cgroups: there is no NodeSLO to act on.
  CHECK_FALSE(std::filesystem::exists(dir + "/cgroup/cpu/kubepods/besteffort/cpu.cfs_quota_us"));

  SECTION("a second one on the same address exits 1 naming it") {
    auto second = run(koordletArgs(dir, port), {{"NODE_NAME", "node-a"}});
    CHECK(second.exit_code == 1);
    CHECK(second.err.find(std::to_string(port)) != std::string::npos);
  }
  first.signal(SIGINT);
  CHECK(first.wait(10s).exit_code == 0);
}

TEST_CASE("a koordlet names each gate that is on without effect once, and exports them all",
          "[cli]") {
  std::string dir =
      std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/koord-cli-koordlet3";
  std::filesystem::remove_all(dir);
  int port = koord::testing::freeLoopbackPort();
  auto args = koordletArgs(dir, port);
  // ColdPageCollector: set on, no code reads it. PerCPUMetric: off by default and set off: no
  // line (every gate on by default is read now; the unit tests cover one set off unread).
  // BECPUSuppress and CPUBurst: on and read.
  args.push_back("-feature-gates=ColdPageCollector=true,PerCPUMetric=false");
  koord::testing::Subprocess koordlet(args, {{"NODE_NAME", "node-a"}});
  Prober probe;
  REQUIRE(probe.waitFor("http://127.0.0.1:" + std::to_string(port) + "/healthz").has_value());
  auto metrics = probe.get("http://127.0.0.1:" + std::to_string(port) + "/metrics");
  REQUIRE(metrics.has_value());
  CHECK(metrics->body.find(
            R"(koordlet_feature_enabled{feature="ColdPageCollector",effective="false"} 1)") !=
        std::string::npos);
  CHECK(metrics->body.find(
            R"(koordlet_feature_enabled{feature="BECPUSuppress",effective="true"} 1)") !=
        std::string::npos);
  CHECK(metrics->body.find(R"(koordlet_feature_enabled{feature="CPUBurst",effective="true"} 1)") !=
        std::string::npos);
  CHECK(metrics->body.find(
            R"(koordlet_feature_enabled{feature="PerCPUMetric",effective="false"} 0)") !=
        std::string::npos);
  koordlet.signal(SIGINT);
  auto r = koordlet.wait(10s);
  CHECK(r.exit_code == 0);
  auto count = [&](std::string_view needle) {
    std::size_t n = 0;
    for (auto at = r.err.find(needle); at != std::string::npos; at = r.err.find(needle, at + 1))
      ++n;
    return n;
  };
  CHECK(
      count(
          "feature gate ColdPageCollector is on but has no effect: not implemented in koord yet") ==
      1);
  // Named once: not also as "ColdPageCollector=true has no effect in koord yet".
  CHECK(count("ColdPageCollector") == 1);
  CHECK(count("PerCPUMetric") == 0);
  CHECK(count("CPUBurst") == 0);
  CHECK(count("BECPUSuppress") == 0);
}

TEST_CASE("a koordlet whose cgroup root has no kubepods yet names the flag", "[cli]") {
  std::string dir =
      std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/koord-cli-koordlet2";
  std::filesystem::remove_all(dir);
  auto args = koordletArgs(dir, koord::testing::freeLoopbackPort());
  args.push_back("-cgroup-root-dir=" + dir + "/missing");
  auto r = run(args, {{"NODE_NAME", "node-a"}});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("-cgroup-root-dir") != std::string::npos);
}

TEST_CASE("scheduler --config: a bad file exits 1 naming the field, before serving anything",
          "[cli]") {
  const std::string dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  const std::string path = dir + "/koord-cli-scheduler-config.yaml";
  {
    std::ofstream f(path);
    f << "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
         "kind: KubeSchedulerConfiguration\n"
         "profiles:\n"
         "  - schedulerName: koord-scheduler\n"
         "    plugins:\n"
         "      filter:\n"
         "        enabled:\n"
         "          - name: NoSuchPlugin\n";
  }
  auto unknown = run({bin("koord"), "scheduler", "--config=" + path, "--port=0"});
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("profiles[0].plugins.filter.enabled[0].name") != std::string::npos);
  CHECK(unknown.err.find("NoSuchPlugin") != std::string::npos);
  {
    std::ofstream f(path);
    f << "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
         "kind: KubeSchedulerConfiguration\n"
         "profiles:\n"
         "  - schedulerName: koord-scheduler\n"
         "    pluginConfig:\n"
         "      - name: LoadAwareScheduling\n"
         "        args:\n"
         "          usageThresholds: {cpu: 65}\n"
         "          bogusField: 1\n";
  }
  auto bad_args = run({bin("koord"), "scheduler", "--config=" + path, "--port=0"});
  CHECK(bad_args.exit_code == 1);
  CHECK(bad_args.err.find("profiles[0].pluginConfig[0].args") != std::string::npos);
  CHECK(bad_args.err.find("bogusField") != std::string::npos);
  std::remove(path.c_str());
  auto missing = run({bin("koord"), "scheduler", "--config=" + path, "--port=0"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find(path) != std::string::npos);
}

TEST_CASE("runtime-proxy: the systemd unit's command serves its socket and stops on SIGTERM",
          "[cli]") {
  std::ifstream unit(std::string(KOORD_SOURCE_DIR) + "/deploy/systemd/koord-runtime-proxy.service");
  REQUIRE(unit.good());
  std::string text, line, exec;
  for (bool continued = false; std::getline(unit, line);) {
    text += line + "\n";
    if (line.rfind("ExecStart=", 0) == 0 || continued) {
      continued = !line.empty() && line.back() == '\\';
      exec += (exec.empty() ? line.substr(10) : line) + " ";
      if (continued)
        exec.erase(exec.size() - 2);
    }
  }
  CHECK(text.find("\nRestart=always\n") != std::string::npos);
  CHECK(text.find("\nBefore=kubelet.service\n") != std::string::npos);
  CHECK(text.find("\nAfter=containerd.service\n") != std::string::npos);

  // The unit's own argv, with its paths moved under a temp dir.
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("koord-cli-proxy-" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(dir);
  std::vector<std::string> argv;
  std::istringstream words(exec);
  for (std::string w; words >> w;) {
    if (w == "/usr/local/bin/koord-runtime-proxy")
      w = bin("koord-runtime-proxy");
    for (const std::string from : {"/var/run/koord-runtimeproxy/", "/var/run/containerd/"}) {
      if (auto at = w.find(from); at != std::string::npos)
        w.replace(at, from.size(), dir + "/");
    }
    argv.push_back(w);
  }
  REQUIRE(argv.size() >= 3);
  CHECK(argv[0] == bin("koord-runtime-proxy"));
  argv.push_back("--hook-server-config-dir=" + dir + "/hookserver.d");
  const std::string socket = dir + "/runtimeproxy.sock";
  koord::testing::Subprocess proxy(argv);
  bool serving = false;
  for (int i = 0; i < 100 && !serving; ++i) {
    serving = std::filesystem::exists(socket);
    if (!serving)
      std::this_thread::sleep_for(100ms);
  }
  CHECK(serving);
  CHECK(std::filesystem::is_directory(dir + "/hookserver.d"));
  proxy.signal(SIGTERM);
  auto r = proxy.wait(20s);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(socket));  // removed on the way out
  std::filesystem::remove_all(dir);
}

TEST_CASE("koord descheduler --write-config-to writes the effective configuration", "[cli]") {
  koord::testing::TempTree tree("koord-desched-cli");
  tree.write("config.yaml", R"(apiVersion: descheduler/v1alpha2
kind: DeschedulerConfiguration
deschedulingInterval: 30s
dryRun: true
maxNoOfPodsToEvictPerNode: 2
)");
  auto r = run({bin("koord"), "descheduler", "--config", tree.path("config.yaml").string(),
                "--write-config-to", tree.path("out.json").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string out = tree.read("out.json");
  CHECK(out.find(R"("deschedulingInterval":"30s")") != std::string::npos);
  CHECK(out.find(R"("dryRun":true)") != std::string::npos);
  CHECK(out.find(R"("maxNoOfPodsToEvictPerNode":2)") != std::string::npos);
  CHECK(out.find(R"("resourceName":"koord-descheduler")") != std::string::npos);
  CHECK(out.find(R"("name":"koord-descheduler")") != std::string::npos);
}

TEST_CASE(
    "koord descheduler serves health and metrics over HTTPS on --secure-port with a self-signed "
    "certificate kept in --cert-dir",
    "[cli]") {
  const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                          "/koord-cli-descheduler-tls";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    std::ofstream kc(dir + "/kubeconfig");
    kc << "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
       << "clusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:"
       << koord::testing::freeLoopbackPort() << "\n    insecure-skip-tls-verify: true\n"
       << "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n"
       << "users:\n- name: u\n  user:\n    token: t\n";
    std::ofstream cfg(dir + "/config.yaml");
    cfg << "apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\n"
        << "clientConnection: {kubeconfig: " << dir << "/kubeconfig}\n";
  }
  const int port = koord::testing::freeLoopbackPort();
  koord::testing::Subprocess descheduler(
      {bin("koord"), "descheduler", "--config=" + dir + "/config.yaml", "--port=0",
       "--bind-address=127.0.0.1", "--secure-port=" + std::to_string(port),
       "--cert-dir=" + dir + "/certs", "--tls-min-version=VersionTLS12"});
  koord::http::ClientOptions tls;
  tls.insecure_skip_verify = true;
  Prober probe(tls);
  const std::string base = "https://127.0.0.1:" + std::to_string(port);
  auto healthz = probe.waitFor(base + "/healthz");
  REQUIRE(healthz.has_value());
  CHECK(healthz->status == 200);
  auto metrics = probe.get(base + "/metrics");
  REQUIRE(metrics.has_value());
  CHECK(metrics->status == 200);
  CHECK(std::filesystem::exists(dir + "/certs/apiserver.crt"));
  CHECK(std::filesystem::exists(dir + "/certs/apiserver.key"));
  // Plain HTTP on the secure port gets no answer.
  Prober plain;
  CHECK_FALSE(plain.get("http://127.0.0.1:" + std::to_string(port) + "/healthz").has_value());
  descheduler.signal(SIGTERM);
  auto r = descheduler.wait(15s);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("descheduler: flag --tls-min-version has no effect in koord") !=
        std::string::npos);

  // Without --cert-dir the pair lives in memory (the root filesystem may be read-only).
  const int port2 = koord::testing::freeLoopbackPort();
  koord::testing::Subprocess in_memory(
      {bin("koord"), "descheduler", "--config=" + dir + "/config.yaml", "--port=0",
       "--bind-address=127.0.0.1", "--secure-port=" + std::to_string(port2)},
      {{"TMPDIR", dir + "/no-such-dir"}});
  auto again = probe.waitFor("https://127.0.0.1:" + std::to_string(port2) + "/healthz");
  REQUIRE(again.has_value());
  CHECK(again->status == 200);
  in_memory.signal(SIGTERM);
  CHECK(in_memory.wait(15s).exit_code == 0);

  auto half = run({bin("koord"), "descheduler", "--tls-cert-file=" + dir + "/certs/apiserver.crt"});
  CHECK(half.exit_code == 2);
  CHECK(half.err.find("--tls-private-key-file") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("koord descheduler refuses a bad configuration at startup, naming the field", "[cli]") {
  koord::testing::TempTree tree("koord-desched-cli");
  tree.write("config.yaml", "deschedulingInterval: soon\n");
  auto r =
      run({bin("koord"), "descheduler", "--config", tree.path("config.yaml").string(), "--port=0"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("deschedulingInterval") != std::string::npos);
  tree.write("plugins.yaml",
             "profiles: [{name: p, plugins: {balance: {enabled: [{name: Nope}]}}}]\n");
  auto p = run(
      {bin("koord"), "descheduler", "--config", tree.path("plugins.yaml").string(), "--port=0"});
  CHECK(p.exit_code == 1);
  CHECK(p.err.find("Nope") != std::string::npos);
}
