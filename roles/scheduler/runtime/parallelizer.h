// A fixed pool of worker threads for the scheduler's per-node work (Filter and Score over
// thousands of nodes): parallelFor hands out index chunks and the caller works alongside.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace koord::roles::scheduler {

class Parallelizer {
 public:
  /// `parallelism` workers at most, counting the calling thread (KubeSchedulerConfiguration's
  /// parallelism); no more than the machine's CPUs, since the work is CPU-bound.
  explicit Parallelizer(int parallelism);
  ~Parallelizer();
  Parallelizer(const Parallelizer&) = delete;
  Parallelizer& operator=(const Parallelizer&) = delete;

  /// Runs fn(i) for i in [0, n) across the pool; returns when every started call has returned.
  /// `stop`, when given, is polled between chunks: once true no new chunk starts (a filter pass
  /// that has found enough nodes). Calls from one thread at a time.
  void parallelFor(std::size_t n, const std::function<void(std::size_t)>& fn,
                   const std::atomic<bool>* stop = nullptr);

  int workers() const { return static_cast<int>(threads_.size()) + 1; }

 private:
  struct Job {
    std::size_t n = 0;
    std::size_t chunk = 1;
    const std::function<void(std::size_t)>* fn = nullptr;
    const std::atomic<bool>* stop = nullptr;
    std::atomic<std::size_t> next{0};
  };
  void workerLoop();
  static void runChunks(Job& job);

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  Job* job_ = nullptr;
  std::uint64_t job_serial_ = 0;
  int busy_ = 0;
  bool closing_ = false;
};

}  // namespace koord::roles::scheduler
