// Smoke tests against the real local Kubernetes that tests/cluster/cluster.sh starts: they prove
// the harness works (and koord's HTTP client speaks to a real apiserver) before anything larger
// is built on it. The env file named by KOORD_CLUSTER_ENV says where the cluster is.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/http/client.h"
#include "subprocess.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::testing::needEnv;
using koord::testing::readClusterEnv;
using koord::testing::str;
using koord::testing::uniqueName;

namespace {

// A client for the test cluster's apiserver: its CA, its admin token, an io_context on a thread
// of its own so that sendSync can block the test's thread.
class Api {
 public:
  explicit Api(const std::map<std::string, std::string>& env)
      : base_(needEnv(env, "KOORD_APISERVER")),
        token_(needEnv(env, "KOORD_TOKEN")),
        guard_(boost::asio::make_work_guard(io_)),
        thread_([this] { io_.run(); }) {
    koord::http::ClientOptions options;
    options.ca_file = needEnv(env, "KOORD_CA_FILE");
    options.request_timeout = 15s;
    client_ = std::make_unique<koord::http::Client>(io_, options);
  }
  ~Api() {
    client_.reset();
    guard_.reset();
    io_.stop();
    thread_.join();
  }
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  koord::http::Response call(const std::string& method, const std::string& path,
                             const std::string& body = "", const std::string& token = "") {
    koord::http::ClientRequest req;
    req.method = method;
    req.url = base_ + path;
    req.headers = {{"Authorization", "Bearer " + (token.empty() ? token_ : token)},
                   {"Accept", "application/json"}};
    if (!body.empty())
      req.headers.emplace_back("Content-Type", "application/json");
    req.body = body;
    auto r = client_->sendSync(req);
    if (!r)
      FAIL(method << " " << req.url << " failed: " << r.error().message());
    return std::move(r).value();
  }

  // Polls GET `path` until `done(status, body)` or the deadline; returns the last response.
  template <typename Done>
  koord::http::Response waitFor(const std::string& path, std::chrono::seconds limit, Done done) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
      auto r = call("GET", path);
      if (done(r) || std::chrono::steady_clock::now() > deadline)
        return r;
      std::this_thread::sleep_for(500ms);
    }
  }

 private:
  std::string base_, token_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::thread thread_;
  std::unique_ptr<koord::http::Client> client_;
};

json::value parse(const koord::http::Response& r) {
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec)
    FAIL("response is not JSON (" << ec.message() << "): " << r.body);
  return v;
}

}  // namespace

TEST_CASE("the apiserver serves /version as Kubernetes v1.20.2 over verified TLS", "[cluster]") {
  Api api(readClusterEnv());
  auto r = api.call("GET", "/version");
  REQUIRE(r.status == 200);
  auto v = parse(r);
  CHECK(str(v, {"gitVersion"}) == "v1.20.2");
  CHECK(str(v, {"major"}) == "1");
  CHECK(str(v, {"minor"}) == "20");
}

TEST_CASE("the apiserver authenticates: a wrong token is refused with 401", "[cluster]") {
  Api api(readClusterEnv());
  auto r = api.call("GET", "/api/v1/namespaces", "", "not-the-token");
  CHECK(r.status == 401);
  auto ok = api.call("GET", "/api/v1/namespaces");
  CHECK(ok.status == 200);
}

TEST_CASE("a Namespace is created, read back, refused twice and deleted", "[cluster]") {
  Api api(readClusterEnv());
  const std::string name = uniqueName("koord-smoke");
  const std::string body =
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + name + R"("}})";

  auto created = api.call("POST", "/api/v1/namespaces", body);
  INFO(created.body);
  REQUIRE(created.status == 201);
  CHECK(str(parse(created), {"metadata", "name"}) == name);

  auto got = api.call("GET", "/api/v1/namespaces/" + name);
  CHECK(got.status == 200);
  auto v = parse(got);
  CHECK(str(v, {"metadata", "name"}) == name);
  CHECK(str(v, {"status", "phase"}) == "Active");
  CHECK_FALSE(str(v, {"metadata", "uid"}).empty());

  auto again = api.call("POST", "/api/v1/namespaces", body);
  CHECK(again.status == 409);
  CHECK(str(parse(again), {"reason"}) == "AlreadyExists");

  auto deleted = api.call("DELETE", "/api/v1/namespaces/" + name);
  CHECK(deleted.status == 200);
  // The namespace controller (kube-controller-manager) finishes the deletion.
  auto gone = api.waitFor("/api/v1/namespaces/" + name, 90s,
                          [](const koord::http::Response& r) { return r.status == 404; });
  INFO(gone.body);
  CHECK(gone.status == 404);
}

