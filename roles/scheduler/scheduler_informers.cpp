#include "scheduler_informers.h"

#include <boost/json.hpp>

#include <algorithm>
#include <thread>

#include "framework/plugin_registry.h"
#include "koord/core/log.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/object_meta.h"
#include "scheduler.h"

namespace koord::roles::scheduler {

namespace {

namespace json = boost::json;

kube::ResourceRef collection(const char* group, const char* version, const char* resource) {
  return {group, version, resource, "", "", ""};
}

kube::ReflectorOptions unfinishedPods() {
  kube::ReflectorOptions o;
  o.field_selector = "status.phase!=Succeeded,status.phase!=Failed";
  return o;
}

}  // namespace

kube::Expected<DisruptionBudget> decodeDisruptionBudget(const json::value& v) {
  using namespace kube::jsonfields;
  if (!v.is_object())
    return typeError("", "object", v);
  const auto& root = v.get_object();
  DisruptionBudget out;
  using Fields = kube::ObjectMetaFields;
  kube::ObjectMeta meta;
  if (auto read =
          kube::decodeObjectMeta(root, {.members = Fields::kNamespace | Fields::kName}, meta);
      !read)
    return read.error();
  out.namespace_ = std::move(meta.namespace_);
  out.name = std::move(meta.name);
  // A nil selector matches no pod. An empty one matches none for preemption either (it skips
  // empty selectors, as kube-scheduler does), though policy/v1 reads it as every pod.
  out.selector = kube::Selector::nothing();
  auto spec = objectField(root, "spec", "");
  if (!spec)
    return spec.error();
  if (*spec != nullptr) {
    if (const auto* sel = field(**spec, "selector")) {
      auto decoded = kube::decodeLabelSelector(*sel, "spec.selector");
      if (!decoded)
        return decoded.error();
      auto selector = kube::toSelector(*decoded);
      if (!selector)
        return selector.error();
      out.selector = std::move(*selector);
    }
  }
  auto status = objectField(root, "status", "");
  if (!status)
    return status.error();
  if (*status != nullptr) {
    if (const auto* allowed = field(**status, "disruptionsAllowed")) {
      if (!allowed->is_int64() || allowed->get_int64() < INT32_MIN ||
          allowed->get_int64() > INT32_MAX)
        return typeError("status.disruptionsAllowed", "int32", *allowed);
      out.disruptions_allowed = static_cast<std::int32_t>(allowed->get_int64());
    }
    auto disrupted = objectField(**status, "disruptedPods", "status");
    if (!disrupted)
      return disrupted.error();
    if (*disrupted != nullptr) {
      for (const auto& kv : **disrupted)
        out.disrupted_pods.emplace_back(kv.key());
    }
  }
  return out;
}

SchedulerInformers::SchedulerInformers(kube::RestClient& client, boost::asio::io_context& io)
    : SchedulerInformers(client, io, inTreeRegistry()) {}

SchedulerInformers::SchedulerInformers(kube::RestClient& client, boost::asio::io_context& io,
                                       const PluginRegistry& registry)
    : pods(client, io, collection("", "v1", "pods"), decodePodInfo, unfinishedPods()),
      nodes(client, io, collection("", "v1", "nodes"), decodeNode),
      client_(client),
      io_(io),
      pdb_discovery_(client, io, "PodDisruptionBudget API",
                     [](kube::RestClient& c, kube::VersionCallback done) {
                       kube::servedVersionOf(c, "policy", "poddisruptionbudgets", {"v1", "v1beta1"},
                                             std::move(done));
                     }),
      eviction_discovery_(client, io, "pod eviction",
                          [](kube::RestClient& c, kube::VersionCallback done) {
                            kube::evictionVersion(c, std::move(done));
                          }) {
  for (const ObjectDeclaration* d : registry.objects())
    declared_.emplace(d->key, d->make_informer(client, io));
  InformerSpec<ReservationState> spec{
      .key = "scheduling.koordinator.sh/v1alpha1/reservations",
      .resource = {std::string(apis::kReservationGroup), std::string(apis::kReservationVersion),
                   std::string(apis::kReservationResource), "", "", ""},
      .project = decodeReservationState,
      .versions = {std::string(apis::kReservationVersion)},
      .on_created = [this](kube::Informer<ReservationState>& informer) {
        addReservationHandlers(informer);
      }};
  reservations_ = std::make_unique<DeclaredInformer<ReservationState>>(client, io, std::move(spec));
}

void SchedulerInformers::addReservationHandlers(kube::Informer<ReservationState>& informer) {
  if (scheduler_ == nullptr)
    return;
  Scheduler& s = *scheduler_;
  informer.addHandlers({
      [&informer, &s](const std::string& key, const ReservationState&) {
        if (auto ptr = informer.store().get(key))
          s.onReservationAdd(std::move(ptr));
      },
      [&informer, &s](const std::string& key, const ReservationState& old_r,
                      const ReservationState&) {
        if (auto ptr = informer.store().get(key))
          s.onReservationUpdate(old_r, std::move(ptr));
      },
      [&s](const std::string&, const ReservationState& r) { s.onReservationDelete(r); },
  });
}

std::shared_ptr<const ReservationState> SchedulerInformers::reservation(
    const std::string& name) const {
  return reservations_->get(name);
}

std::vector<std::shared_ptr<const ReservationState>> SchedulerInformers::allReservations() const {
  return reservations_->list();
}

const AnyObjectSource* SchedulerInformers::objectSource(std::string_view key) const {
  auto it = declared_.find(key);
  return it == declared_.end() ? nullptr : &it->second->source();
}

// On the io_context, once.
void SchedulerInformers::onPdbVersion(std::optional<std::string> version) {
  std::lock_guard lock(pdb_mu_);
  if (stopped_)
    return;
  if (!version) {
    KOORD_LOG_WARNING(
        "scheduler: PDB-aware preemption is off: the API server serves no PodDisruptionBudget "
        "API (neither policy/v1 nor policy/v1beta1)");
    pdb_api_ = PdbApi::kNotServed;
    return;
  }
  KOORD_LOG_INFO("scheduler: watching PodDisruptionBudgets in {}", *version);
  const auto slash = version->find('/');
  pdbs_ = std::make_unique<kube::Informer<DisruptionBudget>>(
      client_, io_,
      kube::ResourceRef{"policy", version->substr(slash + 1), "poddisruptionbudgets", "", "", ""},
      decodeDisruptionBudget);
  pdbs_->addIndex(kube::indexes::kNamespace,
                  [](const DisruptionBudget& b) { return std::vector<std::string>{b.namespace_}; });
  pdbs_->start();
  pdb_api_ = PdbApi::kServed;
}

std::vector<std::shared_ptr<const DisruptionBudget>> SchedulerInformers::disruptionBudgets(
    std::string_view namespace_) const {
  std::lock_guard lock(pdb_mu_);
  if (!pdbs_)
    return {};
  return pdbs_->store().byIndex(kube::indexes::kNamespace, std::string(namespace_));
}

std::optional<std::string> SchedulerInformers::evictionVersion() const {
  std::lock_guard lock(eviction_mu_);
  return eviction_version_;
}

SchedulerInformers::~SchedulerInformers() {
  pdb_discovery_.stop();
  eviction_discovery_.stop();
}

void SchedulerInformers::connect(Scheduler& s) {
  scheduler_ = &s;
  // Handlers get the stored object by reference; the cache and queue keep shared pointers, so
  // the informer's own copy (just stored under `key`) is looked up rather than copied.
  pods.addHandlers({
      [this, &s](const std::string& key, const PodInfo& p) {
        auto ptr = pods.store().get(key);
        if (!ptr)
          return;
        s.onPodAdd(p);
        if (p.assigned())
          s.onAssignedPodAdd(std::move(ptr));
        else if (s.responsibleFor(p.scheduler_name))
          s.onPendingPodAdd(std::move(ptr));
      },
      [this, &s](const std::string& key, const PodInfo& old_pod, const PodInfo& p) {
        auto ptr = pods.store().get(key);
        if (!ptr)
          return;
        s.onPodUpdate(old_pod, p);
        const bool was_bound = old_pod.assigned();
        const bool bound = p.assigned();
        const bool was_queued = !was_bound && s.responsibleFor(old_pod.scheduler_name);
        const bool queued = !bound && s.responsibleFor(p.scheduler_name);
        if (was_bound && bound) {
          s.onAssignedPodUpdate(old_pod, std::move(ptr));
        } else if (bound) {
          if (was_queued)
            s.onPendingPodDelete(old_pod);
          s.onAssignedPodAdd(std::move(ptr));
        } else if (was_bound) {
          s.onAssignedPodDelete(old_pod);
          if (queued)
            s.onPendingPodAdd(std::move(ptr));
        } else if (was_queued && queued) {
          s.onPendingPodUpdate(old_pod, std::move(ptr));
        } else if (queued) {
          s.onPendingPodAdd(std::move(ptr));
        } else if (was_queued) {
          s.onPendingPodDelete(old_pod);
        }
      },
      [&s](const std::string&, const PodInfo& p) {
        s.onPodDelete(p);
        if (p.assigned())
          s.onAssignedPodDelete(p);
        else if (s.responsibleFor(p.scheduler_name))
          s.onPendingPodDelete(p);
      },
  });
  nodes.addHandlers({
      [this, &s](const std::string& key, const Node&) {
        if (auto ptr = nodes.store().get(key))
          s.onNodeAdd(std::move(ptr));
      },
      [this, &s](const std::string& key, const Node& old_node, const Node&) {
        if (auto ptr = nodes.store().get(key))
          s.onNodeUpdate(old_node, std::move(ptr));
      },
      [&s](const std::string&, const Node& n) { s.onNodeDelete(n); },
  });
  for (auto& [key, informer] : declared_)
    informer->connect(s);
}

void SchedulerInformers::start() {
  nodes.start();
  for (auto& [key, informer] : declared_)
    informer->start();
  reservations_->start();
  pdb_discovery_.start([this](std::optional<std::string> v) { onPdbVersion(std::move(v)); });
  eviction_discovery_.start([this](std::optional<std::string> v) {
    if (v)
      KOORD_LOG_INFO("scheduler: the API server takes {} Evictions", *v);
    else
      KOORD_LOG_WARNING(
          "scheduler: the API server lists no pods/eviction subresource; ElasticQuota's revoke "
          "cannot evict pods");
    std::lock_guard lock(eviction_mu_);
    eviction_version_ = std::move(v);
  });
  pods.start();
}

void SchedulerInformers::stop() {
  pods.stop();
  // Before taking pdb_mu_: an answer under way holds the discovery's lock and wants pdb_mu_.
  pdb_discovery_.stop();
  eviction_discovery_.stop();
  {
    std::lock_guard lock(pdb_mu_);
    stopped_ = true;
    if (pdbs_)
      pdbs_->stop();
  }
  reservations_->stop();
  for (auto& [key, informer] : declared_)
    informer->stop();
  nodes.stop();
}

bool SchedulerInformers::waitForPdbs(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // Discovery answers once; polling for it keeps a second condition variable out of the way.
  while (pdb_api_ == PdbApi::kUnknown) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (pdb_api_ == PdbApi::kNotServed)
    return true;
  const kube::Informer<DisruptionBudget>* informer = nullptr;
  {
    std::lock_guard lock(pdb_mu_);
    informer = pdbs_.get();
  }
  // Set once and kept until destruction, so it outlives the wait.
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return informer->waitForSync(std::max(left, std::chrono::milliseconds(0)));
}

bool SchedulerInformers::waitForSync(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now());
  };
  if (!nodes.waitForSync(left()))
    return false;
  for (const auto& [key, informer] : declared_) {
    if (!informer->waitForSync(left()))
      return false;
  }
  if (!reservations_->waitForSync(left()))
    return false;
  return waitForPdbs(left()) && pods.waitForSync(left());
}

}  // namespace koord::roles::scheduler
