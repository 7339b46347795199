// koord::kube::Watcher against peer faults no real API server produces on demand: a stream that
// ends at once with 200 and no event, and a line that is not an event. The peer is a loopback
// socket speaking HTTP/1.1; the Watcher, RestClient and HTTP client under test are the real ones.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "koord/core/metrics.h"
#include "koord/kube/rest_client.h"
#include "koord/kube/watch.h"

using namespace std::chrono_literals;
using namespace koord::kube;

namespace {

/// Accepts connections on 127.0.0.1 and answers each request with `reply(n)`, n counting the
/// requests from 0; closes the connection after each answer unless the reply keeps it.
class ScriptedPeer {
 public:
  explicit ScriptedPeer(std::function<std::string(int)> reply) : reply_(std::move(reply)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd_, 64) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedPeer() {
    stop_ = true;
    thread_.join();
    for (int c : held_)
      ::close(c);
    ::close(fd_);
  }
  ScriptedPeer(const ScriptedPeer&) = delete;
  ScriptedPeer& operator=(const ScriptedPeer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_.load(); }
  /// The request targets ("/api/v1/configmaps?watch=true&..."), in the order they came.
  std::vector<std::string> targets() const {
    std::lock_guard lock(targets_mu_);
    return targets_;
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0)
        continue;
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0)
        continue;
      std::string req;
      char buf[4096];
      while (req.find("\r\n\r\n") == std::string::npos) {
        pollfd q{c, POLLIN, 0};
        if (::poll(&q, 1, 1000) <= 0)
          break;
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0)
          break;
        req.append(buf, static_cast<std::size_t>(n));
      }
      if (auto sp = req.find(' '); sp != std::string::npos) {
        std::lock_guard lock(targets_mu_);
        targets_.push_back(req.substr(sp + 1, req.find(' ', sp + 1) - sp - 1));
      }
      std::string answer = reply_(requests_++);
      (void)!::write(c, answer.data(), answer.size());
      // A reply without the closing chunk keeps its stream open until the peer goes away.
      if (answer.ends_with("0\r\n\r\n"))
        ::close(c);
      else
        held_.push_back(c);
    }
  }

  std::function<std::string(int)> reply_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  mutable std::mutex targets_mu_;
  std::vector<std::string> targets_;
  std::vector<int> held_;
  std::thread thread_;
};

std::string chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

const std::string kStreamHead =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

struct IoThread {
  IoThread() : work(boost::asio::make_work_guard(io)), thread([this] { io.run(); }) {}
  ~IoThread() {
    work.reset();
    io.stop();
    thread.join();
  }
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work;
  std::thread thread;
};

RestConfig configFor(const ScriptedPeer& peer) {
  RestConfig c;
  c.host = peer.url();
  c.qps = 0;  // the test counts the Watcher's own pacing, not the limiter's
  return c;
}

double decodeErrors(const std::string& resource) {
  std::string text = koord::metrics::Registry::global().render();
  std::string series = "koord_informer_decode_errors_total{resource=\"" + resource + "\"} ";
  auto at = text.find(series);
  return at == std::string::npos ? 0.0 : std::stod(text.substr(at + series.size()));
}

}  // namespace

TEST_CASE("watcher: a stream that ends at once with no event is re-opened after a backoff",
          "[kube][watch]") {
  // Before the fix this peer got a request every few hundred microseconds: each clean end
  // reset the backoff and re-watched at once.
  ScriptedPeer peer([](int) { return kStreamHead + "0\r\n\r\n"; });
  IoThread t;
  RestClient client(t.io, configFor(peer));
  Watcher w(
      client, t.io, ResourceRef{"", "v1", "configmaps", "default", "", ""}, WatchOptions{},
      [](const WatchEvent&) {}, [](const ApiError&) {});
  w.start();
  std::this_thread::sleep_for(2500ms);
  w.stop();
  // 0 s, then after 0.8-0.96 s, then 1.6-1.92 s later: three at most in 2.5 s.
  CHECK(peer.requests() >= 2);
  CHECK(peer.requests() <= 3);
}

TEST_CASE("watcher: an undecodable event is skipped and counted; the stream goes on",
          "[kube][watch]") {
  const std::string good =
      R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"5"}}})"
      "\n";
  ScriptedPeer peer([&](int) {
    return kStreamHead +
           chunk(R"({"type":"ADDED","object":{"metadata":)"
                 "\n") +
           chunk(good);
  });
  IoThread t;
  RestClient client(t.io, configFor(peer));
  const double before = decodeErrors("widgets.example.com");
  std::mutex mu;
  std::vector<std::string> names;
  Watcher w(
      client, t.io, ResourceRef{"example.com", "v1", "widgets", "", "", ""}, WatchOptions{},
      [&](const WatchEvent& ev) {
        std::lock_guard lock(mu);
        names.emplace_back(ev.object.at("metadata").at("name").as_string());
      },
      [](const ApiError&) {});
  w.start();
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::lock_guard lock(mu);
    if (!names.empty())
      break;
    std::this_thread::sleep_for(10ms);
  }
  std::this_thread::sleep_for(200ms);
  w.stop();
  std::lock_guard lock(mu);
  REQUIRE(names == std::vector<std::string>{"a"});
  CHECK(w.resourceVersion() == "5");
  // One stream: the bad line did not drop it and re-watch from the old version.
  CHECK(w.streamsOpened() == 1);
  CHECK(peer.requests() == 1);
  CHECK(decodeErrors("widgets.example.com") == before + 1);
}

namespace {
/// The value of `key` in the query of `target`, or "" when it is not there.
std::string queryValue(const std::string& target, const std::string& key) {
  auto at = target.find("&" + key + "=");
  if (at == std::string::npos)
    at = target.find("?" + key + "=");
  if (at == std::string::npos)
    return "";
  at += key.size() + 2;
  return target.substr(at, target.find('&', at) - at);
}
}  // namespace

TEST_CASE("watcher: watches ask for bookmarks, a 300-600 s timeout, and resume where they left off",
          "[kube][watch]") {
  // The first stream carries an object and a bookmark, then ends as the server's timeout ends
  // it; the second is held open. A re-watch from "" or 0 would replay the whole collection.
  ScriptedPeer peer([](int n) {
    if (n > 0)
      return kStreamHead;
    return kStreamHead +
           chunk(R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"5"}}})"
                 "\n") +
           chunk(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})"
                 "\n") +
           "0\r\n\r\n";
  });
  IoThread t;
  RestClient client(t.io, configFor(peer));
  WatchOptions options;
  options.resource_version = "3";
  Watcher w(
      client, t.io, ResourceRef{"", "v1", "configmaps", "default", "", ""}, options,
      [](const WatchEvent&) {}, [](const ApiError&) {});
  w.start();
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (peer.requests() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  w.stop();
  auto targets = peer.targets();
  REQUIRE(targets.size() >= 2);
  for (const auto& target : targets) {
    INFO(target);
    CHECK(target.starts_with("/api/v1/namespaces/default/configmaps?"));
    CHECK(queryValue(target, "watch") == "true");
    CHECK(queryValue(target, "allowWatchBookmarks") == "true");
    const auto timeout = queryValue(target, "timeoutSeconds");
    REQUIRE_FALSE(timeout.empty());
    CHECK(std::stoi(timeout) >= 300);
    CHECK(std::stoi(timeout) <= 600);
  }
  CHECK(queryValue(targets[0], "resourceVersion") == "3");
  // The bookmark's version, the last one the first stream carried.
  CHECK(queryValue(targets[1], "resourceVersion") == "9");
}
