// Koordinator's koordlet_pod_psi and koordlet_container_psi gauges: per resource, precision and
// degree (full only where the kernel has it), dropped with the pod or container they describe.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "koord/core/metrics.h"
#include "metricsadvisor/collectors/psi/psi_reader.h"

namespace koord::roles::koordlet::metricsadvisor {

/// Who a series belongs to: a pod (container_id and container_name empty) or one of its
/// containers (container_id as the pod status writes it, "containerd://<id>").
struct PSIObjectLabels {
  std::string_view pod_uid;
  std::string_view pod_name;
  std::string_view pod_namespace;
  std::string_view container_id;
  std::string_view container_name;
};

/// One object's published series: the gauges it holds, so a round sets values without building
/// label sets, and what it published, so its series can be named again to drop them.
struct PSISeries {
  static constexpr std::size_t kPerResource = 6;  // some x 3 precisions, full x 3
  std::array<metrics::Gauge*, 3 * kPerResource> gauges{};
  std::array<bool, 3> full_supported{};
  bool published = false;
};

/// Not thread-safe: one collector round at a time.
class PSIGauges {
 public:
  PSIGauges(metrics::Registry& registry, std::string node_name);

  void setPod(PSISeries& series, const PSIObjectLabels& who, const PSIByResource& psi);
  void setContainer(PSISeries& series, const PSIObjectLabels& who, const PSIByResource& psi);
  /// Removes the object's series from the registry (a pod gone, or unreadable this round).
  void dropPod(PSISeries& series, const PSIObjectLabels& who);
  void dropContainer(PSISeries& series, const PSIObjectLabels& who);

 private:
  void set(metrics::GaugeFamily& family, PSISeries& series, const PSIObjectLabels& who,
           bool container, const PSIByResource& psi);
  void dropResource(metrics::GaugeFamily& family, PSISeries& series, const PSIObjectLabels& who,
                    bool container, std::size_t resource);
  metrics::LabelValues labels(const PSIObjectLabels& who, bool container, std::size_t resource,
                              std::size_t slot, bool full_supported) const;

  std::string node_;
  metrics::GaugeFamily& pod_;
  metrics::GaugeFamily& container_;
};

}  // namespace koord::roles::koordlet::metricsadvisor
