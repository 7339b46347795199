#include "metricsadvisor/collectors/cpi/cpi_collector_spec.h"

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "koordlet_options.h"
#include "metricsadvisor/collectors/cpi/cpi_collector.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::metricsadvisor {

namespace {

CPICollectorConfig configOf(const CollectorContext& context) {
  return {.sys_root = context.options.sys_root_dir,
          .cgroup_root = context.cgroups.root(),
          .node_name = context.options.node_name,
          .window = context.options.collect_cpi_timewindow,
          .max_fds = defaultCPIFdBudget()};
}

// The window is a sleep of seconds: on the io thread it would stall every other loop, so each
// round is handed to a worker that the collector starts on its first round and joins when it goes.
class CPILoop final : public Collector {
 public:
  explicit CPILoop(const CollectorContext& context)
      : core_(configOf(context), systemPerfEventApi(), context.cache, context.metrics) {}

  ~CPILoop() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (worker_.joinable())
      worker_.join();
  }
  CPILoop(const CPILoop&) = delete;
  CPILoop& operator=(const CPILoop&) = delete;

  void collect(const StatesSnapshot& states, std::chrono::system_clock::time_point now,
               std::chrono::steady_clock::time_point) override {
    if (!states.synced || states.pods == nullptr || core_.unavailable())
      return;
    std::lock_guard lock(mu_);
    if (busy_) {
      KOORD_VLOG(4, "cpi collector: the last window is still open; this round is skipped");
      return;
    }
    busy_ = true;
    job_ = Job{states.pods, now};
    if (!worker_.joinable())
      worker_ = std::thread([this] { loop(); });
    wake_.notify_all();
  }

 private:
  struct Job {
    std::shared_ptr<const std::vector<PodMeta>> pods;
    std::chrono::system_clock::time_point now;
  };

  bool waitWindow(std::chrono::milliseconds window) {
    std::unique_lock lock(mu_);
    return !wake_.wait_for(lock, window, [this] { return stopping_; });
  }

  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || job_.has_value(); });
      if (stopping_)
        return;
      Job job = std::move(*job_);
      job_.reset();
      lock.unlock();
      try {
        core_.round(*job.pods, job.now, [this](auto window) { return waitWindow(window); });
      } catch (const std::exception& e) {
        // As PeriodicTask does for a round on the io thread: say so, and go on.
        KOORD_LOG_ERROR("cpi collector: round failed: {}", e.what());
      }
      lock.lock();
      busy_ = false;
    }
  }

  CPICollector core_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::optional<Job> job_;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace

CollectorSpec cpiCollector() {
  return {.name = "cpi collector",
          .gate = "CPICollector",
          .interval = [](const KoordletOptions& o) { return o.cpi_collector_interval; },
          .make = makeCollector<CPILoop>};
}

}  // namespace koord::roles::koordlet::metricsadvisor
