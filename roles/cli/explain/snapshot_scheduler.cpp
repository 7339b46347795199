#include "explain/snapshot_scheduler.h"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <map>
#include <stdexcept>
#include <unordered_map>

#include "framework/plugin_registry.h"
#include "framework/reservation_info.h"
#include "koord/apis/input_limits.h"
#include "koord/core/metrics.h"
#include "plugins/loadaware/load_aware.h"
#include "plugins/loadaware/register.h"
#include "scheduler_api.h"
#include "snapshot/object_fields.h"

namespace koord::roles::cli {
namespace json = boost::json;
using namespace koord::roles::scheduler;

namespace {

constexpr std::string_view kConfigMapName = "koord-scheduler-config";

// The API a scheduler over a recording has: objects from the snapshot, and writes that go
// nowhere (explain never binds; the answer each call expects is success).
class SnapshotApi final : public SchedulerApi {
 public:
  const AnyObjectSource* objectSource(std::string_view key) const override {
    auto it = sources.find(std::string(key));
    return it == sources.end() ? nullptr : &it->second->source();
  }
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override {
    auto it = pods.find(key);
    return it == pods.end() ? nullptr : it->second;
  }
  void reportScheduled(const PodInfo&, const std::string&, const std::string&) override {}
  void reportFailure(const PodInfo&, const std::string&, std::string_view, const std::string&,
                     const std::string&) override {}
  void bindPod(std::shared_ptr<const PodInfo>, const std::string&,
               ApiCallback done) const override {
    done({});
  }
  void patchPod(std::shared_ptr<const PodInfo>, json::value, ApiCallback done) const override {
    done({});
  }
  void mergePatch(const kube::ResourceRef&, json::value, ApiCallback done) const override {
    done({});
  }
  std::shared_ptr<const ReservationState> currentReservation(
      const std::string& name) const override {
    auto it = reservation_map.find(name);
    return it == reservation_map.end() ? nullptr : it->second;
  }
  std::vector<std::shared_ptr<const ReservationState>> reservations() const override {
    std::vector<std::shared_ptr<const ReservationState>> out;
    for (const auto& [name, r] : reservation_map)
      out.push_back(r);
    return out;
  }

