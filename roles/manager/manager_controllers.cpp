#include "manager_controllers.h"

#include <boost/json.hpp>

#include <algorithm>

#include "controller/controller.h"
#include "controller/node_object_sync.h"
#include "koord/core/duration.h"
#include "koord/core/log.h"
#include "manager_informers.h"
#include "nodemetric/nodemetric_spec.h"
#include "noderesource_reconciler.h"
#include "quota_profile_reconciler.h"
#include "sloconfig/slo_config_source.h"

namespace koord::roles::manager {

namespace json = boost::json;

namespace {

// One worker each: reconciles are a few API calls, and one worker keeps every node's writes in
// order without any locking of our own (controller-runtime's default is 1 too).
constexpr int kWorkers = 1;

std::optional<NodeMeta> nodeMeta(const ManagerInformers& informers, const std::string& name) {
  auto node = informers.nodes.store().get(name);
  if (!node)
    return std::nullopt;
  return NodeMeta{node->uid, node->view.labels, node->view.annotations};
}

// The stored NodeMetric's spec in the shape nodeMetricSpec() writes, so equal means unchanged.
std::optional<json::value> nodeMetricCurrentSpec(const ManagerInformers& informers,
                                                 const std::string& name) {
  auto nm = informers.node_metrics.store().get(name);
  if (!nm)
    return std::nullopt;
  json::object policy;
  if (nm->collect_policy) {
    const auto& p = *nm->collect_policy;
    if (p.aggregate_duration_seconds)
      policy["aggregateDurationSeconds"] = *p.aggregate_duration_seconds;
    if (p.report_interval_seconds)
      policy["reportIntervalSeconds"] = *p.report_interval_seconds;
    if (p.node_aggregate_durations) {
      json::array durations;
      for (auto d : *p.node_aggregate_durations)
        durations.emplace_back(formatGoDuration(d));
      policy["nodeAggregatePolicy"] = json::object{{"durations", std::move(durations)}};
    }
    if (p.node_memory_collect_policy)
      policy["nodeMemoryCollectPolicy"] = *p.node_memory_collect_policy;
  }
  return json::object{{"metricCollectPolicy", std::move(policy)}};
}

bool labelsOrAnnotationsChanged(const NodeInfo& a, const NodeInfo& b) {
  return a.view.labels != b.view.labels || a.view.annotations != b.view.annotations;
}

}  // namespace

ManagerControllers::ManagerControllers(kube::RestClient& client, ManagerInformers& informers,
                                       SloConfigSource& config,
                                       const std::vector<std::string>& enabled,
                                       metrics::Registry& registry,
                                       noderesource::NodeResourcePlugins resource_plugins)
    : client_(client), informers_(informers), config_(config) {
  auto on = [&](const char* name) {
    return std::find(enabled.begin(), enabled.end(), name) != enabled.end();
  };
  for (const auto& name : enabled) {
    if (name != "nodemetric" && name != "nodeslo" && name != "noderesource" &&
        name != "quotaprofile")
      KOORD_LOG_WARNING("controller {}: not implemented in koord yet, not started", name);
  }
  if (on("nodemetric")) {
    NodeObjectSyncConfig sync{
        {"slo.koordinator.sh", "v1alpha1", "nodemetrics", "", "", ""},
        "NodeMetric",
        [this](const std::string& n) { return nodeMeta(informers_, n); },
        [this](const std::string& n) { return nodeMetricCurrentSpec(informers_, n); },
        [this](const NodeMeta& node) -> std::optional<json::value> {
          auto cfg = config_.current();
          if (!cfg)
            return std::nullopt;
          return nodeMetricSpec(
              apis::colocationStrategyForNode((*cfg)->colocation, node.labels, node.annotations));
        }};
    controllers_.push_back(std::make_unique<Controller>(
        "nodemetric",
        [this, sync](const std::string& key) { return syncNodeObject(client_, sync, key); },
        kWorkers, registry));
    nodemetric_ = controllers_.back().get();
  }
  if (on("nodeslo")) {
    NodeObjectSyncConfig sync{{"slo.koordinator.sh", "v1alpha1", "nodeslos", "", "", ""},
                              "NodeSLO",
                              [this](const std::string& n) { return nodeMeta(informers_, n); },
                              [this](const std::string& n) -> std::optional<json::value> {
                                auto slo = informers_.node_slos.store().get(n);
                                if (!slo)
                                  return std::nullopt;
                                return slo->spec;
                              },
                              [this](const NodeMeta& node) -> std::optional<json::value> {
                                auto cfg = config_.current();
                                if (!cfg)
                                  return std::nullopt;
                                return apis::nodeSLOSpec(**cfg, node.labels);
                              }};
    controllers_.push_back(std::make_unique<Controller>(
        "nodeslo",
        [this, sync](const std::string& key) { return syncNodeObject(client_, sync, key); },
        kWorkers, registry));
    nodeslo_ = controllers_.back().get();
  }
  if (on("noderesource")) {
    auto reconciler = std::make_shared<NodeResourceReconciler>(client_, informers_, config_,
                                                               registry, resource_plugins);
    controllers_.push_back(std::make_unique<Controller>(
        "noderesource", [reconciler](const std::string& key) { return reconciler->reconcile(key); },
        kWorkers, registry));
    noderesource_ = controllers_.back().get();
  }
  if (on("quotaprofile")) {
    auto reconciler = std::make_shared<QuotaProfileReconciler>(client_, informers_);
    controllers_.push_back(std::make_unique<Controller>(
        "quotaprofile", [reconciler](const std::string& key) { return reconciler->reconcile(key); },
        kWorkers, registry));
    quotaprofile_ = controllers_.back().get();
  }
}

ManagerControllers::~ManagerControllers() {
  stop();
}

std::vector<std::string> ManagerControllers::names() const {
  std::vector<std::string> out;
  for (const auto& c : controllers_)
    out.push_back(c->name());
  return out;
}

void ManagerControllers::watch() {
  auto all = [this](const std::string& name) {
    for (auto& c : controllers_) {
      if (c.get() != quotaprofile_)
        c->enqueue(name);
    }
  };
  informers_.nodes.addHandlers(
      {[all](const std::string& key, const NodeInfo&) { all(key); },
       [this](const std::string& key, const NodeInfo& old_node, const NodeInfo& new_node) {
         if (labelsOrAnnotationsChanged(old_node, new_node)) {
           if (nodemetric_)
             nodemetric_->enqueue(key);
           if (nodeslo_)
             nodeslo_->enqueue(key);
         }
         if (noderesource_)
           noderesource_->enqueue(key);
       },
       [all](const std::string& key, const NodeInfo&) { all(key); }});
  auto metric_changed = [this](const std::string& key) {
    if (nodemetric_)
      nodemetric_->enqueue(key);
    if (noderesource_)
      noderesource_->enqueue(key);
  };
  informers_.node_metrics.addHandlers(
      {[metric_changed](const std::string& key, const apis::NodeMetric&) { metric_changed(key); },
       [metric_changed](const std::string& key, const apis::NodeMetric&, const apis::NodeMetric&) {
         metric_changed(key);
       },
       [metric_changed](const std::string& key, const apis::NodeMetric&) { metric_changed(key); }});
  if (nodeslo_) {
    auto slo_changed = [this](const std::string& key) { nodeslo_->enqueue(key); };
    informers_.node_slos.addHandlers(
        {[slo_changed](const std::string& key, const NodeSLOInfo&) { slo_changed(key); },
         [slo_changed](const std::string& key, const NodeSLOInfo& a, const NodeSLOInfo& b) {
           if (a.spec != b.spec)
             slo_changed(key);
         },
         [slo_changed](const std::string& key, const NodeSLOInfo&) { slo_changed(key); }});
  }
  if (noderesource_) {
    auto pod_changed = [this](const noderesource::PodView& pod) {
      if (!pod.node_name.empty())
        noderesource_->enqueue(pod.node_name);
    };
    informers_.pods.addHandlers(
        {[pod_changed](const std::string&, const noderesource::PodView& p) { pod_changed(p); },
         [pod_changed](const std::string&, const noderesource::PodView& a,
                       const noderesource::PodView& b) {
           pod_changed(a);
           if (b.node_name != a.node_name)
             pod_changed(b);
         },
         [pod_changed](const std::string&, const noderesource::PodView& p) { pod_changed(p); }});
  }
  if (noderesource_) {
    // A Device is named after its node: any change to what the device plugins read, and its
    // removal, recomputes that node.
    auto device_changed = [this](const std::string& key) { noderesource_->enqueue(key); };
    informers_.devices.addHandlers(
        {[device_changed](const std::string& key, const noderesource::DeviceView&) {
           device_changed(key);
         },
         [device_changed](const std::string& key, const noderesource::DeviceView& a,
                          const noderesource::DeviceView& b) {
           if (!(a == b))
             device_changed(key);
         },
         [device_changed](const std::string& key, const noderesource::DeviceView&) {
           device_changed(key);
         }});
  }
  config_.onChange([this] { enqueueAllNodes(); });
  if (quotaprofile_) {
    // Koordinator reconciles a profile when its generation moves (its spec changed); the
    // nodes' share is picked up by each reconcile's 10 s look again.
    auto profile_changed = [this](const std::string& key) { quotaprofile_->enqueue(key); };
    informers_.quota_profiles.addHandlers(
        {[profile_changed](const std::string& key, const apis::ElasticQuotaProfile&) {
           profile_changed(key);
         },
         [profile_changed](const std::string& key, const apis::ElasticQuotaProfile& a,
                           const apis::ElasticQuotaProfile& b) {
           if (a.quota_name != b.quota_name || a.quota_labels != b.quota_labels ||
               a.resource_ratio != b.resource_ratio || a.node_selector != b.node_selector)
             profile_changed(key);
         },
         nullptr});
  }
}

void ManagerControllers::start() {
  for (auto& c : controllers_)
    c->start();
  enqueueAllNodes();
  // A new leader looks at every profile once; each then keeps its own 10 s cadence.
  if (quotaprofile_) {
    if (const auto* profiles = informers_.quota_profiles.store()) {
      for (const auto& key : profiles->keys())
        quotaprofile_->enqueue(key);
    }
  }
}

void ManagerControllers::stop() {
  for (auto& c : controllers_)
    c->stop();
}

void ManagerControllers::enqueueAllNodes() {
  // Orphans too: a NodeMetric or NodeSLO whose Node was deleted while no leader ran.
  std::set<std::string> names;
  for (const auto& key : informers_.nodes.store().keys())
    names.insert(key);
  for (const auto& key : informers_.node_metrics.store().keys())
    names.insert(key);
  for (const auto& key : informers_.node_slos.store().keys())
    names.insert(key);
  for (auto& c : controllers_) {
    if (c.get() == quotaprofile_)
      continue;
    for (const auto& n : names)
      c->enqueue(n);
  }
}

}  // namespace koord::roles::manager
