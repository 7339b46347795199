#include "admission_workers.h"

#include <algorithm>

#include "koord/core/log.h"

namespace koord::roles::manager {

AdmissionWorkers::AdmissionWorkers(std::size_t threads, std::size_t queue_limit)
    : queue_limit_(queue_limit) {
  threads = std::max<std::size_t>(threads, 1);
  threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i)
    threads_.emplace_back([this] { run(); });
}

AdmissionWorkers::~AdmissionWorkers() {
  stop();
}

bool AdmissionWorkers::post(std::function<void()>& task) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || queue_.size() >= queue_limit_)
      return false;
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

void AdmissionWorkers::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable())
      t.join();
  }
}

void AdmissionWorkers::run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty())
        return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      task();
    } catch (const std::exception& e) {
      // The admission handlers answer their own errors; anything reaching here is a bug, and
      // the request still gets the server's deadline answer.
      KOORD_LOG_ERROR("webhook worker: task threw: {}", e.what());
    } catch (...) {
      KOORD_LOG_ERROR("webhook worker: task threw a non-exception");
    }
  }
}

}  // namespace koord::roles::manager