namespace {

// A pod the test node can run: host network (its CNI is loopback only), the local image.
json::object sleepPod(const std::string& name, const std::string& node, const std::string& image) {
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"nodeName", node},
        {"hostNetwork", true},
        {"terminationGracePeriodSeconds", 1},
        {"containers", json::array{json::object{{"name", "sleep"},
                                                {"image", image},
                                                {"imagePullPolicy", "Never"},
                                                {"command", json::array{"sleep", "3600"}}}}}}}};
}

// Registers `endpoint` as hookserver.d/`file` for the two pod-start hooks under `policy`,
// renamed into place as an operator's tooling would, and gives the proxy's inotify a second.
void registerHookServer(const std::string& hooks, const std::string& file,
                        const std::string& endpoint, const std::string& policy) {
  const std::string tmp = hooks + "/." + file + ".tmp";
  std::ofstream(tmp) << R"({"remote-endpoint": ")" << endpoint << R"(", )"
                     << R"("failure-policy": ")" << policy
                     << R"(", "runtime-hooks": ["PreRunPodSandbox", "PreCreateContainer"]})";
  REQUIRE(std::rename(tmp.c_str(), (hooks + "/" + file).c_str()) == 0);
  std::this_thread::sleep_for(1s);  // inotify
}

// Creates a sleep pod `name` on the node in "default"; its API path.
std::string createSleepPod(Api& api, const std::string& name, const std::string& node,
                           const std::string& image) {
  REQUIRE(api.call("POST", "/api/v1/namespaces/default/pods",
                   json::serialize(sleepPod(name, node, image)))
              .status == 201);
  return "/api/v1/namespaces/default/pods/" + name;
}

// The pod's Events once one of them holds `text` (the last answer when none does in time).
std::string podEventsWith(Api& api, const std::string& pod, const std::string& text) {
  return api
      .waitFor("/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D" + pod, 90s,
               [&](const koord::http::Response& r) {
                 return r.status == 200 && r.body.find(text) != std::string::npos;
               })
      .body;
}

}  // namespace

TEST_CASE("a hostNetwork busybox pod runs on the node and is deleted", "[node]") {
  auto env = readClusterEnv();
  const std::string node = needEnv(env, "KOORD_NODE_NAME");
  const std::string image = needEnv(env, "KOORD_TEST_IMAGE");
  Api api(env);

  auto n = api.call("GET", "/api/v1/nodes/" + node);
  REQUIRE(n.status == 200);

  const std::string name = uniqueName("koord-smoke-pod");
  const std::string path = "/api/v1/namespaces/default/pods/" + name;
  auto created = api.call("POST", "/api/v1/namespaces/default/pods",
                          json::serialize(sleepPod(name, node, image)));
  INFO(created.body);
  REQUIRE(created.status == 201);

  auto running = api.waitFor(path, 120s, [](const koord::http::Response& r) {
    return r.status == 200 && str(parse(r), {"status", "phase"}) == "Running";
  });
  {
    INFO(running.body);
    CHECK(running.status == 200);
    CHECK(str(parse(running), {"status", "phase"}) == "Running");
  }

  auto deleted = api.call("DELETE", path);
  CHECK(deleted.status == 200);
  // Gone only once the kubelet has stopped the container and confirmed it.
  auto gone =
      api.waitFor(path, 90s, [](const koord::http::Response& r) { return r.status == 404; });
  INFO(gone.body);
  CHECK(gone.status == 404);
}

