// Runs a function on the io_context every `interval` (fixed delay after each run) until stopped:
// the koordlet's collectors, QoS strategies and reconcilers are all such loops.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace boost::asio {
class io_context;
}

namespace koord::roles::koordlet {

class PeriodicTask {
 public:
  PeriodicTask(boost::asio::io_context& io, std::string name, std::chrono::milliseconds interval,
               std::function<void()> fn);
  ~PeriodicTask();
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  /// The first run comes after `first_delay` (zero: as soon as the io_context runs it).
  void start(std::chrono::milliseconds first_delay = std::chrono::milliseconds(0));
  /// No run starts after stop() returns on the io thread; from another thread one in flight
  /// may still finish.
  void stop();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace koord::roles::koordlet
