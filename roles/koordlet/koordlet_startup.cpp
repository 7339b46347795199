#include "koordlet_startup.h"

#include <thread>
#include <utility>

#include "koord/cgroup/cgroup_version.h"
#include "koord/core/flags.h"
#include "koord/core/log.h"

namespace koord::roles::koordlet {

cgroup::CgroupRoot cgroupRoot(const KoordletOptions& o) {
  cgroup::CgroupRoot root;
  root.root = o.cgroup_root_dir;
  auto version = cgroup::detectCgroupVersion(root.root);
  if (!version)
    throw app::ConfigError("-cgroup-root-dir: " + version.error().message);
  root.version = *version;
  if (!o.cgroup_driver.empty()) {
    root.driver = cgroup::parseCgroupDriver(o.cgroup_driver).value();
    return root;
  }
  for (int attempt = 0;; ++attempt) {
    auto driver = cgroup::detectCgroupDriver(root.root, root.version);
    if (driver) {
      root.driver = *driver;
      return root;
    }
    if (attempt == 0)
      KOORD_LOG_WARNING("koordlet: {}; waiting for the kubelet", driver.error().message);
    if (attempt >= 30)
      throw app::ConfigError(driver.error().message);
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
}

cgroup::CpuTopology cpuTopology(const KoordletOptions& o) {
  auto topology = cgroup::readCpuTopology(o.sys_root_dir);
  if (!topology)
    throw app::ConfigError("-sys-root-dir: " + topology.error().message);
  return std::move(*topology);
}

StatesInformerOptions statesInformerOptions(const KoordletOptions& o, const FlagSet& flags,
                                            const kube::RestConfig& api_server) {
  StatesInformerOptions so;
  so.node_name = o.node_name;
  so.kubelet_sync_interval = o.kubelet_sync_interval;
  so.kubelet_sync_timeout = o.kubelet_sync_timeout;
  so.kubelet_read_only_port = o.kubelet_read_only_port;
  so.kubelet_insecure_tls = o.kubelet_insecure_tls;
  so.query_kubelet_config = !o.disable_query_kubelet_config;
  if (o.kubelet_insecure_tls && so.query_kubelet_config)
    KOORD_LOG_WARNING(
        "koordlet: -kubelet-insecure-tls: the kubelet's /configz is not served on its read-only "
        "port: the NodeResourceTopology reports no kubelet CPU manager policy, as with "
        "-disable-query-kubelet-config");
  if (o.kubelet_insecure_tls) {
    KOORD_LOG_WARNING(
        "koordlet: -kubelet-insecure-tls: pods from the kubelet's read-only port {} over plain "
        "HTTP, nothing authenticated or verified",
        o.kubelet_read_only_port);
    for (const char* name : {"kubelet-ca-file", "kubelet-config-file"}) {
      if (flags.changed(name))
        KOORD_LOG_WARNING("koordlet: -{} has no effect with -kubelet-insecure-tls", name);
    }
  } else {
    if (flags.changed("kubelet-read-only-port"))
      KOORD_LOG_WARNING(
          "koordlet: -kubelet-read-only-port has no effect without -kubelet-insecure-tls");
    auto tls = resolveKubeletTls(o.kubelet_ca_file, o.kubelet_config_file, o.var_lib_kubelet_dir,
                                 api_server);
    if (!tls)
      throw app::ConfigError(tls.error().message);
    so.kubelet_tls = std::move(*tls);
    KOORD_LOG_INFO("koordlet: pods from the kubelet over HTTPS, its certificate checked against {}",
                   so.kubelet_tls.source);
  }
  so.kubelet_preferred_address_type = o.kubelet_preferred_address_type;
  return so;
}

}  // namespace koord::roles::koordlet
