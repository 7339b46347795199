#include "koord/core/reactor.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>
#include <vector>

#include "koord/core/log.h"

namespace asio = boost::asio;

namespace koord {

struct Reactor::Impl {
  explicit Impl(Options o) : options(o), guard(asio::make_work_guard(ioc)), signals(ioc) {}

  Options options;
  asio::io_context ioc;
  asio::executor_work_guard<asio::io_context::executor_type> guard;
  asio::signal_set signals;
  std::vector<std::function<void()>> hooks;  // touched only on the io_context after run()
  std::mutex hooks_mu;
  std::atomic<bool> stopping{false};
  std::atomic<bool> failed{false};

  std::mutex done_mu;
  std::condition_variable done_cv;
  bool done = false;
  bool cut_off = false;
  std::thread watchdog;

  void beginShutdown(std::string_view why) {
    if (stopping.exchange(true))
      return;
    KOORD_LOG_INFO("shutting down ({}), deadline {} ms", why, options.shutdown_deadline.count());
    boost::system::error_code ignored;
    // Back to the default action: a second SIGTERM/SIGINT kills the process outright.
    signals.clear(ignored);
    signals.cancel(ignored);
    std::vector<std::function<void()>> to_run;
    {
      std::lock_guard lock(hooks_mu);
      to_run.swap(hooks);
    }
    for (auto it = to_run.rbegin(); it != to_run.rend(); ++it) {
      try {
        (*it)();
      } catch (const std::exception& e) {
        KOORD_LOG_ERROR("shutdown hook failed: {}", e.what());
      }
    }
    guard.reset();
    watchdog = std::thread([this] {
      std::unique_lock lock(done_mu);
      if (!done_cv.wait_for(lock, options.shutdown_deadline, [this] { return done; })) {
        cut_off = true;
        KOORD_LOG_WARNING("shutdown deadline passed; stopping with work still in flight");
        ioc.stop();
      }
    });
  }

  void runLoop() {
    while (true) {
      try {
        ioc.run();
        return;
      } catch (const std::exception& e) {
        // A handler let an exception escape: a koord bug. Log it once and shut down cleanly
        // rather than continuing in an unknown state.
        KOORD_LOG_ERROR("unhandled exception in event loop: {}", e.what());
        failed = true;
        asio::post(ioc, [this] { beginShutdown("unhandled exception"); });
      }
    }
  }
};

Reactor::Reactor() : Reactor(Options{}) {}
Reactor::Reactor(Options options) : impl_(std::make_unique<Impl>(options)) {}

Reactor::~Reactor() {
  if (impl_->watchdog.joinable()) {
    {
      std::lock_guard lock(impl_->done_mu);
      impl_->done = true;
    }
    impl_->done_cv.notify_all();
    impl_->watchdog.join();
  }
}

asio::io_context& Reactor::context() {
  return impl_->ioc;
}

void Reactor::onShutdown(std::function<void()> hook) {
  std::lock_guard lock(impl_->hooks_mu);
  impl_->hooks.push_back(std::move(hook));
}

bool Reactor::stopping() const {
  return impl_->stopping.load();
}

void Reactor::requestStop() {
  asio::post(impl_->ioc, [impl = impl_.get()] { impl->beginShutdown("stop requested"); });
}

int Reactor::run() {
  Impl& s = *impl_;
  if (s.options.handle_signals) {
    s.signals.add(SIGINT);
    s.signals.add(SIGTERM);
    s.signals.async_wait([&s](const boost::system::error_code& ec, int signo) {
      if (ec)
        return;  // cancelled by a shutdown that began elsewhere
      s.beginShutdown(signo == SIGINT ? "SIGINT" : "SIGTERM");
    });
  }
  std::vector<std::thread> extra;
  for (int i = 1; i < s.options.threads; ++i)
    extra.emplace_back([&s] { s.runLoop(); });
  s.runLoop();
  for (auto& t : extra)
    t.join();
  {
    std::lock_guard lock(s.done_mu);
    s.done = true;
  }
  s.done_cv.notify_all();
  if (s.watchdog.joinable())
    s.watchdog.join();
  return (s.cut_off || s.failed) ? 1 : 0;
}

}  // namespace koord