  std::map<std::string, std::unique_ptr<ObjectInformer>> sources;
  std::unordered_map<std::string, std::shared_ptr<const PodInfo>> pods;
  std::map<std::string, std::shared_ptr<const ReservationState>> reservation_map;
};

// The snapshot's objects of the kind an ObjectDeclaration lists (by group and resource).
const std::vector<json::value>& itemsFor(const ClusterSnapshot& snapshot,
                                         const ObjectDeclaration& d) {
  static const std::vector<json::value> kNone;
  for (const SnapshotKind& kind : snapshotKinds()) {
    const std::string_view api_version = kind.api_version;
    const auto slash = api_version.find('/');
    const std::string_view group =
        slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
    if (group == d.group && kind.resource == d.resource)
      return snapshot.of(kind.kind);
  }
  return kNone;
}

config::SchedulerConfig loadConfig(const ClusterSnapshot& snapshot,
                                   const SnapshotSchedulerOptions& options,
                                   const PluginRegistry& registry, std::string& source) {
  if (!options.config_file.empty()) {
    source = options.config_file;
    auto config = config::loadSchedulerConfig(options.config_file, registry);
    if (!config)
      throw std::runtime_error(config.error().message);
    return std::move(*config);
  }
  source = fmt::format("ConfigMap {}/{}", options.koord_namespace, kConfigMapName);
  for (const auto& cm : snapshot.of("ConfigMap")) {
    if (metaString(cm, "namespace") != options.koord_namespace ||
        metaString(cm, "name") != kConfigMapName)
      continue;
    const json::value* data = cm.get_object().if_contains("data");
    const json::value* text =
        data && data->is_object() ? data->get_object().if_contains(kConfigMapName) : nullptr;
    if (text == nullptr || !text->is_string())
      throw std::runtime_error(fmt::format("{}: no data.{}", source, kConfigMapName));
    // A hand-edited snapshot is not held to the API server's size for a ConfigMap.
    if (text->get_string().size() > apis::kMaxConfigMapValueBytes) {
      throw std::runtime_error(fmt::format("{}: data.{} holds {} bytes, more than the {} allowed",
                                           source, kConfigMapName, text->get_string().size(),
                                           apis::kMaxConfigMapValueBytes));
    }
    auto config = config::parseSchedulerConfigText(text->get_string(), registry);
    if (!config)
      throw std::runtime_error(fmt::format("{}: {}", source, config.error().message));
    return std::move(*config);
  }
  throw std::runtime_error(fmt::format(
      "the snapshot has no {}; give the configuration with --scheduler-config", source));
}

}  // namespace

struct SnapshotScheduler::Impl {
  PluginRegistry registry;
  std::string config_source;
  std::vector<std::string> problems;
  metrics::Registry metrics;
  SnapshotApi api;
  std::unique_ptr<Scheduler> scheduler;
};

SnapshotScheduler::SnapshotScheduler(const ClusterSnapshot& snapshot,
                                     const SnapshotSchedulerOptions& options)
    : impl_(std::make_unique<Impl>()) {
  // The in-tree plugins, LoadAwareScheduling reading the snapshot's time for NodeMetric expiry.
  PluginRegistry& registry = impl_->registry;
  for (const auto& [name, factory] : inTreeRegistry().entries()) {
    if (name != loadaware::kPluginName)
      registry.add(name, factory);
  }
  registerLoadAwareScheduling(registry, [taken = snapshot.taken_at] { return taken; });
  const config::SchedulerConfig config =
      loadConfig(snapshot, options, registry, impl_->config_source);
  // Plugins find their sources when built: the sources exist before the scheduler.
  for (const ObjectDeclaration* d : registry.objects()) {
    if (!d->make_fixed)
      continue;
    impl_->api.sources.emplace(d->key, d->make_fixed(itemsFor(snapshot, *d), impl_->problems));
  }
  try {
    impl_->scheduler = std::make_unique<Scheduler>(config, registry, impl_->api, impl_->metrics);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("{}: {}", impl_->config_source, e.what()));
  }
  Scheduler& s = *impl_->scheduler;
  for (const auto& item : snapshot.of("Node")) {
    auto node = decodeNode(item);
    if (!node) {
      impl_->problems.push_back(
          fmt::format("node {}: {}", metaString(item, "name"), node.error().message));
      continue;
    }
    s.onNodeAdd(std::make_shared<const Node>(std::move(*node)));
  }
  // Node-attached kinds (NodeMetric, NodeResourceTopology, Device) once their nodes exist.
  for (auto& [key, source] : impl_->api.sources) {
    source->connect(s);
    source->start();
  }
  for (const auto& item : snapshot.of("Reservation")) {
    auto r = decodeReservationState(item);
    if (!r) {
      impl_->problems.push_back(
          fmt::format("reservation {}: {}", metaString(item, "name"), r.error().message));
      continue;
    }
    auto shared = std::make_shared<const ReservationState>(std::move(*r));
    impl_->api.reservation_map.emplace(std::string(metaString(item, "name")), shared);
    s.onReservationAdd(std::move(shared));
  }
  for (const auto& item : snapshot.of("Pod")) {
    auto pod = decodePodInfo(item);
    if (!pod) {
      impl_->problems.push_back(fmt::format("pod {}/{}: {}", metaString(item, "namespace"),
                                            metaString(item, "name"), pod.error().message));
      continue;
    }
    if (pod->finished())
      continue;
    if (pod->key() == options.as_pending)
      pod->node_name.clear();
    auto shared = std::make_shared<const PodInfo>(std::move(*pod));
    impl_->api.pods.emplace(shared->key(), shared);
    s.onPodAdd(*shared);
    if (shared->assigned())
      s.onAssignedPodAdd(std::move(shared));
  }
}

SnapshotScheduler::~SnapshotScheduler() = default;

Scheduler& SnapshotScheduler::scheduler() {
  return *impl_->scheduler;
}

const std::string& SnapshotScheduler::configSource() const {
  return impl_->config_source;
}

const std::vector<std::string>& SnapshotScheduler::problems() const {
  return impl_->problems;
}

}  // namespace koord::roles::cli
