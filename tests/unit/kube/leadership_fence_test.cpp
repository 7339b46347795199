// Controller writes fenced on leadership: a LeadershipFence the elector opens while it leads and
// a RestClient::fenced() client that asks it before each write. A write queued while the
// replica led must not reach the apiserver once leadership has ended. The peer is a loopback
// HTTP server holding one Lease (optimistic concurrency as the apiserver's) and counting every
// other write it receives.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fake_lease_server.h"
#include "http_peer.h"
#include "koord/core/clock.h"
#include "koord/kube/leader_election.h"
#include "koord/kube/rest_client.h"
#include "test_threads.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using namespace koord::kube;
using koord::testing::HttpPeer;
using koord::testing::PeerReply;
using koord::testing::PeerRequest;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

using koord::kube::testing::FakeLeaseServer;
using koord::kube::testing::IoThreads;
using koord::kube::testing::waitFor;

namespace {

const ResourceRef kConfigMap{"", "v1", "configmaps", "koord-test", "state", ""};

// One Lease, and every other write recorded with when it arrived.
class Apiserver {
 public:
  PeerReply serve(const PeerRequest& r) {
    if (auto reply = lease_.serve(r))
      return *reply;
    std::lock_guard lock(mu_);
    if (r.method != "GET")
      writes_.push_back(steady_clock::now());
    return {200, R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"state"}})", {}};
  }

  // Another holder takes the lease, as a successor would once it had expired.
  void intrude() { lease_.intrude("successor"); }

  std::vector<steady_clock::time_point> writes() const {
    std::lock_guard lock(mu_);
    return writes_;
  }

 private:
  FakeLeaseServer lease_{"koord-test", "lock"};
  mutable std::mutex mu_;
  std::vector<steady_clock::time_point> writes_;
};

json::value configMap() {
  return json::object{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", {{"name", "state"}, {"namespace", "koord-test"}}},
                      {"data", {{"k", "v"}}}};
}

}  // namespace

TEST_CASE("leadership fence: open until the renew deadline, closed at once on release",
          "[kube][leader]") {
  koord::FakeClock clock;
  LeadershipFence fence(clock);
  CHECK(fence.remaining() == 0ms);  // not leading yet
  fence.holdUntil(clock.monotonicNow() + 10s);
  CHECK(fence.remaining() == 10s);
  // The deadline passes while nobody renews: closed though nobody called release().
  clock.advance(9500ms);
  CHECK(fence.remaining() == 500ms);
  clock.advance(500ms);
  CHECK(fence.remaining() == 0ms);
  clock.advance(1s);
  CHECK(fence.remaining() == 0ms);
  // Renewed, then leadership ends before the deadline.
  fence.holdUntil(clock.monotonicNow() + 10s);
  CHECK(fence.remaining() == 10s);
  fence.release();
  CHECK(fence.remaining() == 0ms);
}

TEST_CASE("a fenced client sends no write while the fence is closed, and reads pass",
          "[kube][leader]") {
  Apiserver server;
  HttpPeer peer([&](const PeerRequest& r) { return server.serve(r); });
  IoThreads io;
  RestConfig config;
  config.host = peer.url();
  config.qps = 0;
  RestClient client(io.io, config);
  std::atomic<milliseconds::rep> left{0};
  auto fenced = client.fenced([&] { return milliseconds(left.load()); });

  auto checkFenced = [](const ApiResult<json::value>& r) {
    REQUIRE_FALSE(r.has_value());
    CHECK(isFenced(r.error()));
    CHECK(r.error().code == 0);
    CHECK_THAT(r.error().message, Catch::Contains("not sent"));
  };
  checkFenced(fenced->createSync({"", "v1", "configmaps", "koord-test", "", ""}, configMap()));
  checkFenced(fenced->updateSync(kConfigMap, configMap()));
  checkFenced(fenced->patchSync(kConfigMap, PatchType::kMergePatch, json::object{}));
  checkFenced(fenced->removeSync(kConfigMap));
  checkFenced(fenced->rawSync("POST", "/api/v1/namespaces/koord-test/configmaps", "{}",
                              "application/json"));
  CHECK(server.writes().empty());
  // Reads are not fenced, and the client it came from is not either.
  CHECK(fenced->getSync(kConfigMap).has_value());
  CHECK(fenced->rawSync("GET", "/api/v1/namespaces/koord-test/configmaps/state").has_value());
  CHECK(client.updateSync(kConfigMap, configMap()).has_value());
  CHECK(server.writes().size() == 1);

  // Open: the write goes out.
  left = 5000;
  CHECK(fenced->updateSync(kConfigMap, configMap()).has_value());
  CHECK(server.writes().size() == 2);
}

