#include "metricsadvisor/collectors/cpi/cpi_gauges.h"

namespace koord::roles::koordlet::metricsadvisor {

CPIGauges::CPIGauges(metrics::Registry& registry, std::string node_name)
    : node_(std::move(node_name)),
      family_(registry.gauge("koordlet_container_cpi", "Container cpi collected by koordlet",
                             {"node", "container_id", "container_name", "pod_uid", "pod_name",
                              "pod_namespace", "cpi_field"})) {}

void CPIGauges::update(const std::vector<CPIGaugeSample>& samples) {
  std::set<metrics::LabelValues> now;
  for (const CPIGaugeSample& s : samples) {
    const std::pair<const char*, double> fields[] = {{"cycles", s.counts.cycles},
                                                     {"instructions", s.counts.instructions}};
    for (const auto& [field, value] : fields) {
      metrics::LabelValues labels{node_,
                                  std::string(s.container_id),
                                  std::string(s.container_name),
                                  std::string(s.pod_uid),
                                  std::string(s.pod_name),
                                  std::string(s.pod_namespace),
                                  field};
      family_.with(labels).set(value);
      now.insert(std::move(labels));
    }
  }
  for (const auto& labels : published_) {
    if (!now.contains(labels))
      family_.remove(labels);
  }
  published_ = std::move(now);
}

}  // namespace koord::roles::koordlet::metricsadvisor
