#include "metricsadvisor/collectors/psi/psi_gauges.h"

namespace koord::roles::koordlet::metricsadvisor {

namespace {

constexpr std::array<std::string_view, 3> kResources{"cpu", "mem", "io"};
constexpr std::array<std::string_view, 3> kPrecisions{"avg10", "avg60", "avg300"};

const PSIStats& statsOf(const PSIByResource& psi, std::size_t resource) {
  return resource == 0 ? psi.cpu : resource == 1 ? psi.mem : psi.io;
}

// Slot = degree * 3 + precision, some first.
double valueOf(const PSIStats& s, std::size_t slot) {
  const PSILine& line = slot < 3 ? s.some : s.full;
  switch (slot % 3) {
    case 0:
      return line.avg10;
    case 1:
      return line.avg60;
    default:
      return line.avg300;
  }
}

}  // namespace

PSIGauges::PSIGauges(metrics::Registry& registry, std::string node_name)
    : node_(std::move(node_name)),
      pod_(registry.gauge("koordlet_pod_psi", "Pod psi collected by koordlet",
                          {"node", "pod_uid", "pod_name", "pod_namespace", "psi_resource_type",
                           "psi_precision", "psi_degree", "cpu_full_supported"})),
      container_(registry.gauge(
          "koordlet_container_psi", "Container psi collected by koordlet",
          {"node", "container_id", "container_name", "pod_uid", "pod_name", "pod_namespace",
           "psi_resource_type", "psi_precision", "psi_degree", "cpu_full_supported"})) {}

metrics::LabelValues PSIGauges::labels(const PSIObjectLabels& who, bool container,
                                       std::size_t resource, std::size_t slot,
                                       bool full_supported) const {
  metrics::LabelValues v;
  v.reserve(container ? 10 : 8);
  v.emplace_back(node_);
  if (container) {
    v.emplace_back(who.container_id);
    v.emplace_back(who.container_name);
  }
  v.emplace_back(who.pod_uid);
  v.emplace_back(who.pod_name);
  v.emplace_back(who.pod_namespace);
  v.emplace_back(kResources[resource]);
  v.emplace_back(kPrecisions[slot % 3]);
  v.emplace_back(slot < 3 ? "some" : "full");
  v.emplace_back(full_supported ? "true" : "false");
  return v;
}

void PSIGauges::dropResource(metrics::GaugeFamily& family, PSISeries& series,
                             const PSIObjectLabels& who, bool container, std::size_t resource) {
  for (std::size_t slot = 0; slot < PSISeries::kPerResource; ++slot) {
    auto& g = series.gauges[resource * PSISeries::kPerResource + slot];
    if (g != nullptr)
      family.remove(labels(who, container, resource, slot, series.full_supported[resource]));
    g = nullptr;
  }
}

void PSIGauges::set(metrics::GaugeFamily& family, PSISeries& series, const PSIObjectLabels& who,
                    bool container, const PSIByResource& psi) {
  for (std::size_t r = 0; r < kResources.size(); ++r) {
    const PSIStats& s = statsOf(psi, r);
    // The label set carries full_supported: when it flips, the old series go and new ones come.
    if (series.published && series.full_supported[r] != s.full_supported)
      dropResource(family, series, who, container, r);
    series.full_supported[r] = s.full_supported;
    const std::size_t slots = s.full_supported ? PSISeries::kPerResource : 3;
    for (std::size_t slot = 0; slot < slots; ++slot) {
      auto& g = series.gauges[r * PSISeries::kPerResource + slot];
      if (g == nullptr)
        g = &family.with(labels(who, container, r, slot, s.full_supported));
      g->set(valueOf(s, slot));
    }
  }
  series.published = true;
}

void PSIGauges::setPod(PSISeries& series, const PSIObjectLabels& who, const PSIByResource& psi) {
  set(pod_, series, who, false, psi);
}

void PSIGauges::setContainer(PSISeries& series, const PSIObjectLabels& who,
                             const PSIByResource& psi) {
  set(container_, series, who, true, psi);
}

void PSIGauges::dropPod(PSISeries& series, const PSIObjectLabels& who) {
  if (!series.published)
    return;
  for (std::size_t r = 0; r < kResources.size(); ++r)
    dropResource(pod_, series, who, false, r);
  series.published = false;
}

void PSIGauges::dropContainer(PSISeries& series, const PSIObjectLabels& who) {
  if (!series.published)
    return;
  for (std::size_t r = 0; r < kResources.size(); ++r)
    dropResource(container_, series, who, true, r);
  series.published = false;
}

}  // namespace koord::roles::koordlet::metricsadvisor
