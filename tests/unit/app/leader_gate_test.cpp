// LeaderGate: a role's controllers start once its caches have synced and it leads, its writes
// are fenced on the lease, and a lost lease stops the reactor with exit status 1. The peer is a
// loopback HTTP server holding one Lease that the test can hand to another holder.
#include "koord/app/leader_gate.h"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fake_lease_server.h"
#include "http_peer.h"
#include "koord/core/reactor.h"
#include "koord/kube/rest_client.h"
#include "log_lines.h"
#include "test_threads.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::Reactor;
using koord::app::LeaderGate;
using koord::app::LeaderGateOptions;
using koord::kube::testing::waitFor;
using koord::testing::HttpPeer;
using koord::testing::PeerReply;
using koord::testing::PeerRequest;

namespace {

const koord::kube::ResourceRef kConfigMap{"", "v1", "configmaps", "koord-test", "state", ""};

// The Lease, refused to everyone while the test says so, and the count of every other write.
class Apiserver {
 public:
  PeerReply serve(const PeerRequest& r) {
    if (!granting_ && r.path.find("/leases") != std::string::npos)
      return koord::kube::testing::statusReply(500, "InternalError");
    if (auto reply = lease_.serve(r))
      return *reply;
    if (r.method != "GET")
      ++writes_;
    return {200, R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"state"}})", {}};
  }

  /// While false, every Lease request fails: nobody can lead.
  void grant(bool on) { granting_ = on; }
  bool held() const { return !lease_.holders().empty(); }
  /// The holder the last Lease write named ("" for a release).
  std::string lastHolder() const { return lease_.holders().back(); }
  void handTo(const std::string& holder) { lease_.intrude(holder); }
  int writes() const { return writes_; }

 private:
  koord::kube::testing::FakeLeaseServer lease_{"koord-test", "lock"};
  std::atomic<bool> granting_{true};
  std::atomic<int> writes_{0};
};

json::value configMap() {
  return json::object{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", {{"name", "state"}, {"namespace", "koord-test"}}}};
}

// A role's pieces around the gate: its apiserver, the reactor on a thread of its own, caches that
// sync when the test says, and the order in which the role's hooks ran.
struct Role {
  explicit Role(LeaderGateOptions options) : gate(reactor, client, std::move(options)) {}
  ~Role() { stop(); }

  static koord::kube::RestConfig restConfig(const std::string& url) {
    koord::kube::RestConfig config;
    config.host = url;
    config.qps = 0;
    return config;
  }

  void start() {
    gate.start({
        .wait_for_sync =
            [this](std::chrono::milliseconds t) {
              if (!caches_synced)
                std::this_thread::sleep_for(t);
              return caches_synced.load();
            },
        .on_synced = [this] { record("synced"); },
        .on_leading = [this] { record("leading"); },
    });
    // As a role's: the elector first, then what else returns at once.
    reactor.onShutdown([this] {
      gate.stopElection();
      client.httpClient().closeIdleConnections();
    });
    runner = std::thread([this] { rc = gate.join(reactor.run()); });
  }

  std::vector<std::string> steps() {
    std::lock_guard lock(mu);
    return steps_;
  }
  void record(std::string step) {
    std::lock_guard lock(mu);
    steps_.push_back(std::move(step));
  }
  int stop() {
    reactor.requestStop();
    if (runner.joinable())
      runner.join();
    return rc;
  }

  Apiserver server;
  HttpPeer peer{[this](const PeerRequest& r) { return server.serve(r); }};
  Reactor reactor{Reactor::Options{.threads = 1, .handle_signals = false}};
  koord::kube::RestClient client{reactor.context(), restConfig(peer.url())};
  LeaderGate gate;
  std::atomic<bool> caches_synced{false};
  std::thread runner;
  int rc = -1;
  std::mutex mu;
  std::vector<std::string> steps_;
};

LeaderGateOptions electing() {
  LeaderGateOptions o;
  o.role = "gate-test";
  o.election.lease_namespace = "koord-test";
  o.election.lease_name = "lock";
  o.election.lease_duration = 3000ms;
  o.election.renew_deadline = 2000ms;
  o.election.retry_period = 200ms;
  o.sync_poll = 50ms;
  return o;
}

}  // namespace

TEST_CASE("leader gate without election: starts once synced, and its writes are not fenced",
          "[app][leader]") {
  LeaderGateOptions o = electing();
  o.leader_elect = false;
  Role role(o);
  CHECK(&role.gate.writer() == &role.client);
  role.start();

  std::this_thread::sleep_for(200ms);
  CHECK(role.steps().empty());  // leading, but the caches are not in yet
  CHECK_FALSE(role.gate.synced());
  role.caches_synced = true;
  REQUIRE(waitFor([&] { return role.steps().size() == 2; }, 5000ms));
  CHECK(role.steps() == std::vector<std::string>{"synced", "leading"});
  CHECK(role.gate.synced());
  CHECK(role.stop() == 0);
  CHECK_FALSE(role.server.held());  // no lease taken
}

TEST_CASE("leader gate: the controllers start only when synced and leading; a lost lease exits 1",
          "[app][leader]") {
  koord::testing::LogLines logs;
  Role role(electing());
  REQUIRE(&role.gate.writer() != &role.client);
  role.server.grant(false);
  role.start();
  // Not leading yet: the fence refuses the write and nothing reaches the server.
  auto refused = role.gate.writer().updateSync(kConfigMap, configMap());
  REQUIRE_FALSE(refused.has_value());
  CHECK(koord::kube::isFenced(refused.error()));
  CHECK(role.server.writes() == 0);

  role.server.grant(true);
  REQUIRE(waitFor([&] { return role.server.held(); }, 5000ms));
  REQUIRE(waitFor([&] { return logs.count("gate-test: the leader is ") == 1; }, 5000ms));
  std::this_thread::sleep_for(300ms);
  CHECK(role.steps().empty());  // leading, but not synced
  // Leading: the fence is open.
  CHECK(role.gate.writer().updateSync(kConfigMap, configMap()).has_value());
  CHECK(role.server.writes() == 1);

  role.caches_synced = true;
  REQUIRE(waitFor([&] { return role.steps().size() == 2; }, 5000ms));
  CHECK(role.steps() == std::vector<std::string>{"synced", "leading"});
  CHECK(logs.count("gate-test: informer caches synced") == 1);

  // A successor takes the lease: the next renew sees it, the gate stops the reactor by itself.
  role.server.handTo("successor");
  REQUIRE(waitFor([&] { return role.reactor.stopping(); }, 5000ms));
  role.runner.join();
  CHECK(role.rc == 1);
  CHECK(logs.count("gate-test: leader election lost, exiting") == 1);
  CHECK(logs.count("gate-test: the leader is successor") == 1);
  CHECK_FALSE(role.gate.writer().updateSync(kConfigMap, configMap()).has_value());
  CHECK(role.server.writes() == 1);
}

TEST_CASE("leader gate: a stop before the caches sync starts nothing and exits 0",
          "[app][leader]") {
  koord::testing::LogLines logs;
  Role role(electing());
  role.start();
  REQUIRE(waitFor([&] { return role.server.held(); }, 5000ms));
  CHECK(role.stop() == 0);
  CHECK(role.steps().empty());
  CHECK(role.server.lastHolder().empty());  // handed back on the way out
  CHECK(logs.count("leader election lost") == 0);
}
