#include "runtime/framework_metrics.h"

#include "koord/core/metrics.h"

namespace koord::roles::scheduler {

std::string_view metricPointName(MetricPoint point) {
  switch (point) {
    case MetricPoint::kPreFilter:
      return "PreFilter";
    case MetricPoint::kFilter:
      return "Filter";
    case MetricPoint::kPostFilter:
      return "PostFilter";
    case MetricPoint::kPreScore:
      return "PreScore";
    case MetricPoint::kScore:
      return "Score";
    case MetricPoint::kScoreExtensionNormalize:
      return "ScoreExtensionNormalize";
    case MetricPoint::kReserve:
      return "Reserve";
    case MetricPoint::kUnreserve:
      return "Unreserve";
    case MetricPoint::kPermit:
      return "Permit";
    case MetricPoint::kPreBind:
      return "PreBind";
    case MetricPoint::kBind:
      return "Bind";
    case MetricPoint::kPostBind:
      return "PostBind";
  }
  return "Unknown";
}

std::string_view statusCodeName(Code code) {
  switch (code) {
    case Code::kSuccess:
      return "Success";
    case Code::kError:
      return "Error";
    case Code::kUnschedulable:
      return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::kWait:
      return "Wait";
    case Code::kSkip:
      return "Skip";
  }
  return "Unknown";
}

namespace {

std::size_t slotOf(MetricPoint point, Code code) {
  return static_cast<std::size_t>(point) * kStatusCodeCount + static_cast<std::size_t>(code);
}

// Found once, then read without the family's lock; two threads racing to fill a slot get the
// same child from the family.
template <typename Make>
metrics::Histogram& cached(std::atomic<metrics::Histogram*>& slot, Make make) {
  metrics::Histogram* h = slot.load(std::memory_order_acquire);
  if (h == nullptr) {
    h = &make();
    slot.store(h, std::memory_order_release);
  }
  return *h;
}

}  // namespace

FrameworkMetrics::FrameworkMetrics(metrics::Registry& registry, std::string profile,
                                   std::vector<std::string> plugins, int sample_percent)
    : points_(registry.histogram("scheduler_framework_extension_point_duration_seconds",
                                 "Latency for running all plugins of a specific extension point.",
                                 {"extension_point", "status", "profile"},
                                 metrics::exponentialBuckets(0.0001, 2, 12))),
      plugins_(registry.histogram("scheduler_plugin_execution_duration_seconds",
                                  "Duration for running a plugin at a specific extension point.",
                                  {"plugin", "extension_point", "status"},
                                  metrics::exponentialBuckets(0.00001, 1.5, 20))),
      profile_(std::move(profile)),
      plugin_names_(std::move(plugins)),
      sample_percent_(sample_percent < 0     ? 0
                      : sample_percent > 100 ? 100
                                             : sample_percent),
      plugin_slots_(std::make_unique<Slots[]>(plugin_names_.size())) {}

FrameworkMetrics::~FrameworkMetrics() = default;

bool FrameworkMetrics::sampleCycle() {
  // Cycle n is sampled when the count of sampled cycles (n * percent / 100) steps up.
  const std::uint64_t n = cycles_++;
  const auto percent = static_cast<std::uint64_t>(sample_percent_);
  return (n + 1) * percent / 100 != n * percent / 100;
}

void FrameworkMetrics::setSamplePercent(int percent) {
  sample_percent_ = percent < 0 ? 0 : percent > 100 ? 100 : percent;
}

metrics::Histogram& FrameworkMetrics::pointSeries(MetricPoint point, Code code) {
  return cached(point_slots_[slotOf(point, code)], [&]() -> metrics::Histogram& {
    return points_.with({metricPointName(point), statusCodeName(code), profile_});
  });
}

metrics::Histogram& FrameworkMetrics::pluginSeries(std::size_t plugin, MetricPoint point,
                                                   Code code) {
  return cached(plugin_slots_[plugin][slotOf(point, code)], [&]() -> metrics::Histogram& {
    return plugins_.with({plugin_names_[plugin], metricPointName(point), statusCodeName(code)});
  });
}

void FrameworkMetrics::observePoint(MetricPoint point, Code code, double seconds) {
  pointSeries(point, code).observe(seconds);
}

void FrameworkMetrics::observePlugin(std::size_t plugin, MetricPoint point, Code code,
                                     double seconds, std::uint64_t calls) {
  if (plugin >= plugin_names_.size() || calls == 0)
    return;
  pluginSeries(plugin, point, code).observe(seconds / static_cast<double>(calls), calls);
}

}  // namespace koord::roles::scheduler
