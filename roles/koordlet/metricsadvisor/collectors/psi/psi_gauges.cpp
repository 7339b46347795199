#include "metricsadvisor/collectors/psi/psi_gauges.h"

#include <array>

namespace koord::roles::koordlet::metricsadvisor {

namespace {

constexpr std::array<std::string_view, 3> kResources{"cpu", "mem", "io"};
constexpr std::array<std::string_view, 3> kPrecisions{"avg10", "avg60", "avg300"};

const PSIStats& statsOf(const PSIByResource& psi, std::size_t resource) {
  return resource == 0 ? psi.cpu : resource == 1 ? psi.mem : psi.io;
}

double valueOf(const PSILine& line, std::size_t precision) {
  return precision == 0 ? line.avg10 : precision == 1 ? line.avg60 : line.avg300;
}

}  // namespace

PSIGauges::PSIGauges(metrics::Registry& registry, std::string node_name)
    : node_(std::move(node_name)),
      pod_family_(registry.collectedGauge(
          "koordlet_pod_psi", "Pod psi collected by koordlet",
          {"node", "pod_uid", "pod_name", "pod_namespace", "psi_resource_type", "psi_precision",
           "psi_degree", "cpu_full_supported"},
          [this](const metrics::SeriesSink& sink) { emit(pods_, false, sink); })),
      container_family_(registry.collectedGauge(
          "koordlet_container_psi", "Container psi collected by koordlet",
          {"node", "container_id", "container_name", "pod_uid", "pod_name", "pod_namespace",
           "psi_resource_type", "psi_precision", "psi_degree", "cpu_full_supported"},
          [this](const metrics::SeriesSink& sink) { emit(containers_, true, sink); })) {}

void PSIGauges::set(ByKey& objects, std::string_view key, const PSIObjectLabels& who,
                    const PSIByResource& psi) {
  auto it = objects.find(key);
  if (it == objects.end()) {
    it = objects.emplace(std::string(key), Published{}).first;
    it->second.pod_uid = who.pod_uid;
    it->second.pod_name = who.pod_name;
    it->second.pod_namespace = who.pod_namespace;
    it->second.container_name = who.container_name;
  }
  it->second.psi = psi;
}

void PSIGauges::setPod(const PSIObjectLabels& who, const PSIByResource& psi) {
  std::lock_guard lock(mu_);
  set(pods_, who.pod_uid, who, psi);
}

void PSIGauges::setContainer(const PSIObjectLabels& who, const PSIByResource& psi) {
  std::lock_guard lock(mu_);
  set(containers_, who.container_id, who, psi);
}

void PSIGauges::dropPod(std::string_view pod_uid) {
  std::lock_guard lock(mu_);
  if (auto it = pods_.find(pod_uid); it != pods_.end())
    pods_.erase(it);
}

void PSIGauges::dropContainer(std::string_view container_id) {
  std::lock_guard lock(mu_);
  if (auto it = containers_.find(container_id); it != containers_.end())
    containers_.erase(it);
}

void PSIGauges::emit(const ByKey& objects, bool container, const metrics::SeriesSink& sink) const {
  std::lock_guard lock(mu_);
  std::array<std::string_view, 10> values{};
  for (const auto& [key, o] : objects) {
    std::size_t n = 0;
    values[n++] = node_;
    if (container) {
      values[n++] = key;
      values[n++] = o.container_name;
    }
    values[n++] = o.pod_uid;
    values[n++] = o.pod_name;
    values[n++] = o.pod_namespace;
    const std::size_t fixed = n;
    for (std::size_t r = 0; r < kResources.size(); ++r) {
      const PSIStats& s = statsOf(o.psi, r);
      for (std::size_t degree = 0; degree < (s.full_supported ? 2U : 1U); ++degree) {
        const PSILine& line = degree == 0 ? s.some : s.full;
        for (std::size_t p = 0; p < kPrecisions.size(); ++p) {
          n = fixed;
          values[n++] = kResources[r];
          values[n++] = kPrecisions[p];
          values[n++] = degree == 0 ? "some" : "full";
          values[n++] = s.full_supported ? "true" : "false";
          sink(std::span<const std::string_view>(values.data(), n), valueOf(line, p));
        }
      }
    }
  }
}

}  // namespace koord::roles::koordlet::metricsadvisor
