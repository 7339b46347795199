// The Eviction the koordlet posts: its apiVersion is the one discovery found, and no eviction
// goes out before discovery has answered. The API server here is unreachable on purpose: what is
// checked is that the evictor waits for an answer instead of guessing (cluster/api-versions and
// cluster/nopolicy-api-versions post real evictions).
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <thread>

#include "koord/kube/event_recorder.h"
#include "koord/kube/rest_client.h"
#include "qosmanager/evict/pod_evictor.h"

using namespace koord::roles::koordlet;
namespace json = boost::json;

namespace {

PodMeta victim() {
  PodMeta p;
  p.namespace_ = "ns";
  p.name = "be-0";
  p.uid = "uid-0";
  return p;
}

}  // namespace

TEST_CASE("pod evictor: no eviction before the API server said which version it takes") {
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::thread runner([&] { io.run(); });
  {
    koord::kube::RestConfig config;
    config.host = "https://127.0.0.1:1";  // nothing listens
    config.timeout = std::chrono::milliseconds(2000);
    koord::kube::RestClient client(io, config);
    koord::kube::EventRecorder recorder(client, io, {"koordlet", "node-a"});
    koord::metrics::Registry registry;
    qosmanager::PodEvictor evictor(client, recorder, registry, "node-a");
    evictor.discoverEvictionVersion(io);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    CHECK_FALSE(evictor.evictionVersion().has_value());

    // Answered at once, without a request: nothing is recorded as evicted either.
    std::optional<bool> answer;
    evictor.evict(victim(), "trigger by koordlet feature BEMemoryEvict", "test",
                  [&](bool ok) { answer = ok; });
    REQUIRE(answer.has_value());
    CHECK_FALSE(*answer);
    CHECK_FALSE(evictor.recentlyEvicted("uid-0"));
    evictor.stop();

    evictor.setEvictionVersion("policy/v1");
    CHECK(evictor.evictionVersion() == std::optional<std::string>("policy/v1"));
  }
  guard.reset();
  io.stop();
  runner.join();
}
