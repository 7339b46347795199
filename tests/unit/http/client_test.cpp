#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <catch2/catch.hpp>

#include <condition_variable>
#include <functional>
#include <future>
#include <optional>
#include <string>

#include "http_peer.h"
#include "koord/http/client.h"
#include "koord/http/server.h"
#include "test_util.h"

using namespace koord::http;
using namespace koord::http::testing;
using koord::Errc;
using koord::makeError;

namespace {

// A scripted HTTP/1.1 peer: for each connection in turn it answers `answer` requests, then
// reads one more and closes without replying, the way a server's idle close can cross a
// client's write.
class FakeServer {
 public:
  struct Script {
    int answer;
    bool close_on_next;
  };

  explicit FakeServer(std::vector<Script> scripts) : scripts_(std::move(scripts)) {
    fd_ = listenOnLoopback(port_, "fake server");
    thread_ = std::thread([this] { run(); });
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }

  std::uint16_t port() const { return port_; }
  int accepted() const { return accepted_.load(); }

 private:
  bool waitReadable(int fd) {
    while (!stop_) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) > 0)
        return true;
    }
    return false;
  }

  // Reads one request (headers plus a Content-Length body); false if the peer went away.
  bool readRequest(int fd, std::string& buf) {
    for (;;) {
      auto end = buf.find("\r\n\r\n");
      if (end != std::string::npos) {
        std::size_t length = 0;
        auto pos = buf.find("Content-Length: ");
        if (pos != std::string::npos && pos < end)
          length = std::stoul(buf.substr(pos + 16));
        if (buf.size() >= end + 4 + length) {
          buf.erase(0, end + 4 + length);
          return true;
        }
      }
      if (!waitReadable(fd))
        return false;
      char tmp[4096];
      ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
      if (n <= 0)
        return false;
      buf.append(tmp, static_cast<std::size_t>(n));
    }
  }

  void run() {
    for (std::size_t c = 0; c < scripts_.size(); ++c) {
      if (!waitReadable(fd_))
        return;
      int conn = ::accept(fd_, nullptr, nullptr);
      if (conn < 0)
        return;
      ++accepted_;
      std::string buf;
      for (int i = 0; i < scripts_[c].answer; ++i) {
        if (!readRequest(conn, buf))
          break;
        std::string body = "conn" + std::to_string(c) + "-req" + std::to_string(i);
        std::string resp =
            "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
        ::send(conn, resp.data(), resp.size(), MSG_NOSIGNAL);
      }
      if (scripts_[c].close_on_next) {
        readRequest(conn, buf);
      } else {
        while (readRequest(conn, buf)) {
        }
      }
      ::close(conn);
    }
  }

  std::vector<Script> scripts_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

// Sends `request` n times at once; each future says whether that one got a 200.
std::vector<std::future<bool>> sendAll(Client& client, const ClientRequest& request, int n) {
  std::vector<std::future<bool>> results;
  for (int i = 0; i < n; ++i) {
    auto promise = std::make_shared<std::promise<bool>>();
    results.push_back(promise->get_future());
    client.send(request, [promise](koord::Result<Response> r) {
      promise->set_value(r && r->status == 200);
    });
  }
  return results;
}

}  // namespace

TEST_CASE("client: concurrent requests from several threads all succeed") {
  IoThreads loop(2);
  Server server(loop.io, localOptions("concurrent"));
  std::atomic<int> served{0};
  server.handle("/n", [&](const Request& r) {
    ++served;
    return text(200, r.query);
  });
  server.start();
  Client client(loop.io, {});

  constexpr int kThreads = 4;
  constexpr int kPerThread = 50;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string q = std::to_string(t) + "-" + std::to_string(i);
        auto r = client.sendSync(get(server.port(), "/n?" + q));
        if (r && r->status == 200 && r->body == q)
          ++ok;
      }
    });
  }
  for (auto& t : threads)
    t.join();
  CHECK(ok == kThreads * kPerThread);
  CHECK(served == kThreads * kPerThread);
  // A connection is opened only when none is idle, so never more than were in flight at once.
  CHECK(client.connectionsOpened() <= kThreads);
  CHECK(client.idleConnections() == client.connectionsOpened());
}