// kubelet talks CRI through koord runtime-proxy here (cluster/node-up). A hook server that is
// registered but down must not stop pods under failure-policy Ignore, and must refuse them
// (with Koordinator's "hook server err") under Fail.
TEST_CASE("runtime-proxy with a dead hook server: Ignore starts pods and Fail refuses them",
          "[node]") {
  auto env = readClusterEnv();
  const std::string node = needEnv(env, "KOORD_NODE_NAME");
  const std::string image = needEnv(env, "KOORD_TEST_IMAGE");
  const std::string hooks = needEnv(env, "KOORD_CLUSTER_DIR") + "/hookserver.d";
  Api api(env);
  // Sorts first, so it is the server the proxy picks for these hooks.
  const std::string registration = hooks + "/0-dead.json";
  auto registerDead = [&](const std::string& policy) {
    registerHookServer(hooks, "0-dead.json", hooks + "/nobody-listens.sock", policy);
  };
  struct Unregister {
    std::string file;
    ~Unregister() { std::remove(file.c_str()); }
  } unregister{registration};

  registerDead("Ignore");
  const std::string ignored = uniqueName("koord-hook-ignore");
  const std::string ignored_path = createSleepPod(api, ignored, node, image);
  auto running = api.waitFor(ignored_path, 120s, [](const koord::http::Response& r) {
    return r.status == 200 && str(parse(r), {"status", "phase"}) == "Running";
  });
  CHECK(str(parse(running), {"status", "phase"}) == "Running");

  registerDead("Fail");
  const std::string refused = uniqueName("koord-hook-fail");
  const std::string refused_path = createSleepPod(api, refused, node, image);
  const std::string events = podEventsWith(api, refused, "hook server err");
  INFO(events);
  CHECK(events.find("FailedCreatePodSandBox") != std::string::npos);
  CHECK(events.find("hook server err") != std::string::npos);
  CHECK(str(parse(api.call("GET", refused_path)), {"status", "phase"}) == "Pending");

  for (const auto& path : {ignored_path, refused_path})
    api.call("DELETE", path + "?gracePeriodSeconds=0");
  CHECK(
      api.waitFor(ignored_path, 90s, [](const koord::http::Response& r) { return r.status == 404; })
          .status == 404);
}

