// koord::kube::Watcher against peer faults no real API server produces on demand: a stream that
// ends at once with 200 and no event, and a line that is not an event. The peer is a loopback
// socket speaking HTTP/1.1; the Watcher, RestClient and HTTP client under test are the real ones.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http_peer.h"
#include "koord/core/metrics.h"
#include "koord/kube/rest_client.h"
#include "koord/kube/watch.h"

using namespace std::chrono_literals;
using namespace koord::kube;
using koord::testing::HttpPeer;
using koord::testing::PeerReply;
using koord::testing::PeerRequest;
using koord::testing::queryParam;

namespace {

/// Events in the order a stream carries them; `end` whether the stream then ends (otherwise it
/// is held open until the peer goes away).
struct Stream {
  std::vector<std::string> events;
  bool end = true;
};

/// Answers each watch with `script(n)`, n counting the requests from 0, and keeps the requests
/// in the order they came.
class ScriptedWatches {
 public:
  explicit ScriptedWatches(std::function<Stream(int)> script)
      : script_(std::move(script)), peer_([this](const PeerRequest& r) { return serve(r); }) {}

  std::string url() const { return peer_.url(); }
  int requests() const { return requests_.load(); }
  std::vector<PeerRequest> received() const {
    std::lock_guard lock(mu_);
    return received_;
  }

 private:
  PeerReply serve(const PeerRequest& r) {
    {
      std::lock_guard lock(mu_);
      received_.push_back(r);
    }
    Stream stream = script_(requests_++);
    std::size_t sent = 0;
    PeerReply reply;
    reply.next_chunk = [stream = std::move(stream), sent]() mutable -> std::optional<std::string> {
      if (sent < stream.events.size())
        return stream.events[sent++];
      if (stream.end)
        return std::nullopt;
      std::this_thread::sleep_for(10ms);
      return "";
    };
    return reply;
  }

  std::function<Stream(int)> script_;
  std::atomic<int> requests_{0};
  mutable std::mutex mu_;
  std::vector<PeerRequest> received_;
  HttpPeer peer_;  // last: its handler uses the members above until it goes
};

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

RestConfig configFor(const ScriptedWatches& peer) {
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
  ScriptedWatches peer([](int) { return Stream{}; });
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
  ScriptedWatches peer([&](int) {
    return Stream{{R"({"type":"ADDED","object":{"metadata":)"
                   "\n",
                   good},
                  /*end=*/false};
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

TEST_CASE("watcher: watches ask for bookmarks, a 300-600 s timeout, and resume where they left off",
          "[kube][watch]") {
  // The first stream carries an object and a bookmark, then ends as the server's timeout ends
  // it; the second is held open. A re-watch from "" or 0 would replay the whole collection.
  ScriptedWatches peer([](int n) {
    if (n > 0)
      return Stream{{}, /*end=*/false};
    return Stream{{R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"5"}}})"
                   "\n",
                   R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})"
                   "\n"}};
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
  auto requests = peer.received();
  REQUIRE(requests.size() >= 2);
  for (const auto& request : requests) {
    INFO(request.target);
    CHECK(request.target.starts_with("/api/v1/namespaces/default/configmaps?"));
    CHECK(queryParam(request.query, "watch") == "true");
    CHECK(queryParam(request.query, "allowWatchBookmarks") == "true");
    const auto timeout = queryParam(request.query, "timeoutSeconds");
    REQUIRE_FALSE(timeout.empty());
    CHECK(std::stoi(timeout) >= 300);
    CHECK(std::stoi(timeout) <= 600);
  }
  CHECK(queryParam(requests[0].query, "resourceVersion") == "3");
  // The bookmark's version, the last one the first stream carried.
  CHECK(queryParam(requests[1].query, "resourceVersion") == "9");
}
