// koordlet: the node agent that measures usage and protects LS pods from BE pods.
#include <cstdlib>
#include <string_view>
#include <thread>

#include "koord/apis/features.h"
#include "koord/app/role_app.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "koord/kube/event_recorder.h"
#include "koord/kube/kubeconfig.h"
#include "koord/kube/rest_client.h"
#include "koordlet_options.h"
#include "metriccache/metric_cache.h"
#include "metricsadvisor/resource_collector.h"
#include "metricsadvisor/usage_gauges.h"
#include "periodic_task.h"
#include "qosmanager/cpusuppress/cpu_suppress.h"
#include "qosmanager/qos_evictors.h"
#include "runtimehooks/batchresource/batch_resource.h"
#include "runtimehooks/coresched/kube_qos_cpu_idle.h"
#include "runtimehooks/hookserver/hook_server.h"
#include "statesinformer/node_device_reporter.h"
#include "statesinformer/node_metric_reporter.h"
#include "statesinformer/states_informer.h"

namespace koord::roles::koordlet {

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

kube::RestConfig restConfig(const KoordletOptions& o) {
  auto config = kube::resolveConfig(o.kubeconfig);
  if (!config)
    throw app::ConfigError("no API server configuration: " + config.error().message);
  config->qps = o.kube_api_qps;
  config->burst = o.kube_api_burst;
  config->user_agent = "koordlet";
  return std::move(*config);
}

// The kubelet makes kubepods at start; a koordlet started first waits for it (a minute at most)
// rather than guessing the driver and writing to the wrong tree.
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
    std::this_thread::sleep_for(seconds(2));
  }
}

}  // namespace

