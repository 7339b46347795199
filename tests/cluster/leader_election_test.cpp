// koord::kube::LeaderElector against the real apiserver: candidates as real processes
// (koord_test_leader_elector) that are killed or stopped, and in-process electors whose lease is
// taken by an intruder, whose network path is cut, or that are stopped from the test thread.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <csignal>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/core/metrics.h"
#include "koord/kube/leader_election.h"
#include "koord/kube/watch.h"
#include "subprocess.h"
#include "tcp_relay.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using namespace koord::kube;
using koord::testing::KubeApi;
using koord::testing::named;
using koord::testing::ok;
using koord::testing::TestNamespace;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;
using std::chrono::milliseconds;
using std::chrono::steady_clock;
using namespace koord::testing::resources;

namespace {

// The timings of most tests: short, and still lease > renew > 1.2 x retry.
constexpr milliseconds kLease{4000};
constexpr milliseconds kRenew{3000};
constexpr milliseconds kRetry{1000};
// Scheduling, ASan and a shared 2-core machine; generous, as the bounds themselves are tight.
constexpr milliseconds kSlack{2000};
// A candidate's wait between attempts is at most retry x (1 + 1.2).
constexpr milliseconds kMaxCandidateWait{
    static_cast<std::int64_t>(kRetry.count() * (1 + kLeaderElectionJitterFactor))};

ResourceRef leaseRef(const std::string& ns, const std::string& name) {
  return named(kLeases, name, ns);
}

double seconds(steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// One koord_test_leader_elector process.
class Candidate {
 public:
  Candidate(const std::string& identity, const std::string& ns, const std::string& lease,
            milliseconds lease_duration = kLease, milliseconds renew = kRenew,
            milliseconds retry = kRetry)
      : identity_(identity),
        proc_({executable(), "--identity", identity, "--namespace", ns, "--name", lease,
               "--lease-ms", std::to_string(lease_duration.count()), "--renew-ms",
               std::to_string(renew.count()), "--retry-ms", std::to_string(retry.count())}) {}

  static std::string executable() {
    const char* exe = std::getenv("KOORD_TEST_LEADER_ELECTOR");
    if (exe == nullptr || *exe == '\0')
      FAIL("KOORD_TEST_LEADER_ELECTOR is not set; run this test through ctest");
    return exe;
  }

  // Subprocess keeps stdout in a temp file it only reads at exit; the child's fd 1 reaches the
  // same file while it runs.
  std::string stdoutSoFar() const {
    std::ifstream in("/proc/" + std::to_string(proc_.pid()) + "/fd/1");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  bool printed(const std::string& line) const {
    return ("\n" + stdoutSoFar()).find("\n" + line + "\n") != std::string::npos;
  }

  // Polls for a whole stdout line; false when `timeout` passes or the process exits first.
  bool waitForLine(const std::string& line, milliseconds timeout) {
    const auto deadline = steady_clock::now() + timeout;
    while (steady_clock::now() < deadline) {
      if (!proc_.running())
        return false;
      if (printed(line))
        return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  koord::testing::Subprocess& process() { return proc_; }
  const std::string& identity() const { return identity_; }

 private:
  std::string identity_;
  koord::testing::Subprocess proc_;
};

LeaderElectionRecord readRecord(RestClient& client, const std::string& ns,
                                const std::string& name) {
  auto lease = ok(client.getSync(leaseRef(ns, name)), "get lease");
  return recordFromLeaseSpec(lease.at("spec"));
}

// What an in-process elector's callbacks reported, waited on from the test thread.
struct Events {
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  int stopped = 0;
  std::vector<std::string> leaders;
  steady_clock::time_point stopped_at;
  std::thread::id stopped_thread;

  void wire(LeaderElectionConfig& c) {
    c.on_started_leading = [this] {
      std::lock_guard lock(mu);
      ++started;
      cv.notify_all();
    };
    c.on_stopped_leading = [this] {
      std::lock_guard lock(mu);
      ++stopped;
      stopped_at = steady_clock::now();
      stopped_thread = std::this_thread::get_id();
      cv.notify_all();
    };
    c.on_new_leader = [this](const std::string& id) {
      std::lock_guard lock(mu);
      leaders.push_back(id);
      cv.notify_all();
    };
  }
  template <typename Pred>
  bool waitFor(Pred pred, milliseconds timeout) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] { return pred(*this); });
  }
};

// An io_context on two threads of its own with its own RestClient, so that the elector's
// handlers really run concurrently with each other and with the test thread.
class ElectorHost {
 public:
  explicit ElectorHost(RestConfig config) : guard_(boost::asio::make_work_guard(io)) {
    client = std::make_unique<RestClient>(io, std::move(config));
    for (int i = 0; i < 2; ++i)
      threads_.emplace_back([this] { io.run(); });
  }
  ~ElectorHost() {
    client.reset();
    guard_.reset();
    io.stop();
    for (auto& t : threads_)
      t.join();
  }
  bool isIoThread(std::thread::id id) const {
    for (const auto& t : threads_) {
      if (t.get_id() == id)
        return true;
    }
    return false;
  }

  boost::asio::io_context io;
  std::unique_ptr<RestClient> client;

 private:
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::vector<std::thread> threads_;
};

LeaderElectionConfig electorConfig(const std::string& ns, const std::string& lease,
                                   const std::string& identity) {
  LeaderElectionConfig c;
  c.lease_namespace = ns;
  c.lease_name = lease;
  c.identity = identity;
  c.lease_duration = kLease;
  c.renew_deadline = kRenew;
  c.retry_period = kRetry;
  return c;
}

}  // namespace

TEST_CASE("a candidate takes a killed leader's lease once it has expired, not before",
          "[cluster]") {
  KubeApi api(tokenConfig());
  TestNamespace ns(*api, "koord-le-kill");
  const std::string lease = uniqueName("lease-kill");

  Candidate a("A", ns.name(), lease);
  REQUIRE(a.waitForLine("LEADING A", 20s));
  Candidate b("B", ns.name(), lease);
  // B has read A's record...
  REQUIRE(b.waitForLine("LEADER A", 10s));
  // ...and leaves it alone for longer than a lease, since A keeps renewing.
  std::this_thread::sleep_for(kLease + 2s);
  CHECK_FALSE(b.printed("LEADING B"));
  REQUIRE(a.process().running());
  const auto before = readRecord(*api, ns.name(), lease);
  CHECK(before.holder_identity == "A");
  CHECK(before.lease_duration_seconds == 4);
  REQUIRE(before.acquire_time.has_value());
  REQUIRE(before.renew_time.has_value());
  CHECK(*before.renew_time > *before.acquire_time);  // renewed since acquired

  const auto killed = steady_clock::now();
  a.process().signal(SIGKILL);
  auto ra = a.process().wait(10s);
  CHECK(ra.signal == SIGKILL);
  CHECK(ra.out.find("STOPPED A") == std::string::npos);

  // B saw A's last renewal at most one candidate wait after it was written, and tries again
  // the moment the lease runs out from there: lease + retry, stretched by client-go's jitter.
  REQUIRE(b.waitForLine("LEADING B", kLease + kMaxCandidateWait + kSlack));
  const auto took = steady_clock::now() - killed;
  INFO("B led " << seconds(took) << " s after A was killed");
  CHECK(took <= kLease + kMaxCandidateWait + kSlack);
  // A renewed at most one retry period (plus a round trip) before it died, and B must wait a
  // whole lease from when it saw that renewal.
  CHECK(took >= kLease - kRetry - 500ms);

  const auto after = readRecord(*api, ns.name(), lease);
  CHECK(after.holder_identity == "B");
  CHECK(after.lease_transitions == before.lease_transitions + 1);
  REQUIRE(after.acquire_time.has_value());
  CHECK(*after.acquire_time > *before.renew_time);

  // A process that loses its lease exits 3, as a role does.
  for (int i = 0; i < 10; ++i) {
    auto current = ok(api->getSync(leaseRef(ns.name(), lease)), "get lease");
    current.as_object()["spec"].as_object()["holderIdentity"] = "intruder";
    auto r = api->updateSync(leaseRef(ns.name(), lease), current);
    if (r)
      break;
    REQUIRE(isConflict(r.error()));
  }
  auto rb = b.process().wait(kRetry + kSlack);
  CHECK_FALSE(rb.timed_out);
  CHECK(rb.exit_code == 3);
  CHECK(rb.out.find("STOPPED B") != std::string::npos);
}

TEST_CASE("a leader stopped by SIGTERM releases the lease and a waiting candidate takes it at once",
          "[cluster]") {
  KubeApi api(tokenConfig());
  TestNamespace ns(*api, "koord-le-term");
  const std::string lease = uniqueName("lease-term");
  // A long lease: a successor that waited it out would miss the bound below by far.
  constexpr milliseconds long_lease{20000};
  constexpr milliseconds renew{6000};

  // Every change of the Lease, to see the released record even if B takes it at once.
  std::mutex mu;
  std::condition_variable cv;
  std::vector<LeaderElectionRecord> seen;
  std::string watch_error;
  WatchOptions wo;
  wo.field_selector = "metadata.name=" + lease;
  Watcher watcher(
      *api, api.io, leaseRef(ns.name(), ""), wo,
      [&](const WatchEvent& e) {
        std::lock_guard lock(mu);
        if (const auto* spec = e.object.as_object().if_contains("spec"))
          seen.push_back(recordFromLeaseSpec(*spec));
        cv.notify_all();
      },
      [&](const ApiError& e) {
        std::lock_guard lock(mu);
        watch_error = std::to_string(e.code) + " " + e.message;
      });
  watcher.start();

  Candidate a("A", ns.name(), lease, long_lease, renew);
  REQUIRE(a.waitForLine("LEADING A", 20s));
  Candidate b("B", ns.name(), lease, long_lease, renew);
  REQUIRE(b.waitForLine("LEADER A", 10s));

  const auto terminated = steady_clock::now();
  a.process().signal(SIGTERM);
  auto ra = a.process().wait(10s);
  CHECK(ra.exit_code == 0);
  CHECK(ra.out.find("STOPPED A") != std::string::npos);

  REQUIRE(b.waitForLine("LEADING B", kMaxCandidateWait + kSlack));
  const auto took = steady_clock::now() - terminated;
  INFO("B led " << seconds(took) << " s after A was sent SIGTERM");
  CHECK(took < long_lease / 4);

  {
    std::unique_lock lock(mu);
    REQUIRE(cv.wait_for(lock, 10s,
                        [&] { return !seen.empty() && seen.back().holder_identity == "B"; }));
    // A's release, then B: nobody held it in between.
    REQUIRE(seen.size() >= 2);
    const auto& released = seen[seen.size() - 2];
    CHECK(released.holder_identity.empty());
    CHECK(released.lease_duration_seconds == 1);
    CHECK(released.lease_transitions == 0);
    CHECK(seen.back().lease_transitions == 1);
    CHECK(seen.back().lease_duration_seconds == 20);
    CHECK(watch_error.empty());
  }
  watcher.stop();

  b.process().signal(SIGTERM);
  CHECK(b.process().wait(10s).exit_code == 0);
}

TEST_CASE("a leader that finds another holder in its lease stops leading at once", "[cluster]") {
  KubeApi api(tokenConfig());
  TestNamespace ns(*api, "koord-le-intruder");
  const std::string lease = uniqueName("lease-intruder");
  ElectorHost host(tokenConfig());
  Events events;
  auto config = electorConfig(ns.name(), lease, "in-process");
  events.wire(config);
  LeaderElector elector(*host.client, host.io, config);
  elector.start();
  REQUIRE(events.waitFor([](Events& e) { return e.started == 1; }, 20s));
  CHECK(elector.isLeader());
  CHECK(elector.observedLeader() == "in-process");

  // Overwrite the holder; the elector renews concurrently, so retry on a conflict.
  steady_clock::time_point intruded;
  bool written = false;
  for (int i = 0; i < 10 && !written; ++i) {
    auto current = ok(api->getSync(leaseRef(ns.name(), lease)), "get lease");
    current.as_object()["spec"].as_object()["holderIdentity"] = "intruder";
    auto r = api->updateSync(leaseRef(ns.name(), lease), current);
    if (r) {
      intruded = steady_clock::now();
      written = true;
    } else {
      REQUIRE(isConflict(r.error()));
    }
  }
  REQUIRE(written);

  // The next renew (one retry period later) sees it: no waiting out the renew deadline.
  REQUIRE(events.waitFor([](Events& e) { return e.stopped == 1; }, kRetry + kSlack));
  {
    std::lock_guard lock(events.mu);
    INFO("stopped " << seconds(events.stopped_at - intruded) << " s after the intrusion");
    CHECK(events.stopped_at - intruded <= kRetry + kSlack);
    CHECK(host.isIoThread(events.stopped_thread));
    REQUIRE_FALSE(events.leaders.empty());
    CHECK(events.leaders.front() == "in-process");
    CHECK(events.leaders.back() == "intruder");
  }
  CHECK_FALSE(elector.isLeader());
  CHECK(elector.observedLeader() == "intruder");

  // Finished for good: it neither renews nor takes the lease back, and stop() adds nothing.
  std::this_thread::sleep_for(2 * kRetry);
  CHECK(readRecord(*api, ns.name(), lease).holder_identity == "intruder");
  elector.stop();
  std::lock_guard lock(events.mu);
  CHECK(events.started == 1);
  CHECK(events.stopped == 1);
}

TEST_CASE("a leader cut off from the apiserver stops before its lease can expire for others",
          "[cluster]") {
  KubeApi api(tokenConfig());
  TestNamespace ns(*api, "koord-le-cut");
  const std::string lease = uniqueName("lease-cut");
  auto config = tokenConfig();
  const int port = std::stoi(config.host.substr(config.host.rfind(':') + 1));
  koord::testing::TcpRelay relay("127.0.0.1", port);
  config.host = "https://127.0.0.1:" + std::to_string(relay.port());
  ElectorHost host(config);
  Events events;
  auto ec = electorConfig(ns.name(), lease, "cut-off");
  events.wire(ec);
  LeaderElector elector(*host.client, host.io, ec);
  elector.start();
  REQUIRE(events.waitFor([](Events& e) { return e.started == 1; }, 20s));
  // Let it renew a few times first.
  std::this_thread::sleep_for(2 * kRetry + 500ms);
  REQUIRE_FALSE(events.waitFor([](Events& e) { return e.stopped > 0; }, 0ms));

  const auto cut = steady_clock::now();
  relay.cut();
  REQUIRE(events.waitFor([](Events& e) { return e.stopped == 1; }, kRenew + kRetry + kSlack));
  const auto stopped_wall = std::chrono::system_clock::now();
  steady_clock::time_point stopped_at;
  {
    std::lock_guard lock(events.mu);
    stopped_at = events.stopped_at;
  }
  INFO("stopped " << seconds(stopped_at - cut) << " s after the cut");
  // It gave up on the deadline, not on the first failed renew...
  CHECK(stopped_at - cut >= kRenew - kRetry - 500ms);
  CHECK_FALSE(elector.isLeader());

  // ...and before anyone else could take the lease: others wait a whole lease from when they
  // saw its last renewal, which was written no earlier than the server's renewTime says.
  const auto record = readRecord(*api, ns.name(), lease);
  CHECK(record.holder_identity == "cut-off");
  REQUIRE(record.renew_time.has_value());
  const auto expires = *record.renew_time + std::chrono::seconds(record.lease_duration_seconds);
  INFO("stopped " << seconds(expires - stopped_wall) << " s before the lease expired");
  CHECK(stopped_wall < expires);
  relay.restore();
}

TEST_CASE("stop() from another thread releases the lease before it returns", "[cluster]") {
  KubeApi api(tokenConfig());
  TestNamespace ns(*api, "koord-le-stop");
  const std::string lease = uniqueName("lease-stop");
  ElectorHost host(tokenConfig());
  Events events;
  auto config = electorConfig(ns.name(), lease, "first");
  events.wire(config);
  auto elector = std::make_unique<LeaderElector>(*host.client, host.io, config);
  elector->start();
  elector->start();  // a second start is ignored
  REQUIRE(events.waitFor([](Events& e) { return e.started == 1; }, 20s));
  // client-go's leader_election_master_status{name=<lease>}: 1 while leading, 0 after.
  const std::string status_series = "leader_election_master_status{name=\"" + lease + "\"} ";
  const auto masterStatus = [&]() -> std::string {
    const std::string text = koord::metrics::Registry::global().render();
    const auto at = text.find(status_series);
    return at == std::string::npos ? "absent"
                                   : text.substr(at + status_series.size(),
                                                 text.find('\n', at) - at - status_series.size());
  };
  CHECK(masterStatus() == "1");

  const auto before_stop = std::chrono::system_clock::now();
  elector->stop();
  CHECK(masterStatus() == "0");
  {
    std::lock_guard lock(events.mu);
    CHECK(events.stopped == 1);  // before stop() returned
    CHECK(host.isIoThread(events.stopped_thread));
  }
  CHECK_FALSE(elector->isLeader());
  auto record = readRecord(*api, ns.name(), lease);
  CHECK(record.holder_identity.empty());
  CHECK(record.lease_duration_seconds == 1);
  REQUIRE(record.renew_time.has_value());
  CHECK(*record.renew_time >= std::chrono::floor<std::chrono::microseconds>(before_stop) - 1s);
  CHECK(record.lease_transitions == 0);
  elector->stop();
  elector.reset();
  {
    std::lock_guard lock(events.mu);
    CHECK(events.started == 1);
    CHECK(events.stopped == 1);
  }

  // Released: a new candidate takes it on its first attempt.
  Events second_events;
  auto second_config = electorConfig(ns.name(), lease, "second");
  second_events.wire(second_config);
  const auto started = steady_clock::now();
  LeaderElector second(*host.client, host.io, second_config);
  second.start();
  REQUIRE(second_events.waitFor([](Events& e) { return e.started == 1; }, kSlack));
  INFO("took " << seconds(steady_clock::now() - started) << " s");
  record = readRecord(*api, ns.name(), lease);
  CHECK(record.holder_identity == "second");
  CHECK(record.lease_transitions == 1);
  CHECK(record.lease_duration_seconds == 4);
  second.stop();
}

TEST_CASE("stop() from a callback returns at once and the release follows", "[cluster]") {
  KubeApi api(tokenConfig());
  TestNamespace ns(*api, "koord-le-cbstop");
  const std::string lease = uniqueName("lease-cbstop");
  ElectorHost host(tokenConfig());
  Events events;
  auto config = electorConfig(ns.name(), lease, "cb-stopper");
  events.wire(config);
  LeaderElector* self = nullptr;
  int stopped_when_stop_returned = -1;
  // A role that gives up as soon as it leads; the callback holds the elector's strand, so the
  // release cannot have begun when stop() returns, and waiting for it would deadlock.
  config.on_started_leading = [&] {
    self->stop();
    std::lock_guard lock(events.mu);
    stopped_when_stop_returned = events.stopped;
    ++events.started;
    events.cv.notify_all();
  };
  LeaderElector elector(*host.client, host.io, config);
  self = &elector;
  elector.start();
  REQUIRE(events.waitFor([](Events& e) { return e.stopped == 1; }, 20s));
  {
    std::lock_guard lock(events.mu);
    CHECK(events.started == 1);
    CHECK(stopped_when_stop_returned == 0);
    CHECK(host.isIoThread(events.stopped_thread));
  }
  CHECK_FALSE(elector.isLeader());
  CHECK(readRecord(*api, ns.name(), lease).holder_identity.empty());
}

TEST_CASE("a LeaderElector refuses unsafe timings at construction", "[cluster]") {
  ElectorHost host(tokenConfig());
  auto config = electorConfig("default", "never-created", "x");
  config.renew_deadline = config.lease_duration;
  CHECK_THROWS_AS(LeaderElector(*host.client, host.io, config), std::invalid_argument);
  config = electorConfig("default", "never-created", "");
  CHECK_THROWS_AS(LeaderElector(*host.client, host.io, config), std::invalid_argument);
  config = electorConfig("default", "never-created", "x");
  config.retry_period = config.renew_deadline;
  CHECK_THROWS_AS(LeaderElector(*host.client, host.io, config), std::invalid_argument);
}
