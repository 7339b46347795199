#include <boost/asio/steady_timer.hpp>

#include <catch2/catch.hpp>

#include <future>
#include <mutex>

#include "koord/core/metrics.h"
#include "koord/http/client.h"
#include "koord/http/server.h"
#include "test_util.h"

using namespace koord::http;
using namespace koord::http::testing;

namespace {

std::string rawGet(std::string_view path, std::string_view extra = {}) {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: test\r\n" + std::string(extra) + "\r\n";
}

template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = 2s) {
  auto deadline = SteadyClock::now() + timeout;
  while (SteadyClock::now() < deadline) {
    if (pred())
      return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

}  // namespace

TEST_CASE("server: keep-alive serves two requests over one connection") {
  IoThreads loop;
  Server server(loop.io, localOptions("keepalive"));
  server.handle("/hello", [](const Request& r) {
    return text(200, "hello " + r.query + " " + std::string(r.header("x-test")));
  });
  server.start();
  REQUIRE(server.port() != 0);

  Client client(loop.io, {});
  auto req = get(server.port(), "/hello?a=1");
  req.headers = {{"X-Test", "yes"}};
  auto first = client.sendSync(req);
  REQUIRE(first);
  CHECK(first->status == 200);
  CHECK(first->body == "hello a=1 yes");
  CHECK(first->content_type == "text/plain; charset=utf-8");

  auto second = client.sendSync(get(server.port(), "/hello?b=2"));
  REQUIRE(second);
  CHECK(second->body == "hello b=2 ");
  CHECK(client.connectionsOpened() == 1);
  CHECK(server.connectionsAccepted() == 1);
  CHECK(client.idleConnections() == 1);
}

TEST_CASE("server: unknown path is 404") {
  IoThreads loop;
  Server server(loop.io, localOptions("notfound"));
  server.handle("/known", [](const Request&) { return text(200, "ok"); });
  server.start();
  Client client(loop.io, {});
  auto r = client.sendSync(get(server.port(), "/unknown"));
  REQUIRE(r);
  CHECK(r->status == 404);
  // Exact match: a prefix of a registered path is not that path.
  auto sub = client.sendSync(get(server.port(), "/known/sub"));
  REQUIRE(sub);
  CHECK(sub->status == 404);
}

TEST_CASE("server: a throwing handler gives 500 and the server keeps serving") {
  IoThreads loop;
  Server server(loop.io, localOptions("throws"));
  server.handle("/boom", [](const Request&) -> Response { throw std::runtime_error("kaboom"); });
  server.handle("/ok", [](const Request&) { return text(200, "fine"); });
  server.start();
  Client client(loop.io, {});
  auto boom = client.sendSync(get(server.port(), "/boom"));
  REQUIRE(boom);
  CHECK(boom->status == 500);
  CHECK(boom->body.find("kaboom") == std::string::npos);  // internals stay in the log
  auto ok = client.sendSync(get(server.port(), "/ok"));
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(ok->body == "fine");
}

TEST_CASE("server: body over body_limit is 413 and the connection closes") {
  IoThreads loop;
  auto opts = localOptions("bodylimit");
  opts.body_limit = 16;
  Server server(loop.io, opts);
  server.handle("/echo", [](const Request& r) { return text(200, r.body); });
  server.start();
  Client client(loop.io, {});

  auto req = get(server.port(), "/echo");
  req.method = "POST";
  req.body = "small";
  auto small = client.sendSync(req);
  REQUIRE(small);
  CHECK(small->status == 200);
  CHECK(small->body == "small");

  req.body = std::string(100, 'x');
  auto big = client.sendSync(req);
  REQUIRE(big);
  CHECK(big->status == 413);
  CHECK(client.idleConnections() == 0);

  SECTION("chunked bodies are limited too") {
    RawSocket raw(server.port());
    raw.send(
        "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
        "a\r\n0123456789\r\na\r\n0123456789\r\n0\r\n\r\n");
    auto resp = raw.readResponse();
    CHECK(resp.rfind("HTTP/1.1 413", 0) == 0);
    CHECK(raw.waitClosed(2s));
  }
}

TEST_CASE("server: Expect: 100-continue gets an interim response") {
  IoThreads loop;
  Server server(loop.io, localOptions("continue"));
  server.handle("/echo", [](const Request& r) { return text(200, r.body); });
  server.start();
  RawSocket raw(server.port());
  raw.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  auto interim = raw.readResponse(2s);
  CHECK(interim.rfind("HTTP/1.1 100 Continue", 0) == 0);
  raw.send("hello");
  auto resp = raw.readResponse(2s);
  CHECK(resp.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(resp.substr(resp.size() - 5) == "hello");
}

TEST_CASE("server: a slow client is closed when request_deadline passes") {
  IoThreads loop;
  auto opts = localOptions("slowloris");
  opts.request_deadline = 500ms;
  Server server(loop.io, opts);
  server.handle("/x", [](const Request&) { return text(200, "x"); });
  server.start();

  RawSocket raw(server.port());
  std::string request = rawGet("/x", "X-Slow: " + std::string(40, 'a') + "\r\n");
  auto start = SteadyClock::now();
  bool closed = false;
  for (char c : request) {
    if (!raw.send(std::string_view(&c, 1)) || raw.waitClosed(200ms)) {
      closed = true;
      break;
    }
  }
  auto elapsed = SteadyClock::now() - start;
  CHECK(closed);
  CHECK(elapsed >= 400ms);
  CHECK(elapsed < 1200ms);
  CHECK(raw.read(0ms).empty());  // closed without a response
}

TEST_CASE("server: idle keep-alive connections close after idle_timeout") {
  IoThreads loop;
  auto opts = localOptions("idle");
  opts.idle_timeout = 300ms;
  Server server(loop.io, opts);
  server.handle("/x", [](const Request&) { return text(200, "x"); });
  server.start();

  RawSocket raw(server.port());
  raw.send(rawGet("/x"));
  auto resp = raw.readResponse();
  REQUIRE(resp.rfind("HTTP/1.1 200", 0) == 0);
  auto start = SteadyClock::now();
  CHECK(raw.waitClosed(2s));
  auto elapsed = SteadyClock::now() - start;
  CHECK(elapsed >= 200ms);
  CHECK(elapsed < 1000ms);
}

TEST_CASE("server: malformed HTTP is 400 and the connection closes") {
  IoThreads loop;
  Server server(loop.io, localOptions("malformed"));
  server.handle("/x", [](const Request&) { return text(200, "x"); });
  server.start();

  SECTION("garbage request line") {
    RawSocket raw(server.port());
    raw.send("this is not http\r\n\r\n");
    auto resp = raw.readResponse();
    CHECK(resp.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(raw.waitClosed(2s));
  }
  SECTION("bad header line") {
    RawSocket raw(server.port());
    raw.send("GET /x HTTP/1.1\r\nno colon here\r\n\r\n");
    auto resp = raw.readResponse();
    CHECK(resp.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(raw.waitClosed(2s));
  }
}

TEST_CASE("server: Connection: close is honoured") {
  IoThreads loop;
  Server server(loop.io, localOptions("connclose"));
  server.handle("/x", [](const Request&) { return text(200, "x"); });
  server.start();
  RawSocket raw(server.port());
  raw.send(rawGet("/x", "Connection: close\r\n"));
  auto resp = raw.readResponse();
  CHECK(resp.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(resp.find("Connection: close") != std::string::npos);
  CHECK(raw.waitClosed(2s));
}

TEST_CASE("server: HEAD gets headers and no body") {
  IoThreads loop;
  Server server(loop.io, localOptions("head"));
  server.handle("/x", [](const Request&) { return text(200, "twelve bytes"); });
  server.start();
  RawSocket raw(server.port());
  raw.send("HEAD /x HTTP/1.1\r\nHost: t\r\n\r\n");
  auto resp = raw.read(2s, "\r\n\r\n");
  CHECK(resp.find("Content-Length: 12") != std::string::npos);
  // The connection stays usable: no stray body bytes precede the next response.
  raw.send(rawGet("/x"));
  auto rest = raw.read(1s, "twelve bytes");
  CHECK(rest.substr(rest.find("\r\n\r\n") + 4, 4) == "HTTP");
}

TEST_CASE("server: connections beyond max_connections are refused") {
  IoThreads loop;
  auto opts = localOptions("maxconn");
  opts.max_connections = 1;
  Server server(loop.io, opts);
  server.handle("/x", [](const Request&) { return text(200, "x"); });
  server.start();

  auto first = std::make_unique<RawSocket>(server.port());
  first->send(rawGet("/x"));
  REQUIRE(first->readResponse().rfind("HTTP/1.1 200", 0) == 0);

  RawSocket second(server.port());
  CHECK(second.waitClosed(2s));
  CHECK(second.read(0ms).empty());

  first.reset();
  REQUIRE(eventually([&] { return server.activeConnections() == 0; }));
  Client client(loop.io, {});
  auto r = client.sendSync(get(server.port(), "/x"));
  REQUIRE(r);
  CHECK(r->status == 200);
}

TEST_CASE("server: async handlers answer from another thread") {
  IoThreads loop;
  Server server(loop.io, localOptions("async"));
  std::vector<std::thread> workers;
  std::mutex mu;
  server.handleAsync("/async", [&](Request req, std::function<void(Response)> done) {
    std::lock_guard lock(mu);
    workers.emplace_back([req = std::move(req), done = std::move(done)] {
      std::this_thread::sleep_for(20ms);
      done(text(201, "async " + req.method));
    });
  });
  server.start();
  Client client(loop.io, {});
  auto r = client.sendSync(get(server.port(), "/async"));
  REQUIRE(r);
  CHECK(r->status == 201);
  CHECK(r->body == "async GET");
  std::lock_guard lock(mu);
  for (auto& t : workers)
    t.join();
}

TEST_CASE("server: an async handler that overruns the deadline gets a 503") {
  IoThreads loop;
  auto opts = localOptions("asyncdeadline");
  opts.request_deadline = 300ms;
  Server server(loop.io, opts);
  std::mutex mu;
  std::vector<std::function<void(Response)>> pending;
  server.handleAsync("/never", [&](Request, std::function<void(Response)> done) {
    std::lock_guard lock(mu);
    pending.push_back(std::move(done));
  });
  server.start();
  Client client(loop.io, {});
  auto start = SteadyClock::now();
  auto r = client.sendSync(get(server.port(), "/never"));
  auto elapsed = SteadyClock::now() - start;
  REQUIRE(r);
  CHECK(r->status == 503);
  CHECK(elapsed >= 250ms);
  CHECK(elapsed < 2s);
  // The late answer is dropped, not written to a connection that has moved on.
  std::lock_guard lock(mu);
  REQUIRE(pending.size() == 1);
  pending.front()(text(200, "too late"));
  pending.clear();
}

TEST_CASE("server: stop() closes idle connections and lets in-flight requests finish") {
  IoThreads loop;
  Server server(loop.io, localOptions("stop"));
  std::atomic<bool> handler_started{false};
  server.handleAsync("/slow", [&](Request, std::function<void(Response)> done) {
    handler_started = true;
    auto timer = std::make_shared<boost::asio::steady_timer>(loop.io, 300ms);
    timer->async_wait([timer, done](boost::system::error_code) { done(text(200, "slow")); });
  });
  server.handle("/x", [](const Request&) { return text(200, "x"); });
  server.start();
  auto port = server.port();

  RawSocket idle(port);
  idle.send(rawGet("/x"));
  REQUIRE(idle.readResponse().rfind("HTTP/1.1 200", 0) == 0);

  Client client(loop.io, {});
  std::promise<koord::Result<Response>> promise;
  client.send(get(port, "/slow"), [&](koord::Result<Response> r) { promise.set_value(r); });
  REQUIRE(eventually([&] { return handler_started.load(); }));

  server.stop();
  CHECK(idle.waitClosed(1s));
  auto r = promise.get_future().get();
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->header("connection") == "close");
  CHECK(eventually([&] {
    try {
      RawSocket probe(port);
      return false;
    } catch (const std::runtime_error&) {
      return true;
    }
  }));
}

TEST_CASE("server: request metrics use the registered path or 'other'") {
  IoThreads loop;
  Server server(loop.io, localOptions("metrics-test"));
  server.handle("/m", [](const Request&) { return text(200, "m"); });
  server.start();
  Client client(loop.io, {});
  REQUIRE(client.sendSync(get(server.port(), "/m")));
  REQUIRE(client.sendSync(get(server.port(), "/m?x=1")));
  REQUIRE(client.sendSync(get(server.port(), "/unregistered/a")));
  REQUIRE(client.sendSync(get(server.port(), "/unregistered/b")));

  auto& registry = koord::metrics::Registry::global();
  auto& requests =
      registry.counter("koord_http_server_requests_total", "", {"server", "path", "code"});
  auto& durations =
      registry.histogram("koord_http_server_request_duration_seconds", "", {"server", "path"});
  // Recorded when the write completes, which may be just after the client has the response.
  CHECK(eventually([&] { return requests.with({"metrics-test", "/m", "200"}).value() == 2; }));
  CHECK(eventually([&] { return requests.with({"metrics-test", "other", "404"}).value() == 2; }));
  CHECK(durations.with({"metrics-test", "/m"}).snapshot().count == 2);
  auto text = registry.render();
  CHECK(text.find("path=\"/unregistered/a\"") == std::string::npos);
}

TEST_CASE("server: start() fails with the address in the message") {
  IoThreads loop;
  Server first(loop.io, localOptions("first"));
  first.start();
  auto opts = localOptions("second");
  opts.address = "127.0.0.1:" + std::to_string(first.port());
  Server second(loop.io, opts);
  CHECK_THROWS_WITH(second.start(), Catch::Contains(opts.address));

  auto bad = localOptions("bad");
  bad.address = "127.0.0.1";
  Server third(loop.io, bad);
  CHECK_THROWS_AS(third.start(), std::runtime_error);
}

TEST_CASE("server: handlers cannot be added after start") {
  IoThreads loop;
  Server server(loop.io, localOptions("late"));
  server.handle("/a", [](const Request&) { return text(200, "a"); });
  CHECK_THROWS_AS(server.handle("/a", [](const Request&) { return text(200, "a"); }),
                  std::logic_error);
  server.start();
  CHECK_THROWS_AS(server.handle("/b", [](const Request&) { return text(200, "b"); }),
                  std::logic_error);
}

TEST_CASE("server: ':port' listens on all interfaces") {
  IoThreads loop;
  auto opts = localOptions("anyaddr");
  opts.address = ":0";
  Server server(loop.io, opts);
  server.handle("/remote", [](const Request& r) { return text(200, r.remote); });
  server.start();
  REQUIRE(server.port() != 0);
  Client client(loop.io, {});
  auto r = client.sendSync(get(server.port(), "/remote"));
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body.find("127.0.0.1:") != std::string::npos);
}

TEST_CASE("server: request targets are split into a decoded path and a raw query") {
  IoThreads loop;
  Server server(loop.io, localOptions("targets"));
  server.handle("/a b", [](const Request& r) { return text(200, r.path + "|" + r.query); });
  server.handle("//double", [](const Request& r) { return text(200, r.target); });
  server.start();
  RawSocket raw(server.port());
  raw.send(rawGet("/a%20b?x=%2F&y"));
  auto decoded = raw.readResponse();
  CHECK(decoded.substr(decoded.size() - 12) == "/a b|x=%2F&y");
  raw.send(rawGet("//double"));
  auto dbl = raw.readResponse();
  CHECK(dbl.rfind("HTTP/1.1 200", 0) == 0);
  raw.send(rawGet("http://example.com/a%20b"));
  auto absolute = raw.readResponse();
  CHECK(absolute.rfind("HTTP/1.1 200", 0) == 0);
}

TEST_CASE("server: bodies past max_body_bytes_in_flight get 503 without being read") {
  IoThreads loop;
  auto opts = localOptions("inflight");
  opts.body_limit = 1000;
  opts.max_body_bytes_in_flight = 1500;
  opts.request_deadline = 5s;
  Server server(loop.io, opts);
  std::mutex mu;
  std::vector<std::function<void(Response)>> pending;
  server.handleAsync("/hold", [&](Request req, std::function<void(Response)> done) {
    std::lock_guard lock(mu);
    pending.push_back([done = std::move(done), n = req.body.size()](Response) {
      done(text(200, std::to_string(n)));
    });
  });
  server.start();
  auto held = [&] {
    std::lock_guard lock(mu);
    return pending.size();
  };
  auto post = [](std::size_t length, std::string_view body) {
    return "POST /hold HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(length) +
           "\r\n\r\n" + std::string(body);
  };

  RawSocket first(server.port());
  first.send(post(1000, std::string(1000, 'a')));
  REQUIRE(eventually([&] { return held() == 1; }));
  CHECK(server.bodyBytesInFlight() == 1000);

  // Refused on its headers alone: the body is never sent, and the answer comes anyway.
  RawSocket second(server.port());
  second.send(post(1000, ""));
  auto busy = second.readResponse(2s);
  CHECK(busy.rfind("HTTP/1.1 503", 0) == 0);
  CHECK(busy.find("Retry-After: 1\r\n") != std::string::npos);
  CHECK(second.waitClosed(2s));

  // A chunked body is counted as it arrives.
  RawSocket chunked(server.port());
  chunked.send(
      "POST /hold HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "258\r\n" +
      std::string(600, 'c') + "\r\n");
  CHECK(chunked.readResponse(2s).rfind("HTTP/1.1 503", 0) == 0);

  // What fits beside the first still goes through.
  RawSocket small(server.port());
  small.send(post(400, std::string(400, 's')));
  REQUIRE(eventually([&] { return held() == 2; }));
  CHECK(server.bodyBytesInFlight() == 1400);

  {
    std::lock_guard lock(mu);
    for (auto& answer : pending)
      answer(Response{});
    pending.clear();
  }
  CHECK(first.readResponse().find("\r\n\r\n1000") != std::string::npos);
  CHECK(small.readResponse().find("\r\n\r\n400") != std::string::npos);
  // Given back once answered, so a body as large as the first is taken again.
  CHECK(eventually([&] { return server.bodyBytesInFlight() == 0; }));
  RawSocket again(server.port());
  again.send(post(1000, std::string(1000, 'b')));
  REQUIRE(eventually([&] { return held() == 1; }));
  std::lock_guard lock(mu);
  pending.front()(Response{});
  pending.clear();
  CHECK(again.readResponse().find("\r\n\r\n1000") != std::string::npos);
}

TEST_CASE("server: start() refuses max_body_bytes_in_flight below body_limit") {
  IoThreads loop;
  auto opts = localOptions("inflight-bad");
  opts.body_limit = 1000;
  opts.max_body_bytes_in_flight = 999;
  Server server(loop.io, opts);
  CHECK_THROWS_WITH(server.start(), Catch::Contains("max_body_bytes_in_flight"));
}
