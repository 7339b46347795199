#include "runtime/parallelizer.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace koord::roles::scheduler {

namespace {

// How long a worker watches for the next job before it sleeps: longer than the gap between a
// cycle's Filter and Score passes (PreScore), short enough that a worker does not stay
// runnable through the gaps between cycles, where on a busy machine it would take turns on a
// CPU with the scheduling thread (measured: 50 us made the cycle slower there, not faster).
constexpr auto kWorkerSpin = std::chrono::microseconds(10);
// How long the caller waits for workers to finish their last chunks before it sleeps.
constexpr auto kCallerSpin = std::chrono::microseconds(50);

// True once done() holds, false when the budget ran out first. Each look yields the CPU: when
// the machine is busy a waiting thread may share a CPU with the one it waits for (a worker
// preempted inside its chunk, or the caller still publishing), and a plain spin would hold
// that thread off for a whole time slice; on an idle CPU the yield returns at once.
template <typename Done>
bool spinUntil(Done&& done, std::chrono::microseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (;;) {
    for (int k = 0; k < 16; ++k) {
      if (done())
        return true;
      std::this_thread::yield();
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return done();
  }
}

}  // namespace

Parallelizer::Parallelizer(int parallelism) {
  const int cpus = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int n = std::max(1, std::min(parallelism, cpus));
  threads_.reserve(static_cast<std::size_t>(n - 1));
  for (int i = 1; i < n; ++i)
    threads_.emplace_back([this] { workerLoop(); });
}

Parallelizer::~Parallelizer() {
  closing_.store(true);
  {
    std::lock_guard lock(mu_);
    wake_.notify_all();
  }
  for (auto& t : threads_)
    t.join();
}

void Parallelizer::runChunks(Job& job) {
  for (;;) {
    if (job.stop != nullptr && job.stop->load(std::memory_order_relaxed))
      return;
    const std::size_t begin = job.next.fetch_add(job.chunk, std::memory_order_relaxed);
    if (begin >= job.n)
      return;
    job.fn(job.ctx, begin, std::min(job.n, begin + job.chunk));
  }
}

void Parallelizer::workerLoop() {
  std::uint64_t seen = 0;
  for (;;) {
    auto fresh = [&] { return closing_.load() || serial_.load() != seen; };
    if (!spinUntil(fresh, kWorkerSpin)) {
      // Counted as a sleeper under the lock before the last look: the caller, which
      // publishes the serial before reading the count, either sees this thread asleep and
      // wakes it, or this look sees the new serial.
      std::unique_lock lock(mu_);
      sleepers_.fetch_add(1);
      wake_.wait(lock, fresh);
      sleepers_.fetch_sub(1);
    }
    if (closing_.load())
      return;
    seen = serial_.load();
    // Entering before looking at the job: the caller withdraws the job before waiting for
    // active_ to drop to 0, so either it waits for this thread or this thread finds no job.
    active_.fetch_add(1);
    Job* job = job_.load();
    if (job != nullptr && job->serial == seen)
      runChunks(*job);
    if (active_.fetch_sub(1) == 1 && caller_waiting_.load()) {
      std::lock_guard lock(mu_);
      done_.notify_all();
    }
  }
}

void Parallelizer::parallelFor(std::size_t n, const std::function<void(std::size_t)>& fn,
                               const std::atomic<bool>* stop) {
  forChunks(
      n,
      [&fn](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i)
          fn(i);
      },
      stop);
}

void Parallelizer::run(std::size_t n, ChunkFn fn, void* ctx, const std::atomic<bool>* stop) {
  if (n == 0)
    return;
  Job job;
  job.n = n;
  job.fn = fn;
  job.ctx = ctx;
  job.stop = stop;
  // Chunks of about sqrt(n) (as kube-scheduler's chunkSizeFor): few enough hand-outs to keep
  // the counter cold, small enough that an early stop wastes little.
  job.chunk = std::max<std::size_t>(1, static_cast<std::size_t>(std::sqrt(double(n))));
  if (threads_.empty() || n <= job.chunk) {
    runChunks(job);
    return;
  }
  Site& site = siteOf(fn);
  const bool parallel = site.chooseParallel();
  const auto t0 = std::chrono::steady_clock::now();
  if (parallel)
    runShared(job);
  else
    runChunks(job);
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  // Indices handed out, a pass that stopped early included (at most a chunk too many).
  const std::size_t items = std::max<std::size_t>(1, std::min(n, job.next.load()));
  site.record(parallel, std::chrono::duration<double, std::nano>(elapsed).count() /
                            static_cast<double>(items));
}

void Parallelizer::runShared(Job& job) {
  job.serial = serial_.load() + 1;  // only this (the one calling) thread moves the serial
  job_.store(&job);
  serial_.store(job.serial);
  if (sleepers_.load() > 0) {
    std::lock_guard lock(mu_);
    wake_.notify_all();
  }
  runChunks(job);
  // Withdrawn before waiting, so that no worker starts on it after this frame is gone.
  job_.store(nullptr);
  auto idle = [&] { return active_.load() == 0; };
  if (!spinUntil(idle, kCallerSpin)) {
    std::unique_lock lock(mu_);
    caller_waiting_.store(true);
    done_.wait(lock, idle);
    caller_waiting_.store(false);
  }
}

Parallelizer::Site& Parallelizer::siteOf(ChunkFn fn) {
  for (auto& s : sites_) {
    if (s.fn == fn)
      return s;
  }
  Site& s = sites_[next_site_];
  next_site_ = (next_site_ + 1) % sites_.size();
  s = Site{};
  s.fn = fn;
  return s;
}

bool Parallelizer::Site::chooseParallel() {
  ++jobs;
  // A few samples of each way first, then the faster one, with the other tried now and then
  // in case the machine changed (other processes came or went).
  if (samples[1] < kWarmup)
    return true;
  if (samples[0] < kWarmup)
    return false;
  const bool faster_parallel = ns_per_item[1] <= ns_per_item[0];
  return jobs % kExploreEvery == 0 ? !faster_parallel : faster_parallel;
}

void Parallelizer::Site::record(bool parallel, double ns) {
  double& avg = ns_per_item[parallel ? 1 : 0];
  if (samples[parallel ? 1 : 0]++ == 0) {
    avg = ns;
    return;
  }
  // One descheduled job can take milliseconds; it should not decide for the next hundred.
  avg += (std::min(ns, 4 * avg) - avg) / 8;
}

}  // namespace koord::roles::scheduler
