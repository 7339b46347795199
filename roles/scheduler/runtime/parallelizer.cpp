#include "runtime/parallelizer.h"

#include <algorithm>
#include <cmath>

namespace koord::roles::scheduler {

Parallelizer::Parallelizer(int parallelism) {
  const int cpus = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int n = std::max(1, std::min(parallelism, cpus));
  threads_.reserve(static_cast<std::size_t>(n - 1));
  for (int i = 1; i < n; ++i)
    threads_.emplace_back([this] { workerLoop(); });
}

Parallelizer::~Parallelizer() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  wake_.notify_all();
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
    const std::size_t end = std::min(job.n, begin + job.chunk);
    for (std::size_t i = begin; i < end; ++i)
      (*job.fn)(i);
  }
}

void Parallelizer::workerLoop() {
  std::uint64_t seen = 0;
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return closing_ || (job_ != nullptr && job_serial_ != seen); });
    if (closing_)
      return;
    seen = job_serial_;
    Job* job = job_;
    ++busy_;
    lock.unlock();
    runChunks(*job);
    lock.lock();
    if (--busy_ == 0)
      done_.notify_all();
  }
}

void Parallelizer::parallelFor(std::size_t n, const std::function<void(std::size_t)>& fn,
                               const std::atomic<bool>* stop) {
  if (n == 0)
    return;
  Job job;
  job.n = n;
  job.fn = &fn;
  job.stop = stop;
  // Chunks of about sqrt(n) (as kube-scheduler's chunkSizeFor): few enough hand-outs to keep
  // the counter cold, small enough that an early stop wastes little.
  job.chunk = std::max<std::size_t>(1, static_cast<std::size_t>(std::sqrt(double(n))));
  if (threads_.empty() || n <= job.chunk) {
    runChunks(job);
    return;
  }
  {
    std::lock_guard lock(mu_);
    job_ = &job;
    ++job_serial_;
  }
  wake_.notify_all();
  runChunks(job);
  std::unique_lock lock(mu_);
  // Workers that have not picked the job up yet would find it finished; withdraw it first so
  // none starts on it after this frame is gone.
  job_ = nullptr;
  done_.wait(lock, [&] { return busy_ == 0; });
}

}  // namespace koord::roles::scheduler
