#include "koordlet.h"

#include <malloc.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <utility>

#include "koord/app/role_app.h"
#include "koord/core/feature_gate.h"
#include "koord/core/flags.h"
#include "koord/core/log.h"
#include "koord/kube/event_recorder.h"
#include "koord/kube/rest_client.h"
#include "koordlet_options.h"
#include "koordlet_startup.h"
#include "metriccache/metric_cache.h"
#include "metriccache/metric_cache_checkpoint.h"
#include "metricsadvisor/metrics_advisor.h"
#include "metricsadvisor/resource_collector.h"
#include "metricsadvisor/usage_gauges.h"
#include "periodic_task.h"
#include "prediction/peak_predict_server.h"
#include "prediction/prediction_runner.h"
#include "qosmanager/evict/pod_evictor.h"
#include "qosmanager/qos_manager.h"
#include "runtimehooks/cpuset/cpuset_rule_store.h"
#include "runtimehooks/runtime_hooks.h"
#include "statesinformer/node_device_reporter.h"
#include "statesinformer/node_metric_reporter.h"
#include "statesinformer/node_topology_reporter.h"
#include "statesinformer/states_informer.h"

namespace koord::roles::koordlet {

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Node-level series keep the longest aggregate window (30 min); pod and container series only
// what the reporter's window and the QoS strategies read, so 400 pods stay small.
metriccache::MetricCacheOptions metricCacheOptions(const KoordletOptions& o) {
  metriccache::MetricCacheOptions cache_options;
  cache_options.collect_interval = o.collect_res_used_interval;
  cache_options.series_expire = seconds(o.metric_expire_seconds);
  using metriccache::MetricKind;
  for (auto kind :
       {MetricKind::kPodCPUUsage, MetricKind::kPodMemoryUsage, MetricKind::kContainerCPUUsage,
        MetricKind::kContainerMemoryUsage, MetricKind::kPodMemoryWithPageCacheUsage,
        MetricKind::kContainerMemoryWithPageCacheUsage})
    cache_options.retention_by_kind.emplace_back(kind, seconds(600));
  // Interference signals are read over the last few rounds only (CPU burst looks two intervals
  // back): a short window keeps 400 pods' worth of them small.
  for (auto kind : {MetricKind::kPodCPUThrottled,        MetricKind::kContainerCPUThrottled,
                    MetricKind::kContainerCPICycles,     MetricKind::kContainerCPIInstructions,
                    MetricKind::kPodPSICPUSome,          MetricKind::kPodPSICPUFull,
                    MetricKind::kPodPSIMemSome,          MetricKind::kPodPSIMemFull,
                    MetricKind::kPodPSIIOSome,           MetricKind::kPodPSIIOFull,
                    MetricKind::kPodPSICPUFullSupported, MetricKind::kContainerPSICPUSome,
                    MetricKind::kContainerPSICPUFull,    MetricKind::kContainerPSIMemSome,
                    MetricKind::kContainerPSIMemFull,    MetricKind::kContainerPSIIOSome,
                    MetricKind::kContainerPSIIOFull,     MetricKind::kContainerPSICPUFullSupported,
                    MetricKind::kNodePSICPUSome,         MetricKind::kNodePSICPUFull,
                    MetricKind::kNodePSIMemSome,         MetricKind::kNodePSIMemFull,
                    MetricKind::kNodePSIIOSome,          MetricKind::kNodePSIIOFull,
                    MetricKind::kNodePSICPUFullSupported})
    cache_options.retention_by_kind.emplace_back(kind, seconds(120));
  return cache_options;
}

// Koordinator's prediction-* flags.
prediction::PredictionConfig predictionConfig(const KoordletOptions& o) {
  prediction::PredictionConfig c;
  c.checkpoint_dir = o.prediction_checkpoint_filepath;
  c.cold_start = o.prediction_cold_start_duration;
  c.safety_margin_percent = o.prediction_safety_margin_percent;
  c.memory_half_life = o.prediction_memory_histogram_decay_halflife;
  c.cpu_half_life = o.prediction_cpu_histogram_decay_halflife;
  c.training_interval = o.prediction_training_interval;
  c.model_expiration = o.prediction_model_expiration_duration;
  c.checkpoint_interval = o.prediction_model_checkpoint_interval;
  c.checkpoint_max_per_step = o.prediction_model_checkpoint_max_per_step;
  return c;
}

// Accelerators (off by default, as in Koordinator): the node's Device object from the
// device-daemon's report; its RDMA NICs only with RDMADevices too.
std::unique_ptr<NodeDeviceReporter> deviceReporter(kube::RestClient& client,
                                                   boost::asio::io_context& io,
                                                   StatesInformer& states, const KoordletOptions& o,
                                                   const FeatureGate& gates,
                                                   metrics::Registry& registry) {
  if (!gates.enabled("Accelerators"))
    return nullptr;
  return std::make_unique<NodeDeviceReporter>(
      client, io, states,
      NodeDeviceReporterOptions{
          .node_name = o.node_name,
          .device_infos_dir = o.xpu_device_infos_dir,
          .sync_interval = o.node_topology_sync_interval,
          .devices = {.rdma = gates.enabled("RDMADevices"),
                      .nvidia_driver_version_file =
                          std::filesystem::path(o.proc_root_dir) / "driver/nvidia/version"}},
      registry);
}

// NodeTopologyReport (on by default): the node's NodeResourceTopology for NUMA-aware scheduling,
// with the kubelet's CPU manager and topology policies from its /configz (the states informer
// reads it) unless -disable-query-kubelet-config.
std::unique_ptr<NodeTopologyReporter> topologyReporter(
    kube::RestClient& client, boost::asio::io_context& io, StatesInformer& states,
    const cgroup::CpuTopology& topology, const KoordletOptions& o, const FeatureGate& gates,
    metrics::Registry& registry) {
  if (!gates.enabled("NodeTopologyReport"))
    return nullptr;
  NodeTopologyReporterOptions options;
  options.node_name = o.node_name;
  options.sys_root = o.sys_root_dir;
  options.proc_root = o.proc_root_dir;
  options.sys_fs_root = o.sys_fs_root_dir;
  options.var_lib_kubelet_dir = o.var_lib_kubelet_dir;
  options.sync_interval = o.node_topology_sync_interval;
  options.hugepages = gates.enabled("HugePageReport");
  return std::make_unique<NodeTopologyReporter>(
      client, io, [&states] { return states.snapshot(); }, topology, std::move(options), registry);
}

// CPUSetAllocator: every pod reconciled as soon as the store holds a new rule. By generation,
// since the hook server may have read the new NodeResourceTopology first.
std::function<void()> cpusetRuleWatch(RuntimeHooks& hooks) {
  return [&hooks, applied = std::uint64_t{0}]() mutable {
    CPUSetRuleStore& store = cpusetRuleStore();
    store.refresh();
    if (store.generation() != applied) {
      applied = store.generation();
      hooks.reconcileNow("CPUSetAllocator");
    }
  };
}

}  // namespace