TEST_CASE("client: the pool keeps at most max_idle_per_host connections") {
  IoThreads loop;
  Server server(loop.io, localOptions("maxidle"));
  server.handleAsync("/slow", [&](Request, std::function<void(Response)> done) {
    auto timer = std::make_shared<boost::asio::steady_timer>(loop.io, 100ms);
    timer->async_wait([timer, done](boost::system::error_code) { done(text(200, "ok")); });
  });
  server.start();
  ClientOptions copts;
  copts.max_idle_per_host = 1;
  Client client(loop.io, copts);
  for (auto& f : sendAll(client, get(server.port(), "/slow"), 4))
    CHECK(f.get());
  CHECK(client.connectionsOpened() == 4);
  CHECK(client.idleConnections() == 1);
}

TEST_CASE("client: max_conns_per_host caps the connections and queues the rest") {
  IoThreads loop;
  Server server(loop.io, localOptions("maxconns"));
  std::atomic<int> in_flight{0};
  std::atomic<int> most_in_flight{0};
  server.handleAsync("/slow", [&](Request, std::function<void(Response)> done) {
    const int now = ++in_flight;
    int seen = most_in_flight.load();
    while (now > seen && !most_in_flight.compare_exchange_weak(seen, now)) {
    }
    auto timer = std::make_shared<boost::asio::steady_timer>(loop.io, 30ms);
    timer->async_wait([&, timer, done](boost::system::error_code) {
      --in_flight;
      done(text(200, "ok"));
    });
  });
  server.start();
  ClientOptions copts;
  copts.max_conns_per_host = 2;
  copts.max_idle_per_host = 2;
  Client client(loop.io, copts);
  for (auto& f : sendAll(client, get(server.port(), "/slow"), 10))
    CHECK(f.get());
  // Every request went over one of the two connections, handed from one request to the next.
  CHECK(client.connectionsOpened() == 2);
  CHECK(most_in_flight.load() == 2);
  CHECK(client.idleConnections() == 2);
}

TEST_CASE("client: a connection that fails under the cap frees its slot for a waiting request") {
  // The first connection answers once and then closes on the next request (a POST is not retried
  // on a reused connection that lost its response), the second serves on: the request queued
  // behind the failure gets a new connection instead of waiting forever.
  FakeServer fake({{1, true}, {100, false}});
  IoThreads loop;
  ClientOptions copts;
  copts.max_conns_per_host = 1;
  copts.max_idle_per_host = 1;
  Client client(loop.io, copts);
  auto first = client.sendSync(get(fake.port(), "/a"));
  REQUIRE(first);
  CHECK(first->body == "conn0-req0");
  ClientRequest post = get(fake.port(), "/b");
  post.method = "POST";
  post.body = "x";
  std::promise<bool> failed_promise;
  std::promise<std::string> next_promise;
  client.send(post, [&](koord::Result<Response> r) { failed_promise.set_value(!r); });
  client.send(get(fake.port(), "/c"), [&](koord::Result<Response> r) {
    next_promise.set_value(r ? r->body : std::string("error"));
  });
  CHECK(failed_promise.get_future().get());
  CHECK(next_promise.get_future().get() == "conn1-req0");
  CHECK(fake.accepted() == 2);
}

TEST_CASE("client: closeIdleConnections empties the pool and keeps it empty") {
  IoThreads loop;
  Server server(loop.io, localOptions("close-idle"));
  server.handle("/x", [](const Request&) { return text(200, "x"); });
  server.start();
  Client client(loop.io, {});
  REQUIRE(client.sendSync(get(server.port(), "/x")));
  REQUIRE(client.idleConnections() == 1);
  client.closeIdleConnections();
  CHECK(client.idleConnections() == 0);
  // Still usable, but nothing is pooled any more: shutdown must not leave a socket behind.
  auto r = client.sendSync(get(server.port(), "/x"));
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(client.idleConnections() == 0);
  CHECK(client.connectionsOpened() == 2);
}

TEST_CASE("client: a pooled connection the server closed is replaced") {
  IoThreads loop;
  auto opts = localOptions("stale");
  opts.idle_timeout = 150ms;
  Server server(loop.io, opts);
  server.handle("/x", [](const Request&) { return text(200, "x"); });
  server.start();
  Client client(loop.io, {});
  REQUIRE(client.sendSync(get(server.port(), "/x")));
  REQUIRE(client.idleConnections() == 1);
  std::this_thread::sleep_for(400ms);  // the server closes the idle connection meanwhile
  auto r = client.sendSync(get(server.port(), "/x"));
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(client.connectionsOpened() == 2);
  CHECK(server.connectionsAccepted() == 2);
}