namespace {

std::string containerId(const json::value& pod) {
  const auto* statuses = pod.at("status").as_object().if_contains("containerStatuses");
  if (statuses == nullptr || !statuses->is_array() || statuses->as_array().empty())
    return {};
  return str(statuses->as_array().front(), {"containerID"});
}

// `kubectl exec`: the CRI Exec call goes through the proxy, the stream to containerd's
// streaming server that it names.
koord::testing::ProcessResult kubectlExec(const std::map<std::string, std::string>& env,
                                          const std::string& pod,
                                          const std::vector<std::string>& command) {
  std::vector<std::string> argv{needEnv(env, "KOORD_K8S_BIN") + "/kubectl",
                                "--kubeconfig",
                                needEnv(env, "KOORD_KUBECONFIG"),
                                "--request-timeout=30s",
                                "-n",
                                "default",
                                "exec",
                                pod,
                                "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return koord::testing::run(argv, {}, 60s);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

// The whole path kubelet -> runtime-proxy -> containerd for a running pod: its log, exec with
// stdin and stdout streams; then the proxy is restarted under it. Nothing may be lost: the same
// container keeps running, un-restarted; exec and logs still work; the new proxy knows the
// pod from the runtime; and the pod is stopped and removed through it.
// Reliability check 23 with containerd: a hook server that takes the connection and never
// answers (a socket nobody accepts on) costs a pod's start the hook deadline under Ignore and
// fails it at the deadline under Fail, instead of holding the kubelet's call.
TEST_CASE(
    "runtime-proxy with a hung hook server: Ignore starts pods, Fail refuses them at the "
    "deadline",
    "[node]") {
  auto env = readClusterEnv();
  const std::string node = needEnv(env, "KOORD_NODE_NAME");
  const std::string image = needEnv(env, "KOORD_TEST_IMAGE");
  const std::string cluster_dir = needEnv(env, "KOORD_CLUSTER_DIR");
  const std::string hooks = cluster_dir + "/hookserver.d";
  Api api(env);

  const std::string socket_path = hooks + "/hung.sock";
  std::remove(socket_path.c_str());
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  REQUIRE(socket_path.size() < sizeof addr.sun_path);
  std::copy(socket_path.begin(), socket_path.end(), addr.sun_path);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 64) == 0);  // connections wait in the backlog, never served
  const std::string registration = hooks + "/0-hung.json";
  struct Cleanup {
    int fd;
    std::string registration, socket;
    ~Cleanup() {
      std::remove(registration.c_str());
      ::close(fd);
      std::remove(socket.c_str());
    }
  } cleanup{listener, registration, socket_path};
  auto registerHung = [&](const std::string& policy) {
    registerHookServer(hooks, "0-hung.json", socket_path, policy);
  };
  auto proxyLogLines = [&](const std::string& pod) {
    std::vector<std::string> lines;
    std::istringstream log(readFile(cluster_dir + "/before-kubelet.log"));
    for (std::string line; std::getline(log, line);) {
      if (line.find(pod) != std::string::npos &&
          line.find("deadline exceeded") != std::string::npos)
        lines.push_back(line);
    }
    return lines;
  };

  registerHung("Ignore");
  const std::string ignored = uniqueName("koord-hung-ignore");
  const std::string ignored_path = createSleepPod(api, ignored, node, image);
  auto running = api.waitFor(ignored_path, 120s, [](const koord::http::Response& r) {
    return r.status == 200 && str(parse(r), {"status", "phase"}) == "Running";
  });
  CHECK(str(parse(running), {"status", "phase"}) == "Running");
  // Both hooks waited for the hung server and gave up at the proxy's deadline (the default
  // --hook-server-timeout), not at the kubelet's.
  const auto ignored_lines = proxyLogLines(ignored);
  INFO(readFile(cluster_dir + "/before-kubelet.log"));
  REQUIRE(ignored_lines.size() >= 2);
  for (const auto& line : ignored_lines) {
    CHECK(line.find("deadline exceeded after 1000 ms") != std::string::npos);
    CHECK(line.find("going on without it") != std::string::npos);
  }

  registerHung("Fail");
  const std::string refused = uniqueName("koord-hung-fail");
  const std::string refused_path = createSleepPod(api, refused, node, image);
  const std::string events = podEventsWith(api, refused, "deadline exceeded");
  INFO(events);
  CHECK(events.find("FailedCreatePodSandBox") != std::string::npos);
  CHECK(events.find("deadline exceeded after 1000 ms") != std::string::npos);
  CHECK(str(parse(api.call("GET", refused_path)), {"status", "phase"}) == "Pending");

  // Unregistered first, so the deletions below do not wait on the hung server.
  std::remove(registration.c_str());
  std::this_thread::sleep_for(1s);
  for (const auto& path : {ignored_path, refused_path})
    api.call("DELETE", path + "?gracePeriodSeconds=0");
  CHECK(
      api.waitFor(ignored_path, 90s, [](const koord::http::Response& r) { return r.status == 404; })
          .status == 404);
}

TEST_CASE("runtime-proxy: logs and exec pass through and a proxy restart loses nothing", "[node]") {
  auto env = readClusterEnv();
  const std::string node = needEnv(env, "KOORD_NODE_NAME");
  const std::string image = needEnv(env, "KOORD_TEST_IMAGE");
  const std::string cluster_dir = needEnv(env, "KOORD_CLUSTER_DIR");
  const char* cluster_sh = std::getenv("KOORD_CLUSTER_SH");
  REQUIRE(cluster_sh != nullptr);
  Api api(env);

  const std::string name = uniqueName("koord-proxy-restart");
  const std::string path = "/api/v1/namespaces/default/pods/" + name;
  json::object pod = sleepPod(name, node, image);
  pod["spec"].as_object()["containers"].as_array()[0].as_object()["command"] =
      json::array{"sh", "-c", "echo hello through the proxy; exec sleep 3600"};
  REQUIRE(api.call("POST", "/api/v1/namespaces/default/pods", json::serialize(pod)).status == 201);
  auto running = api.waitFor(path, 120s, [](const koord::http::Response& r) {
    return r.status == 200 && str(parse(r), {"status", "phase"}) == "Running";
  });
  REQUIRE(str(parse(running), {"status", "phase"}) == "Running");
  const std::string container = containerId(parse(running));
  REQUIRE_FALSE(container.empty());

  auto checkStreams = [&](const std::string& when) {
    INFO(when);
    auto log = api.waitFor(path + "/log", 30s, [](const koord::http::Response& r) {
      return r.status == 200 && r.body.find("hello through the proxy") != std::string::npos;
    });
    CHECK(log.body.find("hello through the proxy") != std::string::npos);
    auto exec = kubectlExec(env, name, {"sh", "-c", "echo exec-$((6 * 7)); echo to-stderr >&2"});
    INFO(exec.err);
    CHECK(exec.exit_code == 0);
    CHECK(exec.out == "exec-42\n");
    CHECK(exec.err.find("to-stderr") != std::string::npos);
    auto failing = kubectlExec(env, name, {"sh", "-c", "exit 3"});
    CHECK(failing.exit_code != 0);  // the command's status comes back through the stream
  };
  checkStreams("before the restart");
  // Reliability check 24: the restart happens under five running sandboxes.
  std::vector<std::string> others;
  for (int i = 0; i < 4; ++i) {
    others.push_back("/api/v1/namespaces/default/pods/" + name + "-" + std::to_string(i));
    REQUIRE(api.call("POST", "/api/v1/namespaces/default/pods",
                     json::serialize(sleepPod(name + "-" + std::to_string(i), node, image)))
                .status == 201);
  }
  std::map<std::string, std::string> containers;
  for (const auto& p : others) {
    auto r = api.waitFor(p, 120s, [](const koord::http::Response& r) {
      return r.status == 200 && str(parse(r), {"status", "phase"}) == "Running";
    });
    REQUIRE(str(parse(r), {"status", "phase"}) == "Running");
    containers[p] = containerId(parse(r));
  }
  containers[path] = container;

  auto restart = koord::testing::run({cluster_sh, "restart-before-kubelet"},
                                     {{"KOORD_CLUSTER_DIR", cluster_dir}}, 60s);
  INFO(restart.err);
  REQUIRE(restart.exit_code == 0);
  // The new process learnt the running pods from containerd before serving.
  const std::string proxy_log = readFile(cluster_dir + "/before-kubelet.log");
  INFO(proxy_log);
  const auto known = proxy_log.rfind(" sandbox(es) and ");
  REQUIRE(known != std::string::npos);
  const auto number_at = proxy_log.find_last_of(' ', known - 1) + 1;
  CHECK(std::stoi(proxy_log.substr(number_at, known - number_at)) >= 5);
  // The CRI socket the kubelet dials: root's, and no one else's to write.
  struct stat st {};
  REQUIRE(::stat((cluster_dir + "/runtime-proxy/runtimeproxy.sock").c_str(), &st) == 0);
  CHECK(S_ISSOCK(st.st_mode));
  CHECK((st.st_mode & 07777) == 0660);
  CHECK(st.st_uid == 0);
  CHECK(st.st_gid == 0);

  checkStreams("after the restart");
  // kubelet kept its view: the same containers, never restarted.
  for (const auto& [p, id] : containers) {
    INFO(p);
    const auto after = parse(api.call("GET", p));
    CHECK(str(after, {"status", "phase"}) == "Running");
    CHECK(containerId(after) == id);
    CHECK(after.at("status").at("containerStatuses").at(0).at("restartCount").as_int64() == 0);
  }

  // A new pod starts, and the old ones are stopped and removed, through the new process.
  const std::string fresh = uniqueName("koord-after-restart");
  const std::string fresh_path = "/api/v1/namespaces/default/pods/" + fresh;
  REQUIRE(api.call("POST", "/api/v1/namespaces/default/pods",
                   json::serialize(sleepPod(fresh, node, image)))
              .status == 201);
  CHECK(str(parse(api.waitFor(
                fresh_path, 120s,
                [](const koord::http::Response& r) {
                  return r.status == 200 && str(parse(r), {"status", "phase"}) == "Running";
                })),
            {"status", "phase"}) == "Running");
  others.push_back(path);
  others.push_back(fresh_path);
  for (const auto& p : others)
    CHECK(api.call("DELETE", p).status == 200);
  for (const auto& p : others) {
    CHECK(api.waitFor(p, 90s, [](const koord::http::Response& r) { return r.status == 404; })
              .status == 404);
  }
}
