#include "metricsadvisor/collectors/cpi/cpi_collector.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>

#include "koord/cgroup/cpu_topology.h"
#include "koord/cgroup/kubepods_path.h"
#include "koord/core/log.h"
#include "metricsadvisor/collectors/cpi/cgroup_cpi_counters.h"
#include "metricsadvisor/resource_collector.h"

namespace koord::roles::koordlet::metricsadvisor {

namespace {

namespace fs = std::filesystem;
namespace mc = metriccache;

// The online list is one short line; anything longer is not a sysfs cpu list.
constexpr std::size_t kMaxOnlineFileBytes = 4096;
// A bound on the scan for a PMU's sysfs entry: a host registers a handful of PMUs.
constexpr std::size_t kMaxPmuEntries = 1024;

std::string errnoText(int err) {
  return boost::system::error_code(err, boost::system::system_category()).message();
}

Expected<std::vector<int>> onlineCpus(const fs::path& sys_root) {
  const fs::path path = sys_root / "devices/system/cpu/online";
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return invalidArgument(fmt::format("{}: cannot open", path.string()));
  std::string text(kMaxOnlineFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxOnlineFileBytes)
    return invalidArgument(
        fmt::format("{}: longer than {} bytes", path.string(), kMaxOnlineFileBytes));
  auto cpus = cgroup::parseCpuList(text);
  if (!cpus)
    return invalidArgument(fmt::format("{}: {}", path.string(), cpus.error().message));
  if (cpus->empty())
    return invalidArgument(fmt::format("{}: no CPU online", path.string()));
  return cpus;
}

bool cpuPmuRegistered(const fs::path& sys_root) {
  std::error_code ec;
  fs::directory_iterator it(sys_root / "bus/event_source/devices", ec), end;
  for (std::size_t n = 0; !ec && it != end && n < kMaxPmuEntries; it.increment(ec), ++n) {
    const std::string name = it->path().filename().string();
    if (name == "cpu" || name == "cpu_core" || name == "cpu_atom" || name.starts_with("armv"))
      return true;
  }
  return false;
}

bool perfCgroupMounted(const fs::path& perf_root) {
  std::error_code ec;
  return fs::exists(perf_root / "cgroup.procs", ec);
}

// Errors of perf_event_open that hold for every cgroup on this host: no such hardware event, no
// perf events, or no permission for CPU-wide counting. One container's failure says it for all.
bool hostWide(int err) {
  return err == ENOENT || err == EOPNOTSUPP || err == ENOSYS || err == EACCES || err == EPERM;
}

class DirFd {
 public:
  explicit DirFd(const fs::path& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}
  ~DirFd() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  DirFd(const DirFd&) = delete;
  DirFd& operator=(const DirFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::size_t defaultCPIFdBudget() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return kMaxCPIFds;
  return std::min<std::size_t>(kMaxCPIFds, static_cast<std::size_t>(limit.rlim_cur / 2));
}

fs::path perfEventCgroupRoot(const cgroup::CgroupRoot& root) {
  return root.version == cgroup::CgroupVersion::kV2 ? root.root : root.root / "perf_event";
}

std::string cpiMissingInterface(const fs::path& sys_root, const cgroup::CgroupRoot& root) {
  if (!cpuPmuRegistered(sys_root))
    return (sys_root / "bus/event_source/devices/cpu").string();
  const fs::path perf_root = perfEventCgroupRoot(root);
  if (!perfCgroupMounted(perf_root))
    return perf_root.string();
  return {};
}

CPICollector::CPICollector(CPICollectorConfig config, PerfEventApi& api, mc::MetricCache& cache,
                           metrics::Registry& registry)
    : config_(std::move(config)),
      perf_root_(perfEventCgroupRoot(config_.cgroup_root)),
      api_(api),
      cache_(cache),
      gauges_(registry, config_.node_name) {}

std::vector<std::string> CPICollector::missingOnHost() {
  std::vector<std::string> missing;
  if (const int rc = api_.probe(); rc < 0) {
    std::string why =
        fmt::format("no hardware counters (perf_event_open of cpu cycles: {})", errnoText(-rc));
    if (!cpuPmuRegistered(config_.sys_root))
      why += fmt::format(", {} is missing",
                         (config_.sys_root / "bus/event_source/devices/cpu").string());
    missing.push_back(std::move(why));
  }
  if (!perfCgroupMounted(perf_root_)) {
    std::error_code ec;
    const fs::path absent = fs::exists(perf_root_, ec) ? perf_root_ / "cgroup.procs" : perf_root_;
    missing.push_back(
        fmt::format("the perf_event cgroup is not mounted ({} is missing)", absent.string()));
  }
  return missing;
}

void CPICollector::markUnavailable(const std::string& why) {
  unavailable_.store(true, std::memory_order_relaxed);
  KOORD_LOG_WARNING("cpi collector: container CPI is not collected: {}", why);
  gauges_.update({});
}

void CPICollector::logOnce(const std::string& key, const std::string& message) {
  auto& last = errors_[key];
  if (last != message) {
    KOORD_LOG_WARNING("cpi collector: {}", message);
    last = message;
  }
}

void CPICollector::forget(const std::unordered_set<std::string>& listed) {
  for (auto it = cached_.begin(); it != cached_.end();) {
    if (listed.contains(*it)) {
      ++it;
      continue;
    }
    cache_.removeSeries(mc::MetricKind::kContainerCPICycles, *it);
    cache_.removeSeries(mc::MetricKind::kContainerCPIInstructions, *it);
    it = cached_.erase(it);
  }
  std::erase_if(errors_,
                [&](const auto& e) { return !e.first.empty() && !listed.contains(e.first); });
}

std::optional<std::vector<CPICollector::Opened>> CPICollector::openAll(
    const std::vector<Target>& targets, std::span<const int> cpus, CPIRoundReport& report) {
  std::vector<Opened> opened;
  const std::size_t per_container = 2 * cpus.size();
  const std::size_t n = targets.size();
  const std::size_t start = n == 0 ? 0 : offset_ % n;
  const auto driver = config_.cgroup_root.driver;
  std::size_t i = 0;
  std::string cut;
  for (; i < n; ++i) {
    const Target& t = targets[(start + i) % n];
    const std::string key = t.pod->key() + "/" + t.container->name;
    // The container's directory fd is held while its counters are opened.
    if (report.fds + per_container + 1 > config_.max_fds) {
      cut = fmt::format("{} CPUs x 2 counters per container pass the bound of {} perf fds",
                        cpus.size(), config_.max_fds);
      break;
    }
    auto pod_dir = podCgroupDir(driver, *t.pod);
    auto dir = pod_dir
                   ? cgroup::containerDir(driver, *pod_dir, t.container->runtime, t.container->id)
                   : kube::Expected<std::string>(pod_dir.error());
    if (!dir) {
      ++report.errors;
      logOnce(t.container->id, fmt::format("{}: {}", key, dir.error().message));
      continue;
    }
    const fs::path path = perf_root_ / *dir;
    DirFd cgroup_fd(path);
    if (cgroup_fd.get() < 0) {
      const int err = errno;
      ++report.errors;
      // A container not made yet or already gone is not worth a warning.
      if (t.pod->isRunning())
        logOnce(t.container->id, fmt::format("{}: {}: {}", key, path.string(), errnoText(err)));
      continue;
    }
    auto counters = CgroupCPICounters::open(api_, cgroup_fd.get(), cpus);
    if (!counters) {
      const auto& code = counters.error().code;
      const int err = code.category() == boost::system::system_category() ? code.value() : 0;
      if (hostWide(err)) {
        // What is open closes with `opened`; nothing of this round is published.
        markUnavailable(fmt::format("{} ({})", counters.error().message, key));
        return std::nullopt;
      }
      if (err == EMFILE || err == ENFILE) {
        cut = fmt::format("the process is out of fds ({})", counters.error().message);
        break;
      }
      ++report.errors;
      logOnce(t.container->id, fmt::format("{}: {}", key, counters.error().message));
      continue;
    }
    report.fds += counters->fds();
    opened.push_back({t, std::move(*counters)});
  }
  if (!cut.empty()) {
    report.left_out = n - i;
    offset_ = (start + i) % n;
    const std::string message =
        fmt::format("{} of {} containers left for a later round: {}", report.left_out, n, cut);
    if (message != bound_message_)
      KOORD_LOG_WARNING("cpi collector: {}", message);
    bound_message_ = message;
  } else {
    offset_ = 0;
    if (!bound_message_.empty())
      KOORD_LOG_INFO("cpi collector: every container fits the fd bound again");
    bound_message_.clear();
  }

  return opened;
}

CPIRoundReport CPICollector::round(const std::vector<PodMeta>& pods, mc::TimePoint now,
                                   const CPIWindowWait& wait) {
  CPIRoundReport report;
  if (unavailable()) {
    report.available = false;
    return report;
  }
  if (!checked_) {
    checked_ = true;
    if (auto missing = missingOnHost(); !missing.empty()) {
      std::string why = missing.front();
      for (std::size_t i = 1; i < missing.size(); ++i)
        why += "; " + missing[i];
      markUnavailable(why);
      report.available = false;
      return report;
    }
  }

  std::vector<Target> targets;
  std::unordered_set<std::string> listed;
  for (const PodMeta& pod : pods) {
    for (const ContainerMeta& c : pod.containers) {
      if (c.id.empty())
        continue;
      targets.push_back({&pod, &c});
      listed.insert(c.id);
    }
  }
  report.containers = targets.size();
  forget(listed);

  auto cpus = onlineCpus(config_.sys_root);
  if (!cpus) {
    logOnce("", cpus.error().message);
    ++report.errors;
    gauges_.update({});
    return report;
  }
  errors_.erase("");

  auto opened = openAll(targets, *cpus, report);
  if (!opened) {
    report.available = false;
    return report;
  }

  if (!opened->empty() && !wait(config_.window)) {
    report.stopped = true;
    return report;
  }

  struct Reading {
    Target target;
    std::string container_id;  // as the pod status writes it
    CPICounts counts;
  };
  std::vector<Reading> readings;
  readings.reserve(opened->size());
  for (const Opened& o : *opened) {
    auto counts = o.counters.read();
    const ContainerMeta& c = *o.target.container;
    if (!counts) {
      ++report.errors;
      logOnce(c.id, fmt::format("{}/{}: {}", o.target.pod->key(), c.name, counts.error().message));
      continue;
    }
    errors_.erase(c.id);
    readings.push_back({o.target, c.runtime + "://" + c.id, *counts});
  }
  // Closed before anything is published: no perf fd outlives the window.
  opened->clear();
  report.measured = readings.size();

  const mc::TimePoint at = now + config_.window;
  std::vector<CPIGaugeSample> gauge_samples;
  std::vector<mc::Sample> samples;
  gauge_samples.reserve(readings.size());
  samples.reserve(2 * readings.size());
  for (const Reading& r : readings) {
    const PodMeta& pod = *r.target.pod;
    const ContainerMeta& c = *r.target.container;
    gauge_samples.push_back({r.container_id, c.name, pod.uid, pod.name, pod.namespace_, r.counts});
    samples.push_back({mc::MetricKind::kContainerCPICycles, c.id, at, r.counts.cycles});
    samples.push_back({mc::MetricKind::kContainerCPIInstructions, c.id, at, r.counts.instructions});
    cached_.insert(c.id);
  }
  gauges_.update(gauge_samples);
  if (!samples.empty()) {
    const auto summary = cache_.appendAll(samples);
    if (summary.rejected > 0)
      KOORD_VLOG(4, "cpi collector: {} samples refused by the metric cache", summary.rejected);
  }
  return report;
}

}  // namespace koord::roles::koordlet::metricsadvisor