TEST_CASE("client: retries once when the server closes a pooled connection under a request") {
  SECTION("GET is retried on a fresh connection") {
    FakeServer fake({{1, true}, {1, false}});
    IoThreads loop;
    Client client(loop.io, {});
    auto first = client.sendSync(get(fake.port(), "/a"));
    REQUIRE(first);
    CHECK(first->body == "conn0-req0");
    auto second = client.sendSync(get(fake.port(), "/b"));
    REQUIRE(second);
    CHECK(second->body == "conn1-req0");
    CHECK(client.connectionsOpened() == 2);
    CHECK(fake.accepted() == 2);
  }
  SECTION("POST, which the server may have seen, is not repeated") {
    FakeServer fake({{1, true}, {1, false}});
    IoThreads loop;
    Client client(loop.io, {});
    auto req = get(fake.port(), "/a");
    req.method = "POST";
    req.body = "payload";
    REQUIRE(client.sendSync(req));
    auto second = client.sendSync(req);
    CHECK_FALSE(second);
    CHECK(client.connectionsOpened() == 1);
    CHECK(fake.accepted() == 1);
  }
}

TEST_CASE("client: request timeout maps to Errc::kTimeout") {
  IoThreads loop;
  Server server(loop.io, localOptions("clienttimeout"));
  server.handleAsync("/slow", [&](Request, std::function<void(Response)> done) {
    auto timer = std::make_shared<boost::asio::steady_timer>(loop.io, 600ms);
    timer->async_wait([timer, done](boost::system::error_code) { done(text(200, "late")); });
  });
  server.start();
  Client client(loop.io, {});
  auto req = get(server.port(), "/slow");
  req.timeout = 150ms;
  auto start = SteadyClock::now();
  auto r = client.sendSync(req);
  auto elapsed = SteadyClock::now() - start;
  REQUIRE_FALSE(r);
  CHECK(r.error() == makeError(Errc::kTimeout));
  CHECK(elapsed >= 100ms);
  CHECK(elapsed < 500ms);
  CHECK(client.idleConnections() == 0);
}

TEST_CASE("client: errors surface as error codes") {
  IoThreads loop;
  Client client(loop.io, {});

  SECTION("connection refused") {
    // A port that was just free: bound without listening, then released.
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    auto r = client.sendSync(get(ntohs(addr.sin_port), "/"));
    REQUIRE_FALSE(r);
    CHECK(r.error() == boost::asio::error::connection_refused);
  }
  SECTION("invalid URLs") {
    for (std::string bad : {"ftp://127.0.0.1/", "not a url", "http:///nohost", ""}) {
      ClientRequest req;
      req.url = bad;
      auto r = client.sendSync(req);
      REQUIRE_FALSE(r);
      CHECK(r.error() == makeError(Errc::kInvalidArgument));
    }
  }
  SECTION("header injection is refused") {
    ClientRequest req;
    req.url = "http://127.0.0.1:1/";
    req.headers = {{"X-Evil", "a\r\nInjected: yes"}};
    auto r = client.sendSync(req);
    REQUIRE_FALSE(r);
    CHECK(r.error() == makeError(Errc::kInvalidArgument));
  }
}

TEST_CASE("client: response body over the limit is kBodyTooLarge") {
  IoThreads loop;
  Server server(loop.io, localOptions("bigresponse"));
  server.handle("/big", [](const Request&) { return text(200, std::string(1000, 'b')); });
  server.start();
  ClientOptions copts;
  copts.response_body_limit = 100;
  Client client(loop.io, copts);
  auto r = client.sendSync(get(server.port(), "/big"));
  REQUIRE_FALSE(r);
  CHECK(r.error() == makeError(Errc::kBodyTooLarge));
}

TEST_CASE("client: callbacks run on the io_context and sendSync refuses to run there") {
  IoThreads loop;
  Server server(loop.io, localOptions("callbacks"));
  server.handle("/x", [](const Request& r) { return text(200, r.method + " " + r.body); });
  server.start();
  Client client(loop.io, {});

  std::promise<bool> on_io;
  auto req = get(server.port(), "/x");
  req.method = "PUT";
  req.body = "data";
  std::string body;
  client.send(req, [&](koord::Result<Response> r) {
    body = r ? r->body : r.error().message();
    on_io.set_value(loop.io.get_executor().running_in_this_thread());
  });
  CHECK(on_io.get_future().get());
  CHECK(body == "PUT data");

  std::promise<koord::Result<Response>> nested;
  boost::asio::post(loop.io, [&] { nested.set_value(client.sendSync(get(server.port(), "/x"))); });
  auto r = nested.get_future().get();
  REQUIRE_FALSE(r);
  CHECK(r.error() == makeError(Errc::kInvalidArgument));
}

