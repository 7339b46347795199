// A gated metrics-advisor collector built from its table line over a temp cgroup tree, with the
// cache and registry it writes, for the collector tests: pods in, rounds run, series counted.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "koord/cgroup/resource_executor.h"
#include "koord/core/metrics.h"
#include "koordlet_options.h"
#include "metriccache/metric_cache.h"
#include "metricsadvisor/framework/collector.h"
#include "statesinformer/states_snapshot.h"
#include "temp_tree.h"

namespace koord::roles::koordlet::testing {

/// A running Burstable pod with one containerd container "app" whose ID is 64 x `id_char`.
inline PodMeta collectorPod(std::string uid, char id_char) {
  PodMeta p;
  p.namespace_ = "ns";
  p.name = "pod-" + uid.substr(0, 4);
  p.uid = std::move(uid);
  p.phase = PodPhase::kRunning;
  p.kube_qos = apis::KubeQoS::kBurstable;
  ContainerMeta c;
  c.name = "app";
  c.runtime = "containerd";
  c.id = std::string(64, id_char);
  p.containers.push_back(std::move(c));
  return p;
}

inline std::string podDirOf(const PodMeta& p) {
  return "kubepods/burstable/pod" + p.uid;
}
inline std::string containerDirOf(const PodMeta& p) {
  return podDirOf(p) + "/" + p.containers.front().id;
}

struct CollectorFixture {
  koord::testing::TempTree tree{"koord-collector"};
  cgroup::ResourceExecutor cgroups;
  metriccache::MetricCache cache;
  metrics::Registry registry;
  KoordletOptions options;
  std::unique_ptr<metricsadvisor::Collector> collector;
  metriccache::TimePoint now{std::chrono::seconds(1'800'000'000)};

  CollectorFixture(cgroup::CgroupVersion version, const metricsadvisor::CollectorSpec& spec)
      : cgroups({tree.path("cgroup"), version, cgroup::CgroupDriver::kCgroupfs}) {
    options.node_name = "node-1";
    options.proc_root_dir = tree.path("proc").string();
    collector = spec.make(metricsadvisor::CollectorContext{
        .cgroups = cgroups, .cache = cache, .metrics = registry, .options = options});
  }

  /// One round over `pods`, one second after the last.
  void round(std::vector<PodMeta> pods) {
    StatesSnapshot s;
    s.pods = std::make_shared<const std::vector<PodMeta>>(std::move(pods));
    s.synced = true;
    now += std::chrono::seconds(1);
    collector->collect(s, now, std::chrono::steady_clock::now());
  }

  /// Writes `content` to the cgroup file at `dir` (relative to the cgroup root, v1 subsystem
  /// first where there is one).
  void write(std::string_view dir, std::string_view content) const {
    tree.write(fmt::format("cgroup/{}", dir), content);
  }

  /// The exposition lines of metric `name` that contain every one of `needles` (each line with
  /// its newline).
  std::size_t lines(std::string_view name, std::vector<std::string> needles = {}) const {
    const std::string text = registry.render();
    std::size_t n = 0, pos = 0;
    const std::string head = std::string(name) + "{";
    while (pos < text.size()) {
      auto nl = text.find('\n', pos);
      // With its newline, so a needle can pin the value: "} 4\n".
      std::string_view line(text.data() + pos,
                            (nl == std::string::npos ? text.size() : nl + 1) - pos);
      pos = nl == std::string::npos ? text.size() : nl + 1;
      if (line.substr(0, head.size()) != head)
        continue;
      bool all = true;
      for (const auto& needle : needles)
        all = all && line.find(needle) != std::string_view::npos;
      n += all ? 1 : 0;
    }
    return n;
  }
};

}  // namespace koord::roles::koordlet::testing