struct Koordlet::Impl {
  Impl(app::RoleApp& role_in, const KoordletOptions& options, const FeatureGate& gates,
       const FlagSet& flags, KoordletEnvironment env);

  app::RoleApp& role;
  const KoordletOptions o;
  const cgroup::CpuTopology topology;
  boost::asio::io_context& io;
  kube::RestClient client;
  kube::EventRecorder recorder;
  cgroup::ResourceExecutor cgroups;
  metriccache::MetricCache cache;
  StatesInformer states;
  UsageGauges gauges;
  ResourceCollector collector;
  PeriodicTask collect;
  // The gated collectors (PSI, CPI, throttling, page cache, resctrl), each on its own loop.
  metricsadvisor::MetricsAdvisor advisor;
  PeriodicTask gc;
  // Hands the heap's free pages back to the kernel now and then: the big transient buffers of a
  // NodeMetric report or a pod list leave free pages between live blocks, which glibc only
  // returns from the heap's top. See boundHeapRetention in koordlet_main.cpp.
  PeriodicTask heap_trim;
  // Null with -metric-cache-checkpoint-interval=0; after the cache its thread reads.
  std::unique_ptr<metriccache::CheckpointWriter> checkpoint;
  // Peak prediction for the NodeMetric's prodReclaimableMetric, on a thread of its own.
  prediction::PeakPredictServer predictor;
  prediction::PredictionRunner prediction_runner;
  std::unique_ptr<NodeMetricReporter> reporter;
  std::unique_ptr<NodeDeviceReporter> device_reporter;
  std::unique_ptr<NodeTopologyReporter> topology_reporter;
  qosmanager::PodEvictor evictor;
  qosmanager::QoSManager qos;
  RuntimeHooks hooks;
  PeriodicTask readiness;
  // CPUSetAllocator's pools from the NodeResourceTopology reported (NodeTopologyReport on), and
  // the poll that reconciles every pod when they change.
  std::unique_ptr<CPUSetRuleSourceScope> cpuset_rule_source;
  std::unique_ptr<PeriodicTask> cpuset_rule_watch;
};