namespace {

// A watch endpoint that writes a chunked body over time, each piece as `next_chunk` gives it
// (nullopt ends the body).
class StreamServer {
 public:
  explicit StreamServer(std::function<std::optional<std::string>()> next_chunk)
      : peer_([next_chunk](const koord::testing::PeerRequest&) {
          koord::testing::PeerReply reply;
          reply.next_chunk = next_chunk;
          return reply;
        }) {}
  std::string url() const { return peer_.url() + "/watch"; }

 private:
  koord::testing::HttpPeer peer_;
};

// What a stream delivered, for waiting on from the test thread.
struct StreamLog {
  std::mutex mu;
  std::condition_variable cv;
  int status = 0;
  std::string body;
  std::vector<std::string> pieces;
  std::optional<boost::system::error_code> done;

  template <typename Pred>
  bool waitFor(Pred pred, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] { return pred(); });
  }
};

StreamHandle startStream(Client& client, const std::string& url, StreamLog& log,
                         std::chrono::milliseconds idle = 0ms, bool stop_after_first = false) {
  ClientRequest req;
  req.url = url;
  return client.stream(
      std::move(req),
      [&log](int status, const Headers&) {
        std::lock_guard lock(log.mu);
        log.status = status;
        return true;
      },
      [&log, stop_after_first](std::string_view piece) {
        std::lock_guard lock(log.mu);
        log.body.append(piece);
        log.pieces.emplace_back(piece);
        log.cv.notify_all();
        return !stop_after_first;
      },
      [&log](boost::system::error_code ec) {
        std::lock_guard lock(log.mu);
        log.done = ec;
        log.cv.notify_all();
      },
      idle);
}

}  // namespace

TEST_CASE("client: stream hands chunks over as they arrive and ends cleanly") {
  std::promise<void> gate;
  auto gated = gate.get_future();
  int pieces = 0;
  StreamServer server([&]() -> std::optional<std::string> {
    switch (pieces++) {
      case 0:
        return "{\"a\":1}\n{\"b\"";
      case 1:
        gated.wait_for(5s);  // the client must see the first piece before the rest exists
        return ":2}\n";
      default:
        return std::nullopt;
    }
  });
  IoThreads io;
  Client client(io.io, {});
  StreamLog log;
  startStream(client, server.url(), log);
  REQUIRE(log.waitFor([&] { return log.body.size() >= 12; }));
  {
    std::lock_guard lock(log.mu);
    CHECK(log.status == 200);
    CHECK(log.body == "{\"a\":1}\n{\"b\"");
    CHECK_FALSE(log.done);
  }
  gate.set_value();
  REQUIRE(log.waitFor([&] { return log.done.has_value(); }));
  CHECK_FALSE(*log.done);
  CHECK(log.body == "{\"a\":1}\n{\"b\":2}\n");
  // A stream's connection is its own: never handed back to the pool.
  CHECK(client.idleConnections() == 0);
}

TEST_CASE("client: stream idle timeout, cancel, and a callback's false all end it") {
  IoThreads io;
  Client client(io.io, {});
  // "x", then nothing for 1.5 s.
  auto stall = [] {
    return [sent = false]() mutable -> std::optional<std::string> {
      if (sent) {
        std::this_thread::sleep_for(1500ms);
        return std::nullopt;
      }
      sent = true;
      return "x";
    };
  };
  SECTION("idle timeout") {
    StreamServer server(stall());
    StreamLog log;
    startStream(client, server.url(), log, 200ms);
    REQUIRE(log.waitFor([&] { return log.done.has_value(); }));
    CHECK(*log.done == makeError(Errc::kTimeout));
    CHECK(log.body == "x");
  }
  SECTION("cancel from another thread") {
    StreamServer server(stall());
    StreamLog log;
    auto handle = startStream(client, server.url(), log);
    REQUIRE(log.waitFor([&] { return !log.body.empty(); }));
    auto t0 = SteadyClock::now();
    handle.cancel();
    REQUIRE(log.waitFor([&] { return log.done.has_value(); }));
    CHECK(SteadyClock::now() - t0 < 1s);
    CHECK(*log.done == boost::asio::error::operation_aborted);
  }
  SECTION("on_data returns false") {
    StreamServer server(stall());
    StreamLog log;
    startStream(client, server.url(), log, 0ms, true);
    REQUIRE(log.waitFor([&] { return log.done.has_value(); }, 1s));
    CHECK(*log.done == boost::asio::error::operation_aborted);
    CHECK(log.pieces.size() == 1);
  }
}