TEST_CASE("a fenced write waits no longer for its answer than the fence has left",
          "[kube][leader]") {
  HttpPeer peer([](const PeerRequest&) {
    std::this_thread::sleep_for(1500ms);  // an apiserver that answers late
    return PeerReply{200, "{}", {}};
  });
  IoThreads io;
  RestConfig config;
  config.host = peer.url();
  config.qps = 0;
  RestClient client(io.io, config);
  auto fenced = client.fenced([] { return milliseconds(200); });
  const auto start = steady_clock::now();
  auto r = fenced->updateSync(kConfigMap, configMap());
  const auto took = steady_clock::now() - start;
  REQUIRE_FALSE(r.has_value());
  CHECK_FALSE(isFenced(r.error()));  // sent, and given up on
  CHECK(took >= 200ms);
  CHECK(took < 1200ms);
}

TEST_CASE("a controller write queued while leading is not sent once leadership is lost",
          "[kube][leader]") {
  Apiserver server;
  HttpPeer peer([&](const PeerRequest& r) { return server.serve(r); });
  IoThreads io;
  RestConfig config;
  config.host = peer.url();
  config.qps = 0;
  RestClient elector_client(io.io, config);
  // The controllers' own client, slow enough that a second write waits in the rate limiter, as
  // a busy controller's writes do.
  RestConfig slow = config;
  slow.qps = 0.5;
  slow.burst = 1;
  RestClient controller_client(io.io, slow);
  auto fence = std::make_shared<LeadershipFence>();
  auto fenced = controller_client.fenced([fence] { return fence->remaining(); });

  std::mutex mu;
  std::optional<milliseconds> left_when_started;
  std::optional<milliseconds> left_when_stopped;
  std::optional<steady_clock::time_point> stopped_at;
  LeaderElectionConfig le;
  le.lease_namespace = "koord-test";
  le.lease_name = "lock";
  le.identity = "leader";
  le.lease_duration = 3000ms;
  le.renew_deadline = 2000ms;
  le.retry_period = 200ms;
  le.fence = fence;
  le.on_started_leading = [&] {
    std::lock_guard lock(mu);
    left_when_started = fence->remaining();
  };
  le.on_stopped_leading = [&] {
    std::lock_guard lock(mu);
    left_when_stopped = fence->remaining();
    stopped_at = steady_clock::now();
  };
  LeaderElector elector(elector_client, io.io, le);
  elector.start();
  auto waitFor = [&](auto pred, milliseconds limit) {
    const auto deadline = steady_clock::now() + limit;
    while (!pred()) {
      if (steady_clock::now() > deadline)
        return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  };
  // isLeader() turns true just before on_started_leading runs: wait for the callback itself.
  REQUIRE(waitFor(
      [&] {
        std::lock_guard lock(mu);
        return left_when_started.has_value();
      },
      5s));
  CHECK(elector.isLeader());
  {
    std::lock_guard lock(mu);
    // Open before the controllers start, for no longer than the renew deadline.
    CHECK(*left_when_started > 0ms);
    CHECK(*left_when_started <= le.renew_deadline);
  }

  // A leader's write goes out; the next one waits its turn in the rate limiter...
  std::promise<ApiResult<json::value>> first, second;
  fenced->update(kConfigMap, configMap(),
                 [&](ApiResult<json::value> r) { first.set_value(std::move(r)); });
  fenced->update(kConfigMap, configMap(),
                 [&](ApiResult<json::value> r) { second.set_value(std::move(r)); });
  CHECK(first.get_future().get().has_value());
  // ...while a successor takes the lease: the next renew finds it and leadership ends.
  server.intrude();
  REQUIRE(waitFor(
      [&] {
        std::lock_guard lock(mu);
        return stopped_at.has_value();
      },
      2s));
  {
    std::lock_guard lock(mu);
    REQUIRE(left_when_stopped);
    CHECK(*left_when_stopped == 0ms);  // closed before on_stopped_leading ran
  }
  // The queued write leaves the limiter after leadership ended and is refused, not sent.
  auto queued = second.get_future().get();
  REQUIRE_FALSE(queued.has_value());
  CHECK(isFenced(queued.error()));
  const auto writes = server.writes();
  CHECK(writes.size() == 1);
  std::lock_guard lock(mu);
  for (const auto& at : writes)
    CHECK(at < *stopped_at);
}