Koordlet::Impl::Impl(app::RoleApp& role_in, const KoordletOptions& options,
                     const FeatureGate& gates, const FlagSet& flags, KoordletEnvironment env)
    : role(role_in),
      o(options),
      topology(std::move(env.topology)),
      io(role.reactor().context()),
      client(io, std::move(env.api_server)),
      recorder(client, io, {"koordlet", o.node_name}),
      cgroups(env.cgroup_root),
      cache(metricCacheOptions(o)),
      states(client, io, statesInformerOptions(o, flags, client.config())),
      gauges(role.metrics(), o.node_name),
      collector(cgroups, o.proc_root_dir, cache),
      collect(io, "metrics advisor", o.collect_res_used_interval,
              [this] {
                auto pods = states.pods();
                if (pods == nullptr)
                  return;
                static const HostApplications kNoHostApps;
                auto slo = states.nodeSLO();
                collector.collect(*pods, slo ? slo->host_applications : kNoHostApps,
                                  std::chrono::system_clock::now(),
                                  std::chrono::steady_clock::now());
                gauges.update(cache, pods);
                if (auto node = states.node())
                  gauges.updateAllocatable(*node);
              }),
      advisor(
          io, [this] { return states.snapshot(); }, gates,
          metricsadvisor::CollectorContext{
              .cgroups = cgroups, .cache = cache, .metrics = role.metrics(), .options = o}),
      gc(io, "metric cache gc", seconds(o.metric_gc_interval_seconds),
         [this] { cache.collectGarbage(std::chrono::system_clock::now()); }),
      heap_trim(io, "heap trim", seconds(30), [] { malloc_trim(0); }),
      predictor(predictionConfig(o)),
      prediction_runner(predictor, cache, [this] { return states.snapshot(); }),
      reporter(o.enable_node_metric_report
                   ? std::make_unique<NodeMetricReporter>(client, io, states, cache, role.metrics(),
                                                          &predictor)
                   : nullptr),
      device_reporter(deviceReporter(client, io, states, o, gates, role.metrics())),
      topology_reporter(topologyReporter(client, io, states, topology, o, gates, role.metrics())),
      evictor(client, recorder, role.metrics(), o.node_name),
      // QoS strategies act only on synced state: a koordlet that cannot reach the API server
      // keeps its last decisions instead of acting on a guess.
      qos(
          io, [this] { return states.snapshot(); }, gates,
          qosmanager::StrategyContext{.cache = cache,
                                      .cgroups = cgroups,
                                      .topology = topology,
                                      .evictor = evictor,
                                      .options = o,
                                      .metrics = role.metrics()}),
      hooks(io, states, cgroups, gates, o),
      readiness(io, "readiness", milliseconds(500), [this] {
        role.health().setReady(states.hasSynced(), "node and pods not synced yet");
      }) {
  // The cache's windows survive a restart: restored before any collector runs.
  if (o.metric_cache_checkpoint_interval > milliseconds::zero()) {
    metriccache::restoreCheckpointFile(
        cache, o.tsdb_path,
        {.now = std::chrono::system_clock::now(), .max_age = o.tsdb_retention_duration});
    checkpoint = std::make_unique<metriccache::CheckpointWriter>(
        cache, o.tsdb_path, o.metric_cache_checkpoint_interval);
  } else {
    for (const char* name : {"tsdb-path", "tsdb-retention-duration"}) {
      if (flags.changed(name))
        KOORD_LOG_WARNING("koordlet: -{} has no effect with -metric-cache-checkpoint-interval=0",
                          name);
    }
  }
  // Eviction rounds wait for the API server to say which Eviction version it takes: a round
  // that ran on a guess would cool down after evictions the server refused.
  evictor.discoverEvictionVersion(io);
  // Runtime hooks in proxy mode: koord runtime-proxy asks before a container is created, so a
  // BE container starts with its batch cgroup values. Without the server (its socket's
  // directory missing, say) the reconcilers still apply them, a little later.
  hooks.serve();
  if (topology_reporter)
    states.onPodsChanged(topology_reporter->podsChangedHandler());
  if (topology_reporter && gates.enabled("CPUSetAllocator")) {
    cpuset_rule_source = std::make_unique<CPUSetRuleSourceScope>(
        cpusetRuleStore(),
        [reporter = topology_reporter.get()]() -> std::shared_ptr<const kube::Labels> {
          auto status = reporter->reported();
          if (status == nullptr)
            return nullptr;
          return std::shared_ptr<const kube::Labels>(status, &status->annotations);
        },
        gates.enabled("BECPUManager"));
    cpuset_rule_watch = std::make_unique<PeriodicTask>(
        io, "cpuset rule", o.node_topology_sync_interval, cpusetRuleWatch(hooks));
  }
  role.health().setReady(false, "node and pods not synced yet");
}

