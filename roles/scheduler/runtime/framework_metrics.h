// kube-scheduler's framework series under its names and buckets: each extension point's duration
// per cycle, and each plugin's calls in a sample of the cycles (upstream samples a tenth).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/status.h"

namespace koord::metrics {
class Registry;
class Histogram;
template <typename T>
class Family;
}  // namespace koord::metrics

namespace koord::roles::scheduler {

/// The extension_point label's values.
enum class MetricPoint : std::uint8_t {
  kPreFilter,
  kFilter,
  kPostFilter,
  kPreScore,
  kScore,
  kScoreExtensionNormalize,
  kReserve,
  kUnreserve,
  kPermit,
  kPreBind,
  kBind,
  kPostBind,
};
inline constexpr std::size_t kMetricPointCount = 12;
inline constexpr std::size_t kStatusCodeCount = 6;

std::string_view metricPointName(MetricPoint point);
/// The status label: upstream's Code names ("Success", "Unschedulable", ...).
std::string_view statusCodeName(Code code);

/// Upstream's pluginMetricsSamplePercent.
inline constexpr int kDefaultPluginMetricsSamplePercent = 10;

class FrameworkMetrics {
 public:
  /// `plugins`: the profile's plugin names; observePlugin takes an index into them.
  FrameworkMetrics(metrics::Registry& registry, std::string profile,
                   std::vector<std::string> plugins,
                   int sample_percent = kDefaultPluginMetricsSamplePercent);
  ~FrameworkMetrics();

  /// Whether the next cycle times its plugins: sample_percent cycles of every hundred, spread
  /// evenly. Called once per cycle, from the scheduling thread.
  bool sampleCycle();
  void setSamplePercent(int percent);

  /// scheduler_framework_extension_point_duration_seconds{extension_point, status, profile}.
  void observePoint(MetricPoint point, Code code, double seconds);
  /// scheduler_plugin_execution_duration_seconds{plugin, extension_point, status}: `calls` calls
  /// that took `seconds` in all (Filter and Score time a plugin over a stretch of nodes; each
  /// call is counted at the stretch's mean, so sum and count are exact). Any thread.
  void observePlugin(std::size_t plugin, MetricPoint point, Code code, double seconds,
                     std::uint64_t calls = 1);

 private:
  metrics::Histogram& pointSeries(MetricPoint point, Code code);
  metrics::Histogram& pluginSeries(std::size_t plugin, MetricPoint point, Code code);

  metrics::Family<metrics::Histogram>& points_;
  metrics::Family<metrics::Histogram>& plugins_;
  std::string profile_;
  std::vector<std::string> plugin_names_;
  int sample_percent_;
  std::uint64_t cycles_ = 0;
  /// The children, found on first use (the family's lookup by label values is too slow for
  /// every cycle).
  using Slots = std::array<std::atomic<metrics::Histogram*>, kMetricPointCount * kStatusCodeCount>;
  Slots point_slots_{};
  std::unique_ptr<Slots[]> plugin_slots_;
};

}  // namespace koord::roles::scheduler
