#include "koord/core/reactor.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <thread>

using namespace std::chrono_literals;

TEST_CASE("requestStop runs hooks in reverse order and drains", "[core][reactor]") {
  koord::Reactor reactor({.threads = 2, .shutdown_deadline = 5000ms, .handle_signals = false});
  std::vector<int> order;
  std::atomic<int> ran{0};
  reactor.onShutdown([&] { order.push_back(1); });
  reactor.onShutdown([&] { order.push_back(2); });
  for (int i = 0; i < 100; ++i)
    boost::asio::post(reactor.context(), [&] { ++ran; });
  boost::asio::post(reactor.context(), [&] { reactor.requestStop(); });
  CHECK(reactor.run() == 0);
  CHECK(ran == 100);
  CHECK(order == std::vector<int>{2, 1});
  CHECK(reactor.stopping());
}

TEST_CASE("in-flight work past the deadline is cut off", "[core][reactor]") {
  koord::Reactor reactor({.threads = 1, .shutdown_deadline = 200ms, .handle_signals = false});
  boost::asio::steady_timer timer(reactor.context(), 30s);  // never cancelled by a hook
  timer.async_wait([](const boost::system::error_code&) {});
  reactor.requestStop();
  auto start = std::chrono::steady_clock::now();
  CHECK(reactor.run() == 1);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("SIGTERM begins graceful shutdown", "[core][reactor]") {
  koord::Reactor reactor({.threads = 1, .shutdown_deadline = 5000ms, .handle_signals = true});
  bool hook_ran = false;
  reactor.onShutdown([&] { hook_ran = true; });
  boost::asio::post(reactor.context(), [] { ::kill(::getpid(), SIGTERM); });
  CHECK(reactor.run() == 0);
  CHECK(hook_ran);
}

TEST_CASE("an exception escaping a handler shuts the loop down with an error", "[core][reactor]") {
  koord::Reactor reactor({.threads = 1, .shutdown_deadline = 1000ms, .handle_signals = false});
  boost::asio::post(reactor.context(), [] { throw std::runtime_error("boom"); });
  CHECK(reactor.run() == 1);
}
