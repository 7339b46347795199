// koord::http::Client's connection pool used from several threads at once: blocking and async
// requests under a per-host cap, streams cancelled from other threads, and the pool closed
// while requests are in flight. Every request is answered, and the cap holds throughout.
#include <boost/asio/steady_timer.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "koord/http/client.h"
#include "koord/http/server.h"
#include "test_util.h"

using namespace koord::http;
using namespace koord::http::testing;

TEST_CASE("client: threads share a capped pool while it is closed and streams are cancelled",
          "[concurrency]") {
  // Declared before the server and the client, whose callbacks count into them.
  std::atomic<int> in_flight{0};
  std::atomic<int> most_in_flight{0};
  std::atomic<int> streams_done{0};
  IoThreads loop(2);
  Server server(loop.io, localOptions("pool-concurrency"));
  // Answers after a moment, so that requests pile up behind the cap.
  server.handleAsync("/slow", [&](Request r, std::function<void(Response)> done) {
    const int now = ++in_flight;
    int seen = most_in_flight.load();
    while (now > seen && !most_in_flight.compare_exchange_weak(seen, now)) {
    }
    auto timer = std::make_shared<boost::asio::steady_timer>(loop.io, std::chrono::milliseconds(2));
    timer->async_wait([&, timer, done, query = r.query](boost::system::error_code) {
      --in_flight;
      done(text(200, query));
    });
  });
  server.handle("/stream", [](const Request&) { return text(200, std::string(64 << 10, 'x')); });
  server.start();

  ClientOptions options;
  options.max_conns_per_host = 3;
  options.max_idle_per_host = 3;
  Client client(loop.io, options);

  constexpr int kThreads = 4;
  constexpr int kPerThread = 30;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::future<bool>> async;
      for (int i = 0; i < kPerThread; ++i) {
        const std::string q = std::to_string(t) + "-" + std::to_string(i);
        if (i % 2 == 0) {
          auto r = client.sendSync(get(server.port(), "/slow?" + q));
          if (r && r->status == 200 && r->body == q)
            ++ok;
          continue;
        }
        auto promise = std::make_shared<std::promise<bool>>();
        async.push_back(promise->get_future());
        client.send(get(server.port(), "/slow?" + q), [promise, q](koord::Result<Response> r) {
          promise->set_value(r && r->status == 200 && r->body == q);
        });
      }
      for (auto& f : async) {
        if (f.get())
          ++ok;
      }
    });
  }
  // Streams outside the cap, each cancelled from a thread of its own while it may be reading.
  std::vector<std::thread> cancellers;
  for (int s = 0; s < 4; ++s) {
    auto handle = client.stream(
        get(server.port(), "/stream"), [](int, const Headers&) { return true; },
        [](std::string_view) { return true; }, [&](boost::system::error_code) { ++streams_done; });
    cancellers.emplace_back([handle] { handle.cancel(); });
  }
  // The pool closed under the requests, as a graceful shutdown does.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  client.closeIdleConnections();

  for (auto& t : threads)
    t.join();
  for (auto& t : cancellers)
    t.join();
  const auto deadline = SteadyClock::now() + 10s;
  while (streams_done.load() < 4 && SteadyClock::now() < deadline)
    std::this_thread::sleep_for(5ms);

  CHECK(ok == kThreads * kPerThread);
  CHECK(most_in_flight.load() <= 3);
  CHECK(streams_done.load() == 4);  // on_done exactly once each, cancelled or finished
  CHECK(client.idleConnections() == 0);
}
