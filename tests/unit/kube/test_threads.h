// Threads for the kube unit tests that run koord's clients concurrently: an io_context on N
// threads, a bounded wait for a condition, and a guard that joins a test's own threads.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace koord::kube::testing {

/// An io_context run by `n` threads until the object goes.
struct IoThreads {
  explicit IoThreads(int n = 2) : work(boost::asio::make_work_guard(io)) {
    for (int i = 0; i < n; ++i)
      threads.emplace_back([this] { io.run(); });
  }
  ~IoThreads() {
    work.reset();
    io.stop();
    for (auto& t : threads)
      t.join();
  }
  IoThreads(const IoThreads&) = delete;
  IoThreads& operator=(const IoThreads&) = delete;

  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work;
  std::vector<std::thread> threads;
};

/// Polls `pred` until it holds (true) or `limit` has passed (false).
template <typename Pred>
bool waitFor(Pred pred, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

/// Joins the test's own threads however the test case ends: a REQUIRE that throws past a
/// joinable std::thread would terminate the whole executable.
struct JoinAll {
  std::atomic<bool>& stop;
  std::vector<std::thread>& threads;
  ~JoinAll() {
    stop = true;
    for (auto& t : threads) {
      if (t.joinable())
        t.join();
    }
  }
};

}  // namespace koord::kube::testing