Koordlet::Koordlet(app::RoleApp& role, const KoordletOptions& options, const FeatureGate& gates,
                   const FlagSet& flags, KoordletEnvironment environment)
    : impl_(std::make_unique<Impl>(role, options, gates, flags, std::move(environment))) {}

Koordlet::~Koordlet() = default;

void Koordlet::start() {
  auto& m = *impl_;
  m.states.start();
  m.collect.start();
  m.advisor.start();
  m.gc.start(seconds(m.o.metric_gc_interval_seconds));
  m.heap_trim.start(seconds(30));
  if (m.checkpoint)
    m.checkpoint->start();
  m.prediction_runner.start();
  if (m.reporter)
    m.reporter->start();
  if (m.device_reporter)
    m.device_reporter->start();
  if (m.topology_reporter)
    m.topology_reporter->start();
  m.qos.start();
  m.hooks.start();
  if (m.cpuset_rule_watch)
    m.cpuset_rule_watch->start();
  m.readiness.start();
}

void Koordlet::stop() {
  auto& m = *impl_;
  m.readiness.stop();
  m.collect.stop();
  m.advisor.stop();
  m.gc.stop();
  m.heap_trim.stop();
  // After the collector, so the last checkpoint holds its last samples.
  if (m.checkpoint)
    m.checkpoint->stop();
  m.prediction_runner.stop();
  if (m.reporter)
    m.reporter->stop();
  if (m.device_reporter)
    m.device_reporter->stop();
  if (m.topology_reporter)
    m.topology_reporter->stop();
  m.qos.stop();
  if (m.cpuset_rule_watch)
    m.cpuset_rule_watch->stop();
  m.hooks.stop();
  m.states.stop();
  m.evictor.stop();
  m.client.httpClient().closeIdleConnections();
}

}  // namespace koord::roles::koordlet