int roleMain(int argc, char** argv) {
  return app::runRole(argv[0], [&] {
    KoordletOptions o;
    FeatureGate gates(apis::koordletFeatures());
    FlagSet flags(argv[0]);
    const char* mode = std::getenv("agent_mode");
    registerFlags(flags, o, gates, mode != nullptr && std::string_view(mode) == "hostMode");
    if (app::parseOrHelp(flags, argc, argv))
      return 0;
    app::applyCommonOptions(o.common, &gates);
    if (const char* node = std::getenv("NODE_NAME"))
      o.node_name = node;
    validate(o);

    auto root = cgroupRoot(o);
    auto topology = cgroup::readCpuTopology(o.sys_root_dir);
    if (!topology)
      throw app::ConfigError("-sys-root-dir: " + topology.error().message);
    KOORD_LOG_INFO("koordlet: node {}, cgroup {} ({} driver) at {}, {} CPUs", o.node_name,
                   cgroup::cgroupVersionName(root.version), cgroup::cgroupDriverName(root.driver),
                   root.root.string(), topology->cpus.size());

    app::RoleApp role("koordlet");
    role.serveOps(o.addr);
    auto& io = role.reactor().context();
    kube::RestClient client(io, restConfig(o));
    kube::EventRecorder recorder(client, io, {"koordlet", o.node_name});
    cgroup::ResourceExecutor cgroups(root);

    // Node-level series keep the longest aggregate window (30 min); pod and container series
    // only what the reporter's window and the QoS strategies read, so 400 pods stay small.
    metriccache::MetricCacheOptions cache_options;
    cache_options.collect_interval = o.collect_res_used_interval;
    cache_options.series_expire = seconds(o.metric_expire_seconds);
    for (auto kind :
         {metriccache::MetricKind::kPodCPUUsage, metriccache::MetricKind::kPodMemoryUsage,
          metriccache::MetricKind::kContainerCPUUsage,
          metriccache::MetricKind::kContainerMemoryUsage})
      cache_options.retention_by_kind.emplace_back(kind, seconds(600));
    metriccache::MetricCache cache(cache_options);

    StatesInformerOptions so;
    so.node_name = o.node_name;
    so.kubelet_sync_interval = o.kubelet_sync_interval;
    so.kubelet_sync_timeout = o.kubelet_sync_timeout;
    so.kubelet_read_only_port = o.kubelet_read_only_port;
    so.kubelet_insecure_tls = o.kubelet_insecure_tls;
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
                                   client.config());
      if (!tls)
        throw app::ConfigError(tls.error().message);
      so.kubelet_tls = std::move(*tls);
      KOORD_LOG_INFO(
          "koordlet: pods from the kubelet over HTTPS, its certificate checked against {}",
          so.kubelet_tls.source);
    }
    so.kubelet_preferred_address_type = o.kubelet_preferred_address_type;
    StatesInformer states(client, io, so);

    UsageGauges gauges(role.metrics(), o.node_name);
    ResourceCollector collector(cgroups, o.proc_root_dir, cache);
    PeriodicTask collect(io, "metrics advisor", o.collect_res_used_interval, [&] {
      auto pods = states.pods();
      if (pods == nullptr)
        return;
      static const HostApplications kNoHostApps;
      auto slo = states.nodeSLO();
      collector.collect(*pods, slo ? slo->host_applications : kNoHostApps,
                        std::chrono::system_clock::now(), std::chrono::steady_clock::now());
      gauges.update(cache, *pods);
    });
    PeriodicTask gc(io, "metric cache gc", seconds(o.metric_gc_interval_seconds),
                    [&] { cache.collectGarbage(std::chrono::system_clock::now()); });

    std::unique_ptr<NodeMetricReporter> reporter;
    if (o.enable_node_metric_report)
      reporter = std::make_unique<NodeMetricReporter>(client, io, states, cache, role.metrics());

    // Accelerators (off by default, as in Koordinator): the node's Device object from the
    // device-daemon's report; its RDMA NICs only with RDMADevices too.
    std::unique_ptr<NodeDeviceReporter> device_reporter;
    if (gates.enabled("Accelerators")) {
      device_reporter = std::make_unique<NodeDeviceReporter>(
          client, io, states,
          NodeDeviceReporterOptions{
              .node_name = o.node_name,
              .device_infos_dir = o.xpu_device_infos_dir,
              .sync_interval = o.node_topology_sync_interval,
              .devices = {.rdma = gates.enabled("RDMADevices"),
                          .nvidia_driver_version_file =
                              std::filesystem::path(o.proc_root_dir) / "driver/nvidia/version"}},
          role.metrics());
    }

    // QoS strategies act only on synced state: a koordlet that cannot reach the API server
    // keeps its last decisions instead of acting on a guess.
    std::unique_ptr<qosmanager::CPUSuppress> suppress;
    std::unique_ptr<PeriodicTask> suppress_task;
    if (gates.enabled("BECPUSuppress")) {
      suppress = std::make_unique<qosmanager::CPUSuppress>(
          cache, cgroups, *topology, o.collect_res_used_interval, role.metrics());
      suppress_task = std::make_unique<PeriodicTask>(
          io, "cpu suppress", seconds(o.cpu_suppress_interval_seconds),
          [&] { suppress->runOnce(states.snapshot(), std::chrono::system_clock::now()); });
    }

    qosmanager::PodEvictor evictor(client, recorder, role.metrics(), o.node_name);
    // Eviction rounds wait for the API server to say which Eviction version it takes: a round
    // that ran on a guess would cool down after evictions the server refused.
    evictor.discoverEvictionVersion(io);
    qosmanager::QoSEvictors evictors(cache, evictor, o.collect_res_used_interval,
                                     seconds(o.memory_evict_cool_time_seconds),
                                     seconds(o.cpu_evict_cool_time_seconds));
    std::unique_ptr<PeriodicTask> memory_evict_task, cpu_evict_task;
    if (gates.enabled("BEMemoryEvict")) {
      memory_evict_task = std::make_unique<PeriodicTask>(
          io, "memory evict", seconds(o.memory_evict_interval_seconds), [&] {
            if (evictor.evictionVersion())
              evictors.memoryEvictOnce(states.snapshot(), std::chrono::system_clock::now());
          });
    }
    if (gates.enabled("BECPUEvict")) {
      cpu_evict_task = std::make_unique<PeriodicTask>(
          io, "cpu evict", seconds(o.cpu_evict_interval_seconds), [&] {
            if (evictor.evictionVersion())
              evictors.cpuEvictOnce(states.snapshot(), std::chrono::system_clock::now());
          });
    }

    // Runtime hooks in reconcile mode: BatchResource every reconcile interval and on pod changes.
    std::map<std::string, std::string> batch_errors;  // pod uid -> last error logged
    auto reconcile_batch = [&] {
      auto pods = states.pods();
      if (pods == nullptr || !states.hasSynced())
        return;
      for (const auto& pod : *pods) {
        if (!pod.isRunning())
          continue;
        auto plan = planBatchResource(pod);
        if (!plan)
          continue;
        auto stats = applyBatchResource(cgroups, pod, *plan);
        auto& last = batch_errors[pod.uid];
        auto now_error = stats.errors.empty() ? std::string() : stats.errors.front();
        if (!now_error.empty() && now_error != last)
          KOORD_LOG_WARNING("batch resource: pod {}: {}", pod.key(), now_error);
        last = now_error;
      }
    };
    std::unique_ptr<PeriodicTask> batch_task;
    if (gates.enabled("BatchResource")) {
      batch_task = std::make_unique<PeriodicTask>(
          io, "batch resource", o.runtime_hooks_reconcile_interval, reconcile_batch);
      states.onPodsChanged([&] { reconcile_batch(); });
    }

    // Runtime hooks in proxy mode: koord runtime-proxy asks before a container is created, so a
    // BE container starts with its batch cgroup values. Without the server (its socket's
    // directory missing, say) the reconcile above still applies them, a little later.
    std::unique_ptr<HookServer> hook_server;
    const RuntimeHookPlugins hook_plugins{
        .batch_resource = gates.enabled("BatchResource"),
        .cpuset = gates.enabled("CPUSetAllocator"),
        .oom_score_adj = gates.enabled("OOMScoreAdj"),
        .cgroups = &cgroups,
    };
    if (hook_plugins.batch_resource || hook_plugins.cpuset || hook_plugins.oom_score_adj) {
      hook_server = std::make_unique<HookServer>(HookServerOptions{
          .addr = o.runtime_hooks_addr,
          .host_endpoint = o.runtime_hooks_host_endpoint,
          .failure_policy = o.runtime_hooks_failure_policy,
          .config_path = o.runtime_hooks_config_path,
          .disable_stages = o.runtime_hooks_disable_stages,
          .plugins = hook_plugins,
      });
      try {
        hook_server->start();
      } catch (const std::exception& e) {
        KOORD_LOG_ERROR("runtime hooks: not serving runtime-proxy: {}", e.what());
        hook_server.reset();
      }
    }

    // CoreSched's QoS-level part: cpu.idle on the QoS tiers, from the NodeSLO. Only once synced,
    // and a NodeSLO this koordlet cannot read leaves the last values in place.
    std::string cpu_idle_error;
    auto reconcile_cpu_idle = [&] {
      auto snapshot = states.snapshot();
      if (!snapshot.synced || snapshot.node_slo == nullptr)
        return;
      auto rule = decodeKubeQOSCPUIdle(snapshot.node_slo->resource_qos_strategy.get());
      std::string now_error;
      if (!rule) {
        now_error = "NodeSLO " + snapshot.node_slo->name + ": " + rule.error().message;
      } else if (*rule) {
        auto stats = applyKubeQOSCPUIdle(cgroups, **rule);
        if (stats.unsupported)
          now_error = "the kernel has no cpu.idle (Linux 5.15+); nothing written";
        else if (!stats.errors.empty())
          now_error = stats.errors.front();
      }
      if (!now_error.empty() && now_error != cpu_idle_error)
        KOORD_LOG_WARNING("core sched: {}", now_error);
      cpu_idle_error = now_error;
    };
    std::unique_ptr<PeriodicTask> cpu_idle_task;
    if (gates.enabled("CoreSched")) {
      cpu_idle_task = std::make_unique<PeriodicTask>(
          io, "core sched cpu.idle", o.runtime_hooks_reconcile_interval, reconcile_cpu_idle);
    }

    PeriodicTask readiness(io, "readiness", milliseconds(500), [&] {
      role.health().setReady(states.hasSynced(), "node and pods not synced yet");
    });
    role.health().setReady(false, "node and pods not synced yet");

    states.start();
    collect.start();
    gc.start(seconds(o.metric_gc_interval_seconds));
    if (reporter)
      reporter->start();
    if (device_reporter)
      device_reporter->start();
    if (suppress_task)
      suppress_task->start(seconds(o.cpu_suppress_interval_seconds));
    if (memory_evict_task)
      memory_evict_task->start(seconds(o.memory_evict_interval_seconds));
    if (cpu_evict_task)
      cpu_evict_task->start(seconds(o.cpu_evict_interval_seconds));
    if (batch_task)
      batch_task->start();
    if (cpu_idle_task)
      cpu_idle_task->start();
    readiness.start();
    role.reactor().onShutdown([&] {
      readiness.stop();
      collect.stop();
      gc.stop();
      if (reporter)
        reporter->stop();
      if (device_reporter)
        device_reporter->stop();
      if (suppress_task)
        suppress_task->stop();
      if (memory_evict_task)
        memory_evict_task->stop();
      if (cpu_evict_task)
        cpu_evict_task->stop();
      if (batch_task)
        batch_task->stop();
      if (cpu_idle_task)
        cpu_idle_task->stop();
      states.stop();
      evictor.stop();
      client.httpClient().closeIdleConnections();
    });
    app::warnGatesWithoutEffect(gates, "koordlet");
    return role.run();
  });
}

}  // namespace koord::roles::koordlet
