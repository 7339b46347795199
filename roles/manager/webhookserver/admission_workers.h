// The threads admission reviews run on. They are kept off the HTTP server's io threads so that
// a slow review neither stalls other connections nor keeps the server from answering at its
// deadline, and their queue is bounded so that a stuck handler cannot pile up requests.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace koord::roles::manager {

class AdmissionWorkers {
 public:
  /// Starts `threads` threads (at least one); at most `queue_limit` tasks wait for them.
  AdmissionWorkers(std::size_t threads, std::size_t queue_limit);
  /// stop(). Must not be the last owner on one of its own threads.
  ~AdmissionWorkers();
  AdmissionWorkers(const AdmissionWorkers&) = delete;
  AdmissionWorkers& operator=(const AdmissionWorkers&) = delete;

  /// False, with `task` not taken, when the queue is full or stop() has begun: the caller
  /// answers for the task itself.
  bool post(std::function<void()>& task);
  /// Runs what is queued, then joins the threads. Idempotent; not from a worker thread.
  void stop();

 private:
  void run();

  const std::size_t queue_limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace koord::roles::manager
