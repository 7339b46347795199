#include "koordlet_inert_flags.h"

#include "koord/core/flags.h"
#include "koord/core/log.h"

namespace koord::roles::koordlet {
namespace {

constexpr std::string_view kNotGo = "koord is not a Go binary: there is no pprof endpoint";
constexpr std::string_view kNoConfigMap =
    "koord does not read the koordlet ConfigMap (qos-plugin-extra-configs)";
constexpr std::string_view kNoRuntime = "koord does not talk to the container runtimes";
constexpr std::string_view kNotTsdb =
    "koord's metric cache is not a TSDB (it is bounded by its series cap and ring sizes, and "
    "checkpointed to -tsdb-path)";
constexpr std::string_view kNoNri =
    "koord has no NRI plugin: its runtime hooks answer runtime-proxy and reconcile";

constexpr InertFlag kInertFlags[] = {
    {"enable-pprof", kNotGo},
    {"pprof-addr", kNotGo},
    {"configmap-name", kNoConfigMap},
    {"configmap-namespace", kNoConfigMap},
    {"var-run-root-dir", kNoRuntime},
    {"run-root-dir", kNoRuntime},
    {"containerd-endpoint", kNoRuntime},
    {"docker-endpoint", kNoRuntime},
    {"pouch-endpoint", kNoRuntime},
    {"default-runtime-type", "koord's runtime hooks never build container IDs from it"},
    {"report-interval",
     "deprecated since Koordinator v1.1: the NodeMetric's collectPolicy.reportIntervalSeconds "
     "sets the interval"},
    {"collect-sys-metric-outdated-interval",
     "the system usage is computed from the same round's node and pod readings"},
    {"collect-node-cpu-info-interval", "the CPU topology and info are read once at startup"},
    {"collect-node-storage-info-interval",
     "koord has no node storage collector (Koordinator's feeds BlkIOReconcile)"},
    {"only-evict-by-api", "koord always evicts through the Eviction API"},
    {"resource-force-update-seconds",
     "every cgroup write compares with the file's current value: there is no cache to refresh"},
    {"tsdb-enable-prometheus-metric", kNotTsdb},
    {"tsdb-stripe-size", kNotTsdb},
    {"tsdb-max-bytes", kNotTsdb},
    {"tsdb-wal-segment-size", kNotTsdb},
    {"tsdb-max-block-chunk-segment-size", kNotTsdb},
    {"tsdb-min-block-duration", kNotTsdb},
    {"tsdb-max-block-duration", kNotTsdb},
    {"tsdb-head-chunks-write-buffer-size", kNotTsdb},
    {"runtime-hooks-plugin-failure-policy",
     "koord's runtime hooks never fail a request: one that cannot act logs why and the others "
     "still run"},
    {"enable-nri-runtime-hook", kNoNri},
    {"runtime-hooks-nri-connect-timeout", kNoNri},
    {"runtime-hooks-nri-backoff-duration", kNoNri},
    {"runtime-hooks-nri-backoff-cap", kNoNri},
    {"runtime-hooks-nri-backoff-steps", kNoNri},
    {"runtime-hooks-nri-backoff-factor", kNoNri},
    {"runtime-hooks-nri-socket-path", kNoNri},
    {"runtime-hooks-nri-plugin-name", kNoNri},
    {"runtime-hooks-nri-plugin-index", kNoNri},
};

}  // namespace

std::span<const InertFlag> koordletInertFlags() {
  return kInertFlags;
}

std::size_t warnInertFlags(const FlagSet& flags) {
  std::size_t warned = 0;
  for (const InertFlag& flag : kInertFlags) {
    if (!flags.changed(flag.name))
      continue;
    KOORD_LOG_WARNING("koordlet: -{} has no effect: {}", flag.name, flag.why);
    ++warned;
  }
  return warned;
}

}  // namespace koord::roles::koordlet
