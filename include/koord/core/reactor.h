// The process's event loop: one io_context run by a small thread pool, SIGINT/SIGTERM handling
// and graceful shutdown with a deadline. Every role runs on exactly one Reactor.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

namespace boost::asio {
class io_context;
}

namespace koord {

class Reactor {
 public:
  struct Options {
    int threads = 1;
    /// After a stop is requested, handlers get this long to finish before the loop is cut off.
    std::chrono::milliseconds shutdown_deadline{10000};
    bool handle_signals = true;
  };

  Reactor();
  explicit Reactor(Options options);
  ~Reactor();
  Reactor(const Reactor&) = delete;
  Reactor& operator=(const Reactor&) = delete;

  boost::asio::io_context& context();

  /// Called once, on the io_context, when shutdown begins (signal or requestStop). Hooks close
  /// acceptors, cancel timers and finish in-flight work; they run in reverse registration order.
  void onShutdown(std::function<void()> hook);

  /// Runs the loop on `threads` threads (the caller's included) until shutdown completes.
  /// Returns 0 for a clean drain, 1 if the deadline cut in-flight work off.
  int run();

  /// Thread-safe; begins graceful shutdown as a signal would.
  void requestStop();

  /// True once shutdown has begun.
  bool stopping() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace koord
