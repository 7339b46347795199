// Koordinator's koordlet_container_cpi gauge on /metrics: per container its cycles and
// instructions over the last window, cpi_field "cycles" or "instructions".
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "koord/core/metrics.h"
#include "metricsadvisor/collectors/cpi/cgroup_cpi_counters.h"

namespace koord::roles::koordlet::metricsadvisor {

/// One container's reading; container_id as the pod status writes it ("containerd://<id>").
struct CPIGaugeSample {
  std::string_view container_id;
  std::string_view container_name;
  std::string_view pod_uid;
  std::string_view pod_name;
  std::string_view pod_namespace;
  CPICounts counts;
};

/// Not thread-safe: one round at a time.
class CPIGauges {
 public:
  CPIGauges(metrics::Registry& registry, std::string node_name);
  /// Sets the series of `samples` and drops every other series it published before, as
  /// Koordinator resets the gauge each round: a container gone, or not measured this round.
  void update(const std::vector<CPIGaugeSample>& samples);

 private:
  std::string node_;
  metrics::GaugeFamily& family_;
  std::set<metrics::LabelValues> published_;
};

}  // namespace koord::roles::koordlet::metricsadvisor
