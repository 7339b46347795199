// The koordlet's command line (Go flag style, -name=value) with Koordinator's names and
// defaults, including the agent_mode=hostMode defaults, and the NODE_NAME it runs for.
#pragma once

#include <chrono>
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
};

/// `host_mode`: Koordinator's agent_mode=hostMode, where roots default to the host's own paths
/// instead of the DaemonSet's /host-* mounts.
void registerFlags(FlagSet& flags, KoordletOptions& o, const FeatureGate& gates, bool host_mode);
/// Throws FlagError for out-of-range or unknown values, ConfigError for a missing NODE_NAME.
void validate(const KoordletOptions& o);

}  // namespace koord::roles::koordlet
