#include "plugins/elasticquota/elastic_quota_plugin.h"

#include <boost/json.hpp>

#include <random>
#include <utility>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "koord/kube/rest_client.h"
#include "plugins/elasticquota/quota_check.h"
#include "plugins/elasticquota/quota_info.h"
#include "plugins/elasticquota/resources.h"

namespace koord::roles::scheduler::elasticquota {

namespace {

const StateKey kStateKey("ElasticQuota");

// The pod's quota as PreFilter found it, its request, and the quota's figures, which
// preemption's what-if runs move as they take pods out and put them back.
struct QuotaState final : StateData {
  std::string quota;
  Resources request;
  bool non_preemptible = false;
  QuotaCheckState check;
  std::unique_ptr<StateData> clone() const override { return std::make_unique<QuotaState>(*this); }
};

// How often the controller writes quota status, as Koordinator's status worker.
constexpr std::chrono::seconds kStatusInterval{1};

bool equalIgnoringZeros(const kube::ResourceList& a, const kube::ResourceList& b) {
  auto nonZero = [](const kube::ResourceList& l) {
    kube::ResourceList out;
    for (const auto& [name, q] : l) {
      if (q.milliValue() != 0)
        out.emplace(name, q);
    }
    return out;
  };
  const auto na = nonZero(a);
  const auto nb = nonZero(b);
  if (na.size() != nb.size())
    return false;
  for (const auto& [name, q] : na) {
    auto it = nb.find(name);
    if (it == nb.end() || it->second.milliValue() != q.milliValue())
      return false;
  }
  return true;
}

// The annotation's list differs from `figures` (an unreadable one always does).
bool annotationDiffers(const apis::ElasticQuota& q, std::string_view key,
                       const kube::ResourceList& figures) {
  auto current = apis::quotaResourceAnnotation(q.annotations, key);
  return !current || !equalIgnoringZeros(*current, figures);
}

}  // namespace

ElasticQuotaPlugin::ElasticQuotaPlugin(std::shared_ptr<const ElasticQuotaArgs> args,
                                       FrameworkHandle& handle)
    : args_(args ? std::move(args) : std::make_shared<const ElasticQuotaArgs>()),
      handle_(handle),
      manager_(*args_) {
  upstream::VictimRules rules;
  rules.can_preempt = [this](const PodInfo& preemptor, const PodInfo& candidate) {
    return candidate.priority < preemptor.priority &&
           !apis::isPodNonPreemptible(candidate.labels) && quotaOf(candidate) == quotaOf(preemptor);
  };
  rules.still_blocked = [](const CycleState& state, const PodInfo&) {
    const auto* s = state.read<QuotaState>(kStateKey);
    return s != nullptr && checkQuotaFit(s->check, s->request, s->non_preemptible).has_value();
  };
  rules.answers_pre_filter_of = std::string(kPluginName);
  preemption_ = std::make_unique<upstream::DefaultPreemption>(
      nullptr, handle_, std::random_device{}(), std::string(kPluginName), std::move(rules));

  // Koordinator creates the system and default quotas' objects in this namespace; koord keeps
  // both in the scheduler only.
  KOORD_LOG_WARNING(
      "elasticquota: ElasticQuotaArgs quotaGroupNamespace ({}) has no effect: koord does not "
      "create "
      "the system and default quotas' ElasticQuota objects",
      args_->quota_group_namespace);
  source_ = handle_.cluster().source<apis::ElasticQuota>(kElasticQuotaSource);
  if (source_ != nullptr) {
    source_->subscribe({
        [this](const std::shared_ptr<const apis::ElasticQuota>& q) { onQuota(*q); },
        [this](const apis::ElasticQuota&, const std::shared_ptr<const apis::ElasticQuota>& q) {
          onQuota(*q);
        },
        [this](const apis::ElasticQuota& q) {
          if (auto r = manager_.deleteQuota(q.name); !r)
            KOORD_LOG_WARNING("elasticquota: dropping quota {}: {}", q.name, r.error().message);
          handle_.requeueUnschedulable();
        },
    });
  }
  if (metrics::Registry* r = handle_.metricsRegistry()) {
    const std::vector<std::string> labels = {"name",      "resource", "tree",
                                             "is_parent", "parent",   "field"};
    spec_metric_ = &r->gauge("scheduler_elastic_quota_spec", "ElasticQuota specifications", labels);
    status_metric_ =
        &r->gauge("scheduler_elastic_quota_status", "ElasticQuota current status", labels);
  }
}

ElasticQuotaPlugin::~ElasticQuotaPlugin() {
  stopController();
}

std::string ElasticQuotaPlugin::quotaOf(const PodInfo& pod) const {
  return manager_.podQuotaName(pod.namespace_, pod.labels);
}

void ElasticQuotaPlugin::onQuota(const apis::ElasticQuota& quota) {
  if (auto r = manager_.updateQuota(quota); !r)
    KOORD_LOG_WARNING("elasticquota: quota {}/{}: {}", quota.namespace_, quota.name,
                      r.error().message);
  // A quota that grew, or a new one a pod names, may admit pods it refused.
  handle_.requeueUnschedulable();
}

// ---- extension points ----

Status ElasticQuotaPlugin::preFilter(CycleState& state, const PodInfo& pod) {
  if (pod.reserve_pod)
    return Status::success();
  auto s = std::make_unique<QuotaState>();
  s->quota = quotaOf(pod);
  const QuotaPod qp = quotaPodFromPodInfo(pod);
  s->request = qp.request;
  s->non_preemptible = qp.non_preemptible;
  Status status = manager_.preFilter(s->quota, qp, &s->check);
  state.write(kStateKey, std::move(s));
  return status;
}

Status ElasticQuotaPlugin::addPod(CycleState& state, const PodInfo& /*pod_to_schedule*/,
                                  const PodInfo& pod_to_add, const NodeInfo& /*node*/) const {
  auto* s = state.readMutable<QuotaState>(kStateKey);
  if (s == nullptr || pod_to_add.reserve_pod || quotaOf(pod_to_add) != s->quota)
    return Status::success();
  const QuotaPod qp = quotaPodFromPodInfo(pod_to_add);
  chargeResources(s->check.used, qp.request, +1);
  if (qp.non_preemptible)
    chargeResources(s->check.non_preemptible_used, qp.request, +1);
  return Status::success();
}

Status ElasticQuotaPlugin::removePod(CycleState& state, const PodInfo& /*pod_to_schedule*/,
                                     const PodInfo& pod_to_remove, const NodeInfo& /*node*/) const {
  auto* s = state.readMutable<QuotaState>(kStateKey);
  if (s == nullptr || pod_to_remove.reserve_pod || quotaOf(pod_to_remove) != s->quota)
    return Status::success();
  const QuotaPod qp = quotaPodFromPodInfo(pod_to_remove);
  chargeResources(s->check.used, qp.request, -1);
  if (qp.non_preemptible)
    chargeResources(s->check.non_preemptible_used, qp.request, -1);
  return Status::success();
}

Status ElasticQuotaPlugin::postFilter(CycleState& state, const PodInfo& pod,
                                      const NodeStatusMap& filtered, PostFilterResult& result) {
  if (state.read<QuotaState>(kStateKey) == nullptr)
    return Status::unschedulable("");
  return preemption_->postFilter(state, pod, filtered, result);
}

Status ElasticQuotaPlugin::reserve(CycleState& state, const PodInfo& pod,
                                   const std::string& /*node*/) {
  const auto* s = state.read<QuotaState>(kStateKey);
  if (pod.reserve_pod)
    return Status::success();
  manager_.reservePod(s != nullptr ? s->quota : quotaOf(pod), quotaPodFromPodInfo(pod));
  return Status::success();
}

void ElasticQuotaPlugin::unreserve(CycleState& /*state*/, const PodInfo& pod,
                                   const std::string& /*node*/) {
  if (!pod.reserve_pod)
    manager_.unreservePod(pod.namespace_, pod.name);
}

// ---- events ----

void ElasticQuotaPlugin::onPodAdd(const PodInfo& pod) {
  if (!pod.reserve_pod)
    manager_.onPodAdd(quotaOf(pod), quotaPodFromPodInfo(pod));
}

void ElasticQuotaPlugin::onPodUpdate(const PodInfo& /*old_pod*/, const PodInfo& pod) {
  if (!pod.reserve_pod)
    manager_.onPodUpdate(quotaOf(pod), quotaPodFromPodInfo(pod));
}

void ElasticQuotaPlugin::onPodDelete(const PodInfo& pod) {
  if (!pod.reserve_pod)
    manager_.onPodDelete(pod.namespace_, pod.name);
}

void ElasticQuotaPlugin::setNodeAllocatable(const std::string& node, const Resource* allocatable) {
  std::lock_guard lock(nodes_mu_);
  auto it = node_allocatable_.find(node);
  Resources next = allocatable != nullptr ? resourcesFromRequest(*allocatable) : Resources{};
  if (it != node_allocatable_.end()) {
    // Heartbeats change nothing here; only a change of allocatable moves the runtime quotas.
    if (allocatable != nullptr && it->second == next)
      return;
    chargeResources(total_, it->second, -1);
    node_allocatable_.erase(it);
  }
  if (allocatable != nullptr) {
    chargeResources(total_, next, +1);
    node_allocatable_.emplace(node, std::move(next));
  }
  manager_.setClusterTotalResource(total_);
}

void ElasticQuotaPlugin::onNodeAdd(const Node& node) {
  setNodeAllocatable(node.name, &node.allocatable);
}

void ElasticQuotaPlugin::onNodeUpdate(const Node& /*old_node*/, const Node& node) {
  setNodeAllocatable(node.name, &node.allocatable);
}

void ElasticQuotaPlugin::onNodeDelete(const Node& node) {
  setNodeAllocatable(node.name, nullptr);
}

// ---- controllers ----

void ElasticQuotaPlugin::recordMetrics(const apis::ElasticQuota& quota, const QuotaSummary& s) {
  if (spec_metric_ == nullptr || status_metric_ == nullptr)
    return;
  auto record = [&](metrics::Family<metrics::Gauge>* family, const Resources& r,
                    std::string_view field) {
    for (const auto& [resource, value] : r)
      family
          ->with({quota.name, resource, quota.tree_id, s.is_parent ? "true" : "false",
                  s.parent_name, field})
          .set(static_cast<double>(value));
  };
  record(spec_metric_, s.max, "max");
  record(spec_metric_, s.min, "min");
  record(spec_metric_, s.shared_weight, "shared-weight");
  record(status_metric_, s.used, "used");
  record(status_metric_, s.request, "request");
  record(status_metric_, s.runtime, "runtime");
  record(status_metric_, s.child_request, "child-request");
  record(status_metric_, s.non_preemptible_used, "non-preemptible-used");
}

void ElasticQuotaPlugin::syncStatusOnce() {
  if (source_ == nullptr)
    return;
  for (const auto& q : source_->list()) {
    auto s = manager_.summary(q->name);
    if (!s)
      continue;
    recordMetrics(*q, *s);
    apis::ElasticQuotaStatusUpdate update;
    bool changed = false;
    auto consider = [&](std::optional<kube::ResourceList>& slot, std::string_view key,
                        const Resources& figures) {
      kube::ResourceList list = resourcesToList(figures);
      if (annotationDiffers(*q, key, list)) {
        slot = std::move(list);
        changed = true;
      }
    };
    consider(update.runtime, apis::kAnnotationRuntime, s->runtime);
    consider(update.request, apis::kAnnotationRequest, s->request);
    consider(update.child_request, apis::kAnnotationChildRequest, s->child_request);
    consider(update.non_preemptible_request, apis::kAnnotationNonPreemptibleRequest,
             s->non_preemptible_request);
    consider(update.non_preemptible_used, apis::kAnnotationNonPreemptibleUsed,
             s->non_preemptible_used);
    kube::ResourceList used = resourcesToList(s->used);
    if (!equalIgnoringZeros(q->used, used)) {
      update.used = std::move(used);
      changed = true;
    }
    if (!changed)
      continue;
    kube::ResourceRef ref{std::string(apis::kSchedulingSigsGroup),
                          std::string(apis::kSchedulingSigsVersion),
                          std::string(apis::kElasticQuotaResource),
                          q->namespace_,
                          q->name,
                          ""};
    handle_.cluster().mergePatch(
        ref, apis::elasticQuotaStatusPatch(*q, update), [name = q->name](kube::Expected<void> r) {
          if (!r)
            KOORD_LOG_WARNING("elasticquota: updating the status of quota {}: {}", name,
                              r.error().message);
        });
  }
}

std::vector<std::string> ElasticQuotaPlugin::revokeOnce(std::chrono::system_clock::time_point now) {
  std::vector<std::string> out;
  for (const auto& p : manager_.revokeOverUsedQuotas(now)) {
    if (p.terminating)
      continue;  // on its way out from an earlier round
    PodInfo victim;
    victim.namespace_ = p.namespace_;
    victim.name = p.name;
    victim.uid = p.uid;
    KOORD_LOG_INFO("elasticquota: revoking {} : its quota uses more than its runtime quota",
                   victim.key());
    // The Eviction API, as Koordinator's revoke: the API server holds the pod's budgets.
    if (auto r = handle_.cluster().evictPod(victim); !r) {
      KOORD_LOG_WARNING("elasticquota: revoking {}: {}", victim.key(), r.error().message);
      continue;
    }
    out.push_back(victim.key());
  }
  return out;
}

void ElasticQuotaPlugin::startController() {
  std::lock_guard lock(mu_);
  if (thread_.joinable())
    return;
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void ElasticQuotaPlugin::stopController() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void ElasticQuotaPlugin::loop() {
  using Clock = std::chrono::steady_clock;
  const bool revoke = args_->monitor_all_quotas && args_->enable_runtime_quota;
  const auto revoke_every = std::max<std::chrono::nanoseconds>(args_->revoke_pod_interval,
                                                               std::chrono::milliseconds(100));
  auto next_status = Clock::now();
  auto next_revoke = Clock::now() + revoke_every;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const auto now = Clock::now();
    if (now >= next_status) {
      lock.unlock();
      syncStatusOnce();
      lock.lock();
      next_status = now + kStatusInterval;
    }
    if (revoke && now >= next_revoke) {
      lock.unlock();
      revokeOnce(std::chrono::system_clock::now());
      lock.lock();
      next_revoke = now + std::chrono::duration_cast<Clock::duration>(revoke_every);
    }
    const auto until = revoke ? std::min(next_status, next_revoke) : next_status;
    wake_.wait_until(lock, until, [this] { return stopping_; });
  }
}

}  // namespace koord::roles::scheduler::elasticquota
