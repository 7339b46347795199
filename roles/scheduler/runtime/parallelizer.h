// A fixed pool of worker threads for the scheduler's per-node work (Filter and Score over
// thousands of nodes): parallelFor hands out index chunks and the caller works alongside.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
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

  /// As parallelFor, but fn(begin, end) gets a whole chunk of indices: no indirect call per
  /// index, and the chunk can keep its results locally until its end.
  template <typename Fn>
  void forChunks(std::size_t n, Fn&& fn, const std::atomic<bool>* stop = nullptr) {
    using F = std::remove_reference_t<Fn>;
    run(
        n, [](void* f, std::size_t begin, std::size_t end) { (*static_cast<F*>(f))(begin, end); },
        const_cast<void*>(static_cast<const void*>(&fn)), stop);
  }

  int workers() const { return static_cast<int>(threads_.size()) + 1; }

 private:
  using ChunkFn = void (*)(void*, std::size_t, std::size_t);
  struct Job {
    std::uint64_t serial = 0;
    std::size_t n = 0;
    std::size_t chunk = 1;
    ChunkFn fn = nullptr;
    void* ctx = nullptr;
    const std::atomic<bool>* stop = nullptr;
    std::atomic<std::size_t> next{0};
  };
  /// Whether sharing a kind of job (one call site: one ChunkFn) with the workers pays. On a
  /// machine whose other CPUs are busy a worker arrives late or shares the caller's CPU, and a
  /// pass of tens of microseconds runs faster on the caller alone; measured per site, wall time
  /// per index, each way, and the faster way taken.
  struct Site {
    static constexpr std::uint32_t kWarmup = 4;
    static constexpr std::uint32_t kExploreEvery = 64;
    ChunkFn fn = nullptr;
    std::uint32_t jobs = 0;
    std::uint32_t samples[2] = {0, 0};  // [0] alone, [1] shared
    double ns_per_item[2] = {0, 0};
    bool chooseParallel();
    void record(bool parallel, double ns);
  };
  void run(std::size_t n, ChunkFn fn, void* ctx, const std::atomic<bool>* stop);
  void runShared(Job& job);
  Site& siteOf(ChunkFn fn);
  void workerLoop();
  static void runChunks(Job& job);

  std::vector<std::thread> threads_;
  std::array<Site, 8> sites_{};  // touched by the calling thread only
  std::size_t next_site_ = 0;
  // A cycle runs two passes (Filter, Score) a few microseconds apart, each worth tens of
  // microseconds: waking a sleeping thread costs as much. Workers therefore spin briefly for
  // the next job before sleeping, and the caller spins for the last chunks before sleeping.
  std::atomic<Job*> job_{nullptr};
  std::atomic<std::uint64_t> serial_{0};
  std::atomic<int> active_{0};    // workers inside a job
  std::atomic<int> sleepers_{0};  // workers blocked on wake_
  std::atomic<bool> caller_waiting_{false};
  std::atomic<bool> closing_{false};
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
};

}  // namespace koord::roles::scheduler
