// koord::kube::EventRecorder fed from several threads at once while two io threads write: every
// occurrence is counted exactly once, and for each object the repeats reach the server in order
// and only after the Event they patch was created. The peer is a loopback HTTP server that keeps
// Events by name, as the apiserver does for POST and PATCH.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "http_peer.h"
#include "koord/kube/event_recorder.h"
#include "test_threads.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using namespace koord::kube;
using koord::testing::HttpPeer;
using koord::testing::PeerReply;
using koord::testing::PeerRequest;

using koord::kube::testing::IoThreads;

namespace {

constexpr const char* kEvents = "/api/v1/namespaces/default/events";

// Events by name. Faults the recorder must never cause are counted, not answered differently,
// so that a wrong order shows up in the test's checks rather than as a retry.
class EventStore {
 public:
  struct Stored {
    std::string object;  // involvedObject.name
    std::int64_t count = 0;
  };

  PeerReply serve(const PeerRequest& r) {
    std::lock_guard lock(mu_);
    ++requests_;
    boost::system::error_code ec;
    json::value body = json::parse(r.body, ec);
    if (ec || !body.is_object())
      return {400, R"({"kind":"Status","code":400,"reason":"BadRequest"})", {}};
    if (r.method == "POST" && r.path == kEvents) {
      const std::string name(body.at("metadata").at("name").as_string());
      if (events_.count(name) > 0) {
        ++faults_;
        return {409, R"({"kind":"Status","code":409,"reason":"AlreadyExists"})", {}};
      }
      if (body.at("count").as_int64() != 1)
        ++faults_;
      events_[name] = {std::string(body.at("involvedObject").at("name").as_string()), 1};
      return {201, r.body, {}};
    }
    const std::string prefix = std::string(kEvents) + "/";
    if (r.method == "PATCH" && r.path.starts_with(prefix)) {
      auto it = events_.find(r.path.substr(prefix.size()));
      if (it == events_.end()) {
        ++faults_;  // a repeat sent before its Event was created
        return {404, R"({"kind":"Status","code":404,"reason":"NotFound"})", {}};
      }
      const std::int64_t count = body.at("count").as_int64();
      if (count != it->second.count + 1)
        ++faults_;  // repeats of one object out of order
      it->second.count = count;
      return {200, r.body, {}};
    }
    return {404, R"({"kind":"Status","code":404,"reason":"NotFound"})", {}};
  }

  // involvedObject.name -> the counts of its Events.
  std::map<std::string, std::vector<std::int64_t>> counts() const {
    std::lock_guard lock(mu_);
    std::map<std::string, std::vector<std::int64_t>> out;
    for (const auto& [name, e] : events_)
      out[e.object].push_back(e.count);
    return out;
  }
  int faults() const {
    std::lock_guard lock(mu_);
    return faults_;
  }
  int requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, Stored> events_;
  int faults_ = 0;
  int requests_ = 0;
};

// The Event store behind a loopback HTTP server, and a client configuration for it.
struct EventServer {
  EventStore store;
  HttpPeer peer{[this](const PeerRequest& r) { return store.serve(r); }};

  RestConfig config() const {
    RestConfig c;
    c.host = peer.url();
    c.qps = 0;
    return c;
  }
};

ObjectReference podRef(const std::string& name) {
  ObjectReference ref;
  ref.kind = "Pod";
  ref.api_version = "v1";
  ref.namespace_ = "default";
  ref.name = name;
  ref.uid = "uid-" + name;
  return ref;
}

}  // namespace

TEST_CASE("event recorder: records from many threads are each counted once, in order per object",
          "[kube][events][concurrency]") {
  EventServer server;
  EventStore& store = server.store;
  IoThreads io(2);
  RestClient client(io.io, server.config());
  EventCorrelatorOptions options;
  options.spam_burst = 1000;  // this test counts every occurrence; the filter has its own tests
  EventRecorder recorder(client, io.io, EventSource{"koord-test", "node-a"}, koord::Clock::real(),
                         options);

  // One reason and message per object, so its occurrences are repeats of one Event; objects
  // outnumber the recorder's lanes, so lanes carry several objects each.
  constexpr int kObjects = 12;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5;  // per object
  std::atomic<bool> recording{true};
  std::thread flusher([&] {
    // flush() from another thread while records arrive: it must neither hang nor crash.
    while (recording)
      (void)recorder.flush(5ms);
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        for (int o = 0; o < kObjects; ++o) {
          recorder.record(podRef("pod-" + std::to_string(o)), EventType::kNormal, "Scheduled",
                          "placed on node-a");
        }
      }
    });
  }
  for (auto& t : threads)
    t.join();
  recording = false;
  flusher.join();
  REQUIRE(recorder.flush(30s));

  const auto counts = store.counts();
  CHECK(counts.size() == static_cast<std::size_t>(kObjects));
  for (const auto& [object, c] : counts) {
    INFO(object);
    CHECK(c == std::vector<std::int64_t>{kThreads * kPerThread});
  }
  CHECK(store.faults() == 0);
  // One create and then one patch per further occurrence.
  CHECK(store.requests() == kObjects * kThreads * kPerThread);
  CHECK(recorder.droppedCount() == 0);
  CHECK(recorder.filteredCount() == 0);
}

TEST_CASE("event recorder: the client may go right after the recorder while io threads run",
          "[kube][events][concurrency]") {
  // The descheduler's cluster test once aborted with bad_weak_ptr: a chain already past its
  // stopped check called into a RestClient being destroyed after the recorder. Each round here
  // destroys the recorder, then the client, while the io threads are writing; ASan and TSan
  // watch what a chain still touches.
  EventServer server;
  EventStore& store = server.store;
  IoThreads io(2);
  const RestConfig config = server.config();
  for (int round = 0; round < 100; ++round) {
    auto client = std::make_unique<RestClient>(io.io, config);
    auto recorder =
        std::make_unique<EventRecorder>(*client, io.io, EventSource{"koord-test", "node-a"});
    for (int o = 0; o < 16; ++o) {
      recorder->record(podRef(fmt::format("pod-{}-{}", round, o)), EventType::kNormal, "Scheduled",
                       "placed on node-a");
    }
    // Let some chains get under way so that the destruction meets them mid-flight.
    std::this_thread::sleep_for(std::chrono::microseconds(100 * (round % 20)));
    recorder.reset();
    client.reset();
  }
  // Every request the server saw was well formed and in order.
  CHECK(store.faults() == 0);
  CHECK(store.requests() > 0);
}
