#include "api_common.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

namespace koord::bench::scheduler_api {

void die(const std::string& msg) {
  std::cerr << "koord_bench_scheduler_api: " << msg << "\n";
  std::exit(1);
}

void say(const std::string& msg) {
  std::cerr << "koord_bench_scheduler_api: " << msg << std::endl;
}

int runWindowed(int n, int window,
                const std::function<void(int, std::function<void(std::string)>)>& issue,
                std::string* first_error) {
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0, failed = 0;
  for (int i = 0; i < n; ++i) {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return in_flight < window; });
      ++in_flight;
    }
    issue(i, [&](std::string error) {
      std::lock_guard lock(mu);
      --in_flight;
      if (!error.empty() && failed++ == 0 && first_error != nullptr)
        *first_error = std::move(error);
      cv.notify_all();
    });
  }
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return in_flight == 0; });
  return failed;
}

bool pollUntil(double seconds, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return true;
}

}  // namespace koord::bench::scheduler_api
