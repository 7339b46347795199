#include "koordlet_options.h"

#include <fmt/format.h>

#include <algorithm>

#include "runtimehooks/hookserver/hook_server.h"

namespace koord::roles::koordlet {

using namespace std::chrono_literals;

void registerFlags(FlagSet& f, KoordletOptions& o, const FeatureGate& gates, bool host_mode) {
  app::addLoggingFlags(f, o.common);
  app::addFeatureGatesFlag(f, o.common, gates);
  f.addString("kubeconfig", &o.kubeconfig, "", "Path to a kubeconfig (in-cluster otherwise).");
  f.addString("addr", &o.addr, ":9316", "The address the metric endpoint binds to.");
  f.addDouble("kube-api-qps", &o.kube_api_qps, 20, "QPS to use while talking with kube-apiserver.");
  f.addInt("kube-api-burst", &o.kube_api_burst, 30,
           "Burst to use while talking with kube-apiserver.");
  f.addString("configmap-name", &o.configmap_name, "koordlet-config",
              "determines the config map name.");
  f.addString("configmap-namespace", &o.configmap_namespace, "koordinator-system",
              "determines the config map namespace.");

  f.addString("cgroup-root-dir", &o.cgroup_root_dir,
              host_mode ? "/sys/fs/cgroup/" : "/host-cgroup/", "Cgroup root dir");
  f.addString("sys-root-dir", &o.sys_root_dir, host_mode ? "/sys/" : "/host-sys/",
              "host /sys dir in container");
  f.addString("sys-fs-root-dir", &o.sys_fs_root_dir, host_mode ? "/sys/fs/" : "/host-sys-fs/",
              "host /sys/fs dir in container, used by resctrl fs");
  f.addString("proc-root-dir", &o.proc_root_dir, "/proc/", "host /proc dir in container");
  f.addString("var-run-root-dir", &o.var_run_root_dir, host_mode ? "/var/run/" : "/host-var-run/",
              "host /var/run dir in container");
  f.addString("run-root-dir", &o.run_root_dir, host_mode ? "/run/" : "/host-run/",
              "host /run dir in container");
  f.addString("var-lib-kubelet-dir", &o.var_lib_kubelet_dir, "/var/lib/kubelet/",
              "host kubelet's data dir");
  f.addString("cgroup-driver", &o.cgroup_driver, "",
              "cgroup driver of the node: cgroupfs or systemd (empty: detect from the kubepods "
              "layout)");
  f.addString("containerd-endpoint", &o.containerd_endpoint, "", "containerd endpoint");
  f.addString("docker-endpoint", &o.docker_endpoint, "", "docker endpoint");
  f.addString("pouch-endpoint", &o.pouch_endpoint, "", "pouch endpoint");
  f.addString("default-runtime-type", &o.default_runtime_type, "containerd",
              "default runtime type during runtime hooks handle request, candidates are "
              "containerd/docker/pouch.");
  f.addString("xpu-device-infos-dir", &o.xpu_device_infos_dir,
              "/var/run/koordlet/xpu-device-infos/",
              "directory of the device infos written by koord-device-daemon");

  f.addString("kubelet-preferred-address-type", &o.kubelet_preferred_address_type, "InternalIP",
              "The node address types to use when determining which address to use to connect "
              "to a particular node.");
  f.addDuration("kubelet-sync-interval", &o.kubelet_sync_interval, 10s,
                "The interval at which Koordlet will retain datas from Kubelet.");
  f.addDuration("kubelet-sync-timeout", &o.kubelet_sync_timeout, 3s,
                "The length of time to wait before giving up on a single request to Kubelet.");
  f.addBool("kubelet-insecure-tls", &o.kubelet_insecure_tls, false,
            "Use the kubelet's read-only port (plain HTTP, nothing authenticated or verified) "
            "instead of authenticated HTTPS with a verified certificate.");
  f.addInt("kubelet-read-only-port", &o.kubelet_read_only_port, 10255,
           "The read-only port for the kubelet to serve on with no authentication/authorization "
           "(used with -kubelet-insecure-tls only).");
  f.addString("kubelet-ca-file", &o.kubelet_ca_file, "",
              "CA bundle to verify the kubelet's serving certificate with (koord's own; empty: "
              "derived from -kubelet-config-file).");
  f.addString("kubelet-config-file", &o.kubelet_config_file, "/var/lib/kubelet/config.yaml",
              "The kubelet's config file, read for the CA of its serving certificate when "
              "-kubelet-ca-file is empty: serverTLSBootstrap -> the cluster CA, tlsCertFile -> "
              "that file, else <var-lib-kubelet-dir>/pki/kubelet.crt (koord's own).");
  f.addDuration("node-topology-sync-interval", &o.node_topology_sync_interval, 3s,
                "The interval which Koordlet will report the node topology info.");
  f.addBool("disable-query-kubelet-config", &o.disable_query_kubelet_config, false,
            "Disables querying the kubelet configuration from kubelet.");
  f.addBool("enable-node-metric-report", &o.enable_node_metric_report, true,
            "Enable status update of node metric.");

  f.addDuration("collect-res-used-interval", &o.collect_res_used_interval, 1s,
                "Collect node/pod resource usage interval.");
  f.addDuration("collect-sys-metric-outdated-interval", &o.collect_sys_metric_outdated_interval,
                10s, "Interval after which collected system metrics count as outdated.");
  f.addDuration("collect-node-cpu-info-interval", &o.collect_node_cpu_info_interval, 60s,
                "Collect node cpu info interval.");
  f.addDuration("psi-collector-interval", &o.psi_collector_interval, 10s,
                "Collect pod and container PSI interval.");
  f.addDuration("cpi-collector-interval", &o.cpi_collector_interval, 60s,
                "Collect pod and container CPI interval.");
  f.addDuration("coldpage-collector-interval", &o.coldpage_collector_interval, 5s,
                "Collect cold page interval.");
  f.addBool("enable-pagecache-collector", &o.enable_pagecache_collector, false,
            "Enable cache collector of node, pods and containers.");
  f.addBool("enable-resctrl-collector", &o.enable_resctrl_collector, false,
            "Enable resctrl collector of node, pods and containers.");
  f.addInt("metric-gc-interval-seconds", &o.metric_gc_interval_seconds, 300,
           "Collect node metrics interval.");
  f.addInt("metric-expire-seconds", &o.metric_expire_seconds, 1800, "Metric expire seconds.");

  f.addInt("reconcile-interval-seconds", &o.reconcile_interval_seconds, 1,
           "reconcile be pod cgroup interval by seconds");
  f.addInt("cpu-suppress-interval-seconds", &o.cpu_suppress_interval_seconds, 1,
           "suppress be pod cpu resource interval by seconds");
  f.addInt("cpu-evict-interval-seconds", &o.cpu_evict_interval_seconds, 1,
           "evict be pod(cpu) interval by seconds");
  f.addInt("memory-evict-interval-seconds", &o.memory_evict_interval_seconds, 1,
           "evict be pod(memory) interval by seconds");
  f.addInt("memory-evict-cool-time-seconds", &o.memory_evict_cool_time_seconds, 4,
           "cooling time: memory next evict time should after lastEvictTime + "
           "MemoryEvictCoolTimeSeconds");
  f.addInt("cpu-evict-cool-time-seconds", &o.cpu_evict_cool_time_seconds, 20,
           "cooltime: CPU next evict time should after lastEvictTime + CPUEvictCoolTimeSeconds");
  f.addBool("only-evict-by-api", &o.only_evict_by_api, false,
            "only evict pods through the Eviction API, never by killing containers");
  f.addInt("resource-force-update-seconds", &o.resource_force_update_seconds, 60,
           "resource force update interval by seconds");

  f.addString("runtime-hooks-network", &o.runtime_hooks_network, "unix", "rpc server network type");
  f.addString("runtime-hooks-addr", &o.runtime_hooks_addr, "/host-var-run-koordlet/koordlet.sock",
              "rpc server address");
  f.addString("runtime-hooks-failure-policy", &o.runtime_hooks_failure_policy, "Ignore",
              "failure policy for runtime hooks (Ignore or Fail)");
  f.addString("runtime-hooks-config-path", &o.runtime_hooks_config_path,
              host_mode ? "/etc/runtime/hookserver.d" : "/host-etc-hookserver/",
              "config file path for runtime hooks");
  f.addString("runtime-hooks-host-endpoint", &o.runtime_hooks_host_endpoint,
              "/var/run/koordlet/koordlet.sock", "host endpoint of runtime proxy");
  f.addStringList("runtime-hooks-disable-stages", &o.runtime_hooks_disable_stages, {},
                  "disable stages for runtime hooks");
  f.addBool("enable-nri-runtime-hook", &o.enable_nri_runtime_hook, true,
            "enable/disable runtime hooks nri mode");
  f.addDuration("runtime-hooks-reconcile-interval", &o.runtime_hooks_reconcile_interval, 10s,
                "reconcile interval for each plugins");

  f.addString("tsdb-path", &o.tsdb_path, "/metric-data/",
              "Base path for metric data storage: the metric cache's checkpoint is written there.");
  f.addDuration("tsdb-retention-duration", &o.tsdb_retention_duration, 12h,
                "Duration of persisted data to keep: older checkpointed samples are not restored.");
  f.addDuration("metric-cache-checkpoint-interval", &o.metric_cache_checkpoint_interval, 60s,
                "How often the metric cache is checkpointed to -tsdb-path (and at shutdown), to "
                "be restored after a restart; 0 disables the checkpoint (koord's own).");
  f.addDuration("collect-cpi-timewindow", &o.collect_cpi_timewindow, 10s,
                "Collect cpi time window.");

  f.addString("audit-log-dir", &o.audit_log_dir, "/var/log/koordlet", "The dir of audit log");
  f.addInt("audit-verbose", &o.audit_verbose, 3,
           "The verbose of the audit log: events above it are not recorded (0: all)");
  f.addInt("audit-max-disk-space-mb", &o.audit_max_disk_space_mb, 16,
           "Max disk space occupied of audit log");
  f.addInt("audit-max-concurrent-readers", &o.audit_max_concurrent_readers, 4,
           "Max concurrent readers of the audit log");
  f.addInt("audit-max-events-limit", &o.audit_max_events_limit, 2048,
           "Max events limit in one request of the audit log");

  f.addString("prediction-checkpoint-filepath", &o.prediction_checkpoint_filepath,
              "/prediction-checkpoints",
              "Directory where the peak predictor keeps one checkpoint file per model.");
  f.addDuration("prediction-cold-start-duration", &o.prediction_cold_start_duration, 24h,
                "How long after its creation a pod's own prediction is not trusted yet.");
  f.addInt("prediction-safety-margin-percent", &o.prediction_safety_margin_percent, 10,
           "Headroom kept above the predicted peak, in percent of it.");
  f.addDuration("prediction-memory-histogram-decay-halflife",
                &o.prediction_memory_histogram_decay_halflife, 24h,
                "Age at which a memory usage sample weighs half as much as a new one.");
  f.addDuration("prediction-cpu-histogram-decay-halflife",
                &o.prediction_cpu_histogram_decay_halflife, 12h,
                "Age at which a CPU usage sample weighs half as much as a new one.");
  f.addDuration("prediction-training-interval", &o.prediction_training_interval, 1min,
                "How often the prediction models take a usage sample.");
  f.addDuration("prediction-model-expiration-duration", &o.prediction_model_expiration_duration,
                30min, "A prediction model not trained for this long is dropped.");
  f.addDuration("prediction-model-checkpoint-interval", &o.prediction_model_checkpoint_interval,
                10min, "How often each prediction model is checkpointed.");
  f.addInt("prediction-model-checkpoint-max-per-step", &o.prediction_model_checkpoint_max_per_step,
           12, "At most this many prediction models are checkpointed per step.");

  // Without effect in koord: koordlet_inert_flags.cpp.
  f.addBool("enable-pprof", &o.enable_pprof, false, "Enable pprof for koordlet (no effect).");
  f.addString("pprof-addr", &o.pprof_addr, ":9317", "The address the pprof binds to (no effect).");
  f.addDuration("report-interval", &o.report_interval, 0s,
                "Deprecated since Koordinator v1.1, use ColocationStrategy."
                "MetricReportIntervalSeconds in the slo-controller config (no effect).");
  f.addDuration("collect-node-storage-info-interval", &o.collect_node_storage_info_interval, 1s,
                "Collect node storage info interval (no effect).");
  f.addBool("tsdb-enable-prometheus-metric", &o.tsdb_enable_prometheus_metric, true,
            "Enable prometheus metric for tsdb (no effect).");
  f.addInt("tsdb-stripe-size", &o.tsdb_stripe_size, 1 << 14,
           "Size in entries of the series hash map (no effect).");
  f.addInt64("tsdb-max-bytes", &o.tsdb_max_bytes, std::int64_t{100} << 20,
             "Maximum number of bytes in blocks to be retained (no effect).");
  f.addInt("tsdb-wal-segment-size", &o.tsdb_wal_segment_size, 1 << 20,
           "Byte size of WAL(Write Ahead Log) (no effect).");
  f.addInt64("tsdb-max-block-chunk-segment-size", &o.tsdb_max_block_chunk_segment_size,
             std::int64_t{5} << 20, "The max size of block chunk segment files (no effect).");
  f.addDuration("tsdb-min-block-duration", &o.tsdb_min_block_duration, 10min,
                "The timestamp range of head blocks after which they get persisted (no effect).");
  f.addDuration("tsdb-max-block-duration", &o.tsdb_max_block_duration, 10min,
                "The maximum timestamp range of compacted blocks (no effect).");
  f.addInt("tsdb-head-chunks-write-buffer-size", &o.tsdb_head_chunks_write_buffer_size, 1 << 20,
           "Write buffer size used by the head chunks mapper (no effect).");
  f.addString("runtime-hooks-plugin-failure-policy", &o.runtime_hooks_plugin_failure_policy,
              "Ignore",
              "stop running other hooks once someone failed: Ignore or Fail (no effect: koord's "
              "hooks never fail a request)");
  f.addDuration("runtime-hooks-nri-connect-timeout", &o.runtime_hooks_nri_connect_timeout, 6s,
                "nri server connect time out (no effect).");
  f.addDuration("runtime-hooks-nri-backoff-duration", &o.runtime_hooks_nri_backoff_duration, 1s,
                "nri server backoff duration (no effect).");
  f.addDuration("runtime-hooks-nri-backoff-cap", &o.runtime_hooks_nri_backoff_cap,
                o.runtime_hooks_nri_backoff_cap, "nri server backoff cap (no effect).");
  f.addInt("runtime-hooks-nri-backoff-steps", &o.runtime_hooks_nri_backoff_steps, 2147483647,
           "nri server backoff steps (no effect).");
  f.addDouble("runtime-hooks-nri-backoff-factor", &o.runtime_hooks_nri_backoff_factor, 2,
              "nri server reconnect backoff factor (no effect).");
  f.addString("runtime-hooks-nri-socket-path", &o.runtime_hooks_nri_socket_path, "nri/nri.sock",
              "nri server socket path (no effect).");
  f.addString("runtime-hooks-nri-plugin-name", &o.runtime_hooks_nri_plugin_name, "nri/nri.sock",
              "nri plugin name of the koordlet runtime hooks (no effect).");
  f.addString("runtime-hooks-nri-plugin-index", &o.runtime_hooks_nri_plugin_index, "00",
              "nri plugin index of the koordlet runtime hooks (no effect).");
  f.addHelpSection("Environment", {"NODE_NAME (required)  the node this koordlet runs on",
                                   "agent_mode=hostMode  default the roots to host paths"});
}

void validate(const KoordletOptions& o) {
  auto positive = [](std::string_view name, auto v) {
    if (v <= decltype(v){})
      throw FlagError(fmt::format("-{} must be positive", name));
  };
  positive("kube-api-qps", o.kube_api_qps);
  positive("kube-api-burst", o.kube_api_burst);
  positive("collect-res-used-interval", o.collect_res_used_interval);
  positive("kubelet-sync-interval", o.kubelet_sync_interval);
  positive("reconcile-interval-seconds", o.reconcile_interval_seconds);
  positive("cpu-suppress-interval-seconds", o.cpu_suppress_interval_seconds);
  positive("cpu-evict-interval-seconds", o.cpu_evict_interval_seconds);
  positive("memory-evict-interval-seconds", o.memory_evict_interval_seconds);
  positive("runtime-hooks-reconcile-interval", o.runtime_hooks_reconcile_interval);
  if (o.cgroup_driver != "" && o.cgroup_driver != "cgroupfs" && o.cgroup_driver != "systemd") {
    throw FlagError(
        fmt::format("-cgroup-driver={:?}: must be cgroupfs or systemd", o.cgroup_driver));
  }
  if (o.runtime_hooks_network != "unix") {
    throw FlagError(fmt::format("-runtime-hooks-network={:?}: only unix is supported",
                                o.runtime_hooks_network));
  }
  for (const auto& stage : o.runtime_hooks_disable_stages) {
    if (std::find(koordletHookTypes().begin(), koordletHookTypes().end(), stage) ==
        koordletHookTypes().end())
      throw FlagError(fmt::format("-runtime-hooks-disable-stages: unknown hook type {:?}", stage));
  }
  if (o.runtime_hooks_failure_policy != "Ignore" && o.runtime_hooks_failure_policy != "Fail") {
    throw FlagError(fmt::format("-runtime-hooks-failure-policy={:?}: must be Ignore or Fail",
                                o.runtime_hooks_failure_policy));
  }
  if (o.default_runtime_type != "containerd" && o.default_runtime_type != "docker" &&
      o.default_runtime_type != "pouch") {
    throw FlagError(fmt::format("-default-runtime-type={:?}: must be containerd, docker or pouch",
                                o.default_runtime_type));
  }
  if (o.kubelet_read_only_port < 0 || o.kubelet_read_only_port > 65535) {
    throw FlagError("-kubelet-read-only-port: out of range");
  }
  if (o.kubelet_insecure_tls && o.kubelet_read_only_port == 0) {
    throw FlagError(
        "-kubelet-insecure-tls needs the kubelet's read-only port: "
        "-kubelet-read-only-port=0 leaves none");
  }
  if (o.runtime_hooks_plugin_failure_policy != "Ignore" &&
      o.runtime_hooks_plugin_failure_policy != "Fail") {
    throw FlagError(fmt::format("-runtime-hooks-plugin-failure-policy={:?}: must be Ignore or Fail",
                                o.runtime_hooks_plugin_failure_policy));
  }
  if (o.metric_cache_checkpoint_interval < milliseconds::zero())
    throw FlagError("-metric-cache-checkpoint-interval must not be negative");
  if (o.metric_cache_checkpoint_interval > milliseconds::zero() && o.tsdb_path.empty())
    throw FlagError(
        "-tsdb-path is empty: the metric cache checkpoint needs a directory "
        "(-metric-cache-checkpoint-interval=0 turns it off)");
  positive("prediction-cpu-histogram-decay-halflife", o.prediction_cpu_histogram_decay_halflife);
  positive("prediction-memory-histogram-decay-halflife",
           o.prediction_memory_histogram_decay_halflife);
  positive("prediction-training-interval", o.prediction_training_interval);
  positive("prediction-model-expiration-duration", o.prediction_model_expiration_duration);
  if (o.prediction_cold_start_duration < milliseconds::zero() ||
      o.prediction_model_checkpoint_interval < milliseconds::zero())
    throw FlagError(
        "-prediction-cold-start-duration and -prediction-model-checkpoint-interval must not be "
        "negative");
  if (o.prediction_safety_margin_percent < 0 || o.prediction_model_checkpoint_max_per_step < 0)
    throw FlagError(
        "-prediction-safety-margin-percent and -prediction-model-checkpoint-max-per-step must "
        "not be negative");
  if (o.prediction_checkpoint_filepath.empty())
    throw FlagError("-prediction-checkpoint-filepath must name a directory");
  if (o.node_name.empty()) {
    throw app::ConfigError("NODE_NAME is not set: the koordlet must know which node it runs on");
  }
}

}  // namespace koord::roles::koordlet
