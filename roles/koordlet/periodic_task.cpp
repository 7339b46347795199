#include "periodic_task.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <exception>

#include "koord/core/log.h"

namespace koord::roles::koordlet {

struct PeriodicTask::State : std::enable_shared_from_this<State> {
  State(boost::asio::io_context& io, std::string n, std::chrono::milliseconds i,
        std::function<void()> f)
      : timer(io), name(std::move(n)), interval(i), fn(std::move(f)) {}
  boost::asio::steady_timer timer;
  std::string name;
  std::chrono::milliseconds interval;
  std::function<void()> fn;
  std::atomic<bool> stopped{false};

  void arm(std::chrono::milliseconds after) {
    timer.expires_after(after);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec || self->stopped)
        return;
      try {
        self->fn();
      } catch (const std::exception& e) {
        // A bug in one round must not end the loop (or the process): say so and go on.
        KOORD_LOG_ERROR("{}: round failed: {}", self->name, e.what());
      }
      if (!self->stopped)
        self->arm(self->interval);
    });
  }
};

PeriodicTask::PeriodicTask(boost::asio::io_context& io, std::string name,
                           std::chrono::milliseconds interval, std::function<void()> fn)
    : state_(std::make_shared<State>(io, std::move(name), interval, std::move(fn))) {}

PeriodicTask::~PeriodicTask() {
  stop();
}

void PeriodicTask::start(std::chrono::milliseconds first_delay) {
  boost::asio::post(state_->timer.get_executor(),
                    [s = state_, first_delay] { s->arm(first_delay); });
}

void PeriodicTask::stop() {
  if (state_->stopped.exchange(true))
    return;
  boost::asio::post(state_->timer.get_executor(), [s = state_] { s->timer.cancel(); });
}

}  // namespace koord::roles::koordlet
