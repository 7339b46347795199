// ResctrlCollector (gate ResctrlCollector, with -enable-resctrl-collector): each Koordinator
// resctrl group's monitoring counters per L3 domain (mon_data/mon_L3_<id>/{llc_occupancy,
// mbm_total_bytes,mbm_local_bytes}), as Koordinator's koordlet_resctrl_* gauges.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "koord/core/metrics.h"
#include "koord/kube/error.h"
#include "qosmanager/resctrl/resctrl_policy.h"

namespace koord::roles::koordlet::qosmanager {

/// One group's counters in one L3 domain; a counter the kernel does not offer (no CMT or MBM,
/// "Unavailable" while the hardware has no reading) is nullopt.
struct ResctrlMonSample {
  ResctrlGroup group = ResctrlGroup::kLSR;
  int cache_id = 0;
  std::optional<std::uint64_t> llc_occupancy_bytes;
  std::optional<std::uint64_t> mbm_total_bytes;
  std::optional<std::uint64_t> mbm_local_bytes;
};

/// Reads root/<LSR|LS|BE>/mon_data/mon_L3_*; a group without mon_data (not created yet, or no
/// monitoring on this CPU) contributes nothing. Errors name the file: a counter that is neither
/// a number nor "Unavailable", more than kMaxCacheIds domains.
kube::Expected<std::vector<ResctrlMonSample>> readResctrlMonData(const std::filesystem::path& root);

/// Koordinator's gauges on a registry: koordlet_resctrl_llc_occupancy{node,cache_id,qos} and
/// koordlet_resctrl_memory_bandwidth{node,cache_id,qos,mb_type} (mb_type mbm_total_bytes or
/// mbm_local_bytes; the raw byte counters, as Koordinator publishes them). One round at a time.
class ResctrlMetrics {
 public:
  ResctrlMetrics(metrics::Registry& registry, std::string node_name);
  /// Sets the gauges of `samples` and drops the series of domains and counters not in them.
  void update(const std::vector<ResctrlMonSample>& samples);

 private:
  std::string node_;
  metrics::GaugeFamily& llc_;
  metrics::GaugeFamily& mb_;
  std::set<metrics::LabelValues> llc_published_;
  std::set<metrics::LabelValues> mb_published_;
};

}  // namespace koord::roles::koordlet::qosmanager
