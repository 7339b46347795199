#include "descheduler_informers.h"

#include "framework/object_decode.h"
#include "koord/core/log.h"

namespace koord::roles::descheduler {

namespace {

kube::ResourceRef collection(std::string group, std::string version, std::string resource) {
  return {std::move(group), std::move(version), std::move(resource), "", "", ""};
}

}  // namespace

DeschedulerInformers::DeschedulerInformers(kube::RestClient& client, boost::asio::io_context& io)
    : nodes(client, io, collection("", "v1", "nodes"), decodeNode),
      pods(client, io, collection("", "v1", "pods"), decodePod),
      client_(client),
      io_(io),
      metric_discovery_(client, io, "NodeMetric API",
                        [](kube::RestClient& c, kube::VersionCallback done) {
                          kube::servedVersionOf(c, "slo.koordinator.sh", "nodemetrics",
                                                {"v1alpha1"}, std::move(done));
                        }),
      pdb_discovery_(client, io, "PodDisruptionBudget API",
                     [](kube::RestClient& c, kube::VersionCallback done) {
                       kube::servedVersionOf(c, "policy", "poddisruptionbudgets", {"v1", "v1beta1"},
                                             std::move(done));
                     }),
      eviction_discovery_(client, io, "Eviction API",
                          [](kube::RestClient& c, kube::VersionCallback done) {
                            kube::evictionVersion(c, std::move(done));
                          }) {
  pods.addIndex(kube::indexes::kNodeName, [](const Pod& p) {
    return p.node_name.empty() ? std::vector<std::string>{} : std::vector<std::string>{p.node_name};
  });
}

DeschedulerInformers::~DeschedulerInformers() {
  stop();
}

void DeschedulerInformers::start() {
  nodes.start();
  pods.start();
  // Each answer arrives on an io thread; the informer it starts is kept under mu_.
  metric_discovery_.start([this](std::optional<std::string> version) {
    std::lock_guard lock(mu_);
    metric_answered_ = true;
    if (stopped_ || !version) {
      if (!version)
        KOORD_LOG_WARNING(
            "descheduler: the API server serves no NodeMetric; load-aware plugins "
            "see every node as without metrics");
      return;
    }
    const auto slash = version->find('/');
    node_metrics_ = std::make_unique<kube::Informer<apis::NodeMetric>>(
        client_, io_, collection("slo.koordinator.sh", version->substr(slash + 1), "nodemetrics"),
        apis::decodeNodeMetric);
    node_metrics_->start();
  });
  pdb_discovery_.start([this](std::optional<std::string> version) {
    std::lock_guard lock(mu_);
    pdb_answered_ = true;
    if (stopped_ || !version)
      return;
    const auto slash = version->find('/');
    pdbs_ = std::make_unique<kube::Informer<PodDisruptionBudget>>(
        client_, io_, collection("policy", version->substr(slash + 1), "poddisruptionbudgets"),
        decodePodDisruptionBudget);
    pdbs_->start();
  });
  eviction_discovery_.start([this](std::optional<std::string> version) {
    std::lock_guard lock(mu_);
    eviction_answered_ = true;
    eviction_version_ = std::move(version);
    if (!eviction_version_)
      KOORD_LOG_WARNING(
          "descheduler: the API server lists no pods/eviction; evictions by the "
          "Eviction API will fail");
  });
}

void DeschedulerInformers::stop() {
  metric_discovery_.stop();
  pdb_discovery_.stop();
  eviction_discovery_.stop();
  nodes.stop();
  pods.stop();
  std::lock_guard lock(mu_);
  stopped_ = true;
  if (node_metrics_)
    node_metrics_->stop();
  if (pdbs_)
    pdbs_->stop();
}

bool DeschedulerInformers::discoveriesAnswered() const {
  std::lock_guard lock(mu_);
  return metric_answered_ && pdb_answered_ && eviction_answered_;
}

bool DeschedulerInformers::waitForSync(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()));
  };
  if (!nodes.waitForSync(left()) || !pods.waitForSync(left()))
    return false;
  while (!discoveriesAnswered()) {
    if (left().count() == 0)
      return false;
    std::this_thread::sleep_for(std::min(left(), std::chrono::milliseconds(20)));
  }
  kube::Informer<apis::NodeMetric>* metrics = nullptr;
  kube::Informer<PodDisruptionBudget>* pdbs = nullptr;
  {
    std::lock_guard lock(mu_);
    metrics = node_metrics_.get();
    pdbs = pdbs_.get();
  }
  // Set once and never reset, so the pointers stay valid without the lock.
  if (metrics != nullptr && !metrics->waitForSync(left()))
    return false;
  return pdbs == nullptr || pdbs->waitForSync(left());
}

Snapshot DeschedulerInformers::snapshot(TimePoint now,
                                        const std::optional<kube::Selector>& node_selector) const {
  Snapshot s;
  s.now = now;
  for (auto& n : nodes.store().list()) {
    // Koordinator's ReadyNodes: a node not Ready is neither a source nor a target.
    if (!n->ready || (node_selector && !node_selector->matches(n->labels)))
      continue;
    s.addNode(n);
  }
  for (auto& p : pods.store().list()) {
    if (!p->node_name.empty() && s.node(p->node_name) != nullptr)
      s.addPod(p);
  }
  std::lock_guard lock(mu_);
  if (node_metrics_) {
    for (auto& m : node_metrics_->store().list()) {
      if (s.node(m->name) != nullptr)
        s.node_metrics[m->name] = m;
    }
  }
  if (pdbs_)
    s.pdbs = pdbs_->store().list();
  return s;
}

std::optional<std::string> DeschedulerInformers::evictionVersion() const {
  std::lock_guard lock(mu_);
  return eviction_version_;
}

}  // namespace koord::roles::descheduler
