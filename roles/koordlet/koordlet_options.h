// The koordlet's command line (Go flag style, -name=value) with Koordinator's names and
// defaults, including the agent_mode=hostMode defaults, and the NODE_NAME it runs for.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "koord/app/role_app.h"

namespace koord::roles::koordlet {

using std::chrono::milliseconds;

struct KoordletOptions {
  app::CommonOptions common;
  std::string node_name;  // env NODE_NAME
  std::string kubeconfig;
  std::string addr = ":9316";
  double kube_api_qps = 20;
  int kube_api_burst = 30;
  std::string configmap_name = "koordlet-config";
  std::string configmap_namespace = "koordinator-system";

  // System roots (pkg/koordlet/util/system/config.go).
  std::string cgroup_root_dir;
  std::string sys_root_dir;
  std::string sys_fs_root_dir;
  std::string proc_root_dir = "/proc/";
  std::string var_run_root_dir;
  std::string run_root_dir;
  std::string var_lib_kubelet_dir = "/var/lib/kubelet/";
  std::string cgroup_driver;  // "" detects; cgroupfs | systemd
  std::string containerd_endpoint, docker_endpoint, pouch_endpoint;
  std::string default_runtime_type = "containerd";
  std::string xpu_device_infos_dir = "/var/run/koordlet/xpu-device-infos/";

  // States informer.
  std::string kubelet_preferred_address_type = "InternalIP";
  milliseconds kubelet_sync_interval{10000};
  milliseconds kubelet_sync_timeout{3000};
  bool kubelet_insecure_tls = false;
  int kubelet_read_only_port = 10255;
  // koord's own: how the kubelet's serving certificate is checked (statesinformer/kubelet_stub.h).
  std::string kubelet_ca_file;
  std::string kubelet_config_file = "/var/lib/kubelet/config.yaml";
  milliseconds node_topology_sync_interval{3000};
  bool disable_query_kubelet_config = false;
  bool enable_node_metric_report = true;

  // Metrics advisor and cache.
  milliseconds collect_res_used_interval{1000};
  milliseconds collect_sys_metric_outdated_interval{10000};
  milliseconds collect_node_cpu_info_interval{60000};
  milliseconds psi_collector_interval{10000};
  milliseconds cpi_collector_interval{60000};
  milliseconds coldpage_collector_interval{5000};
  bool enable_pagecache_collector = false;
  bool enable_resctrl_collector = false;
  int metric_gc_interval_seconds = 300;
  int metric_expire_seconds = 1800;

  // QoS manager.
  int reconcile_interval_seconds = 1;
  int cpu_suppress_interval_seconds = 1;
  int cpu_evict_interval_seconds = 1;
  int memory_evict_interval_seconds = 1;
  int memory_evict_cool_time_seconds = 4;
  int cpu_evict_cool_time_seconds = 20;
  bool only_evict_by_api = false;
  int resource_force_update_seconds = 60;

  // Runtime hooks.
  std::string runtime_hooks_network = "unix";
  std::string runtime_hooks_addr = "/host-var-run-koordlet/koordlet.sock";
  std::string runtime_hooks_failure_policy = "Ignore";
  std::string runtime_hooks_config_path;
  std::string runtime_hooks_host_endpoint = "/var/run/koordlet/koordlet.sock";
  std::vector<std::string> runtime_hooks_disable_stages;
  bool enable_nri_runtime_hook = true;
  milliseconds runtime_hooks_reconcile_interval{10000};

  // The metric cache's checkpoint (metriccache/metric_cache_checkpoint.h) in Koordinator's TSDB
  // directory, restored within its retention; the interval is koord's own (0: no checkpoint).
  std::string tsdb_path = "/metric-data/";
  milliseconds tsdb_retention_duration{12 * 3600 * 1000};
  milliseconds metric_cache_checkpoint_interval{60000};
  // CPI collector's measuring window.
  milliseconds collect_cpi_timewindow{10000};

  // Audit (audit/auditor.h), with the AuditEvents gate.
  std::string audit_log_dir = "/var/log/koordlet";
  int audit_verbose = 3;
  int audit_max_disk_space_mb = 16;
  int audit_max_concurrent_readers = 4;
  int audit_max_events_limit = 2048;

  // Peak prediction (prediction/): the models behind the NodeMetric's prodReclaimableMetric.
  std::string prediction_checkpoint_filepath = "/prediction-checkpoints";
  milliseconds prediction_cold_start_duration{24 * 3600 * 1000};
  int prediction_safety_margin_percent = 10;
  milliseconds prediction_memory_histogram_decay_halflife{24 * 3600 * 1000};
  milliseconds prediction_cpu_histogram_decay_halflife{12 * 3600 * 1000};
  milliseconds prediction_training_interval{60000};
  milliseconds prediction_model_expiration_duration{30 * 60 * 1000};
  milliseconds prediction_model_checkpoint_interval{10 * 60 * 1000};
  int prediction_model_checkpoint_max_per_step = 12;

  // Accepted with Koordinator's defaults; no effect here (koordlet_inert_flags.cpp says why).
  bool enable_pprof = false;
  std::string pprof_addr = ":9317";
  milliseconds report_interval{0};
  milliseconds collect_node_storage_info_interval{1000};
  bool tsdb_enable_prometheus_metric = true;
  int tsdb_stripe_size = 1 << 14;
  std::int64_t tsdb_max_bytes = std::int64_t{100} << 20;
  int tsdb_wal_segment_size = 1 << 20;
  std::int64_t tsdb_max_block_chunk_segment_size = std::int64_t{5} << 20;
  milliseconds tsdb_min_block_duration{600000};
  milliseconds tsdb_max_block_duration{600000};
  int tsdb_head_chunks_write_buffer_size = 1 << 20;
  std::string runtime_hooks_plugin_failure_policy = "Ignore";
  milliseconds runtime_hooks_nri_connect_timeout{6000};
  milliseconds runtime_hooks_nri_backoff_duration{1000};
  milliseconds runtime_hooks_nri_backoff_cap{((std::int64_t{1} << 62) - 1) / 1000000};
  int runtime_hooks_nri_backoff_steps = 2147483647;
  double runtime_hooks_nri_backoff_factor = 2;
  std::string runtime_hooks_nri_socket_path = "nri/nri.sock";
  // Koordinator registers this flag with the socket path as its default.
  std::string runtime_hooks_nri_plugin_name = "nri/nri.sock";
  std::string runtime_hooks_nri_plugin_index = "00";
};

/// `host_mode`: Koordinator's agent_mode=hostMode, where roots default to the host's own paths
/// instead of the DaemonSet's /host-* mounts.
void registerFlags(FlagSet& flags, KoordletOptions& o, const FeatureGate& gates, bool host_mode);
/// Throws FlagError for out-of-range or unknown values, ConfigError for a missing NODE_NAME.
void validate(const KoordletOptions& o);

}  // namespace koord::roles::koordlet
