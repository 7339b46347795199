// Koordinator's koordlet_pod_psi and koordlet_container_psi gauges: per resource, precision and
// degree (full only where the kernel has it), dropped with the pod or container they describe.
#pragma once

#include <map>
#include <mutex>
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

/// Keeps each object's last pressure figures and writes the series from them when /metrics is
/// scraped: eighteen labelled gauges per object held in the registry cost far more than the
/// figures themselves once a node runs hundreds of pods. Set and drop from one thread; the
/// scrape may come from another.
class PSIGauges {
 public:
  PSIGauges(metrics::Registry& registry, std::string node_name);

  void setPod(const PSIObjectLabels& who, const PSIByResource& psi);
  void setContainer(const PSIObjectLabels& who, const PSIByResource& psi);
  /// Removes the object's series (a pod gone, or unreadable this round).
  void dropPod(std::string_view pod_uid);
  void dropContainer(std::string_view container_id);

 private:
  struct Published {
    std::string pod_uid, pod_name, pod_namespace, container_name;
    PSIByResource psi;
  };
  using ByKey = std::map<std::string, Published, std::less<>>;

  static void set(ByKey& objects, std::string_view key, const PSIObjectLabels& who,
                  const PSIByResource& psi);
  void emit(const ByKey& objects, bool container, const metrics::SeriesSink& sink) const;

  std::string node_;
  mutable std::mutex mu_;
  ByKey pods_;        // by pod UID
  ByKey containers_;  // by container ID as labelled
  // Last: unregistered first on destruction, before the maps the scrape reads go.
  metrics::CollectedFamily pod_family_;
  metrics::CollectedFamily container_family_;
};

}  // namespace koord::roles::koordlet::metricsadvisor
