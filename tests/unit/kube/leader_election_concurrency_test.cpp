// koord::kube::LeaderElector with three candidates in one process on two io threads, started,
// watched and stopped from other threads: one leader at a time, a clean handover on stop(), and
// every on_started_leading paired with one on_stopped_leading. The peer is a loopback HTTP server
// holding one Lease with the apiserver's optimistic concurrency (a PUT naming a stale
// resourceVersion gets 409 Conflict, a second create 409 AlreadyExists). Takeover after a crash
// and the real apiserver are tests/cluster/leader_election_test.cpp's.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fake_lease_server.h"
#include "http_peer.h"
#include "koord/kube/leader_election.h"
#include "test_threads.h"

using namespace std::chrono_literals;
using namespace koord::kube;
using koord::testing::HttpPeer;
using koord::testing::PeerRequest;

using koord::kube::testing::FakeLeaseServer;
using koord::kube::testing::IoThreads;
using koord::kube::testing::JoinAll;
using koord::kube::testing::statusReply;
using koord::kube::testing::waitFor;

TEST_CASE("leader election: candidates on shared io threads lead one at a time and hand over",
          "[kube][leader][concurrency]") {
  FakeLeaseServer store("koord-test", "lock");
  HttpPeer peer(
      [&](const PeerRequest& r) { return store.serve(r).value_or(statusReply(404, "NotFound")); });
  IoThreads io(2);
  RestConfig config;
  config.host = peer.url();
  config.qps = 0;
  RestClient client(io.io, config);

  const std::vector<std::string> ids{"a", "b", "c"};
  std::mutex mu;
  std::map<std::string, int> started, stopped;
  std::set<std::string> leading;  // by the callbacks
  int overlaps = 0;
  // From the first stop() on, callbacks may overlap for a moment: the successor can win the
  // released lease before the releasing elector's on_stopped_leading has run (as in client-go).
  std::atomic<bool> stopping{false};
  std::map<std::string, std::unique_ptr<LeaderElector>> electors;
  for (const auto& id : ids) {
    LeaderElectionConfig c;
    c.lease_namespace = "koord-test";
    c.lease_name = "lock";
    c.identity = id;
    // Short, with room for a slow (sanitized, shared) machine between renew and expiry.
    c.retry_period = 200ms;
    c.renew_deadline = 1500ms;
    c.lease_duration = 3000ms;
    c.on_started_leading = [&, id] {
      std::lock_guard lock(mu);
      ++started[id];
      if (!leading.empty() && !stopping)
        ++overlaps;
      leading.insert(id);
    };
    c.on_stopped_leading = [&, id] {
      std::lock_guard lock(mu);
      ++stopped[id];
      leading.erase(id);
    };
    electors[id] = std::make_unique<LeaderElector>(client, io.io, c);
  }
  auto leaders = [&] {
    std::vector<std::string> out;
    for (const auto& id : ids) {
      if (electors.at(id)->isLeader())
        out.push_back(id);
    }
    return out;
  };

  // Started side by side, and watched from two more threads while they campaign.
  std::atomic<bool> stop_watching{false};
  std::atomic<int> two_leaders{0};
  std::vector<std::thread> threads, stoppers;
  JoinAll join_threads{stop_watching, threads};
  JoinAll join_stoppers{stop_watching, stoppers};
  for (const auto& id : ids)
    threads.emplace_back([&, id] { electors.at(id)->start(); });
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&] {
      while (!stop_watching) {
        // Before any stop() the lease can only change hands through a conflict-checked write.
        if (!stopping && leaders().size() > 1)
          ++two_leaders;
        for (const auto& id : ids)
          (void)electors.at(id)->observedLeader();
        std::this_thread::sleep_for(1ms);
      }
    });
  }

  std::string first;
  REQUIRE(waitFor(
      [&] {
        const auto now = leaders();
        first = now.size() == 1 ? now.front() : "";
        return !first.empty();
      },
      20s));
  // Everyone reads the record and names the same leader; meanwhile the leader renews.
  const auto writes_before = store.holders().size();
  CHECK(waitFor(
      [&] {
        for (const auto& id : ids) {
          if (electors.at(id)->observedLeader() != first)
            return false;
        }
        return store.holders().size() >= writes_before + 3;
      },
      20s));
  CHECK(leaders() == std::vector<std::string>{first});

  // stop() from this thread: it releases the lease and has called on_stopped_leading when it
  // returns; one of the others takes over.
  stopping = true;
  electors.at(first)->stop();
  CHECK_FALSE(electors.at(first)->isLeader());
  {
    std::lock_guard lock(mu);
    CHECK(stopped[first] == 1);
  }
  // The successor counts once its on_started_leading has run: isLeader() turns true a moment
  // before, and an elector stopped in that moment never calls it.
  REQUIRE(waitFor(
      [&] {
        const auto now = leaders();
        if (now.size() != 1 || now.front() == first)
          return false;
        std::lock_guard lock(mu);
        return started[now.front()] == 1;
      },
      20s));

  // The rest stopped at once from two threads.
  for (const auto& id : ids) {
    if (id != first)
      stoppers.emplace_back([&, id] { electors.at(id)->stop(); });
  }
  for (auto& t : stoppers)
    t.join();
  stop_watching = true;
  for (auto& t : threads)
    t.join();

  CHECK(leaders().empty());
  CHECK(two_leaders == 0);
  std::lock_guard lock(mu);
  CHECK(overlaps == 0);
  CHECK(leading.empty());
  int total = 0;
  for (const auto& id : ids) {
    INFO(id);
    CHECK(started[id] == stopped[id]);
    CHECK(started[id] <= 1);  // an elector is single-use
    total += started[id];
  }
  // The first leader and its successor; the third may have won the lease in the moment between
  // the successor's release and its own stop().
  CHECK(total >= 2);
  // Nobody took the lease from a live holder: it changed hands only through a release.
  const auto holders = store.holders();
  for (std::size_t i = 1; i < holders.size(); ++i) {
    INFO("write " << i << ": " << holders[i - 1] << " -> " << holders[i]);
    CHECK((holders[i - 1].empty() || holders[i].empty() || holders[i - 1] == holders[i]));
  }
  CHECK(holders.back().empty());  // the last leader released it too
}
