// The scheduler's informers (pods not yet finished, nodes, PodDisruptionBudgets and each kind a
// plugin declared) and the handlers that feed their events to the cache and the queue
// (upstream eventhandlers.go).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/declared_informer.h"
#include "framework/declared_object.h"
#include "framework/framework_handle.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/reservation_info.h"
#include "koord/kube/discovery.h"
#include "koord/kube/informer.h"

namespace koord::roles::scheduler {

class PluginRegistry;
class Scheduler;

/// Projects a PodDisruptionBudget of policy/v1 or policy/v1beta1 (the fields preemption reads
/// are the same in both); errors name the field.
kube::Expected<DisruptionBudget> decodeDisruptionBudget(const boost::json::value& v);

struct SchedulerInformers {
  /// With an informer for each kind the in-tree plugins declare.
  SchedulerInformers(kube::RestClient& client, boost::asio::io_context& io);
  /// With an informer for each kind `registry`'s plugins declare.
  SchedulerInformers(kube::RestClient& client, boost::asio::io_context& io,
                     const PluginRegistry& registry);
  /// Stops the discovery first: its answer would create the PDB informer.
  ~SchedulerInformers();
  SchedulerInformers(const SchedulerInformers&) = delete;
  SchedulerInformers& operator=(const SchedulerInformers&) = delete;

  /// Routes every event to `scheduler`: bound pods to the cache, pending pods of its profiles
  /// to the queue (a pod moving from one to the other leaves the first), nodes and node-kept
  /// declared kinds (NodeMetric) to the cache. Before start().
  void connect(Scheduler& scheduler);
  /// Starts the informers. The PodDisruptionBudget one starts once discovery has said which
  /// version the API server serves: policy/v1 where it does (1.21+), else policy/v1beta1 (up to
  /// 1.24); with neither, preemption runs without budgets and that counts as synced.
  void start();
  void stop();
  /// Every informer, declared kinds included.
  bool waitForSync(std::chrono::milliseconds timeout) const;

  /// The source of a declared kind (ClusterView::objectSource); null for an undeclared key.
  const AnyObjectSource* objectSource(std::string_view key) const;

  /// The Reservation of that name as the informer has it; null when none (or the API server
  /// serves no Reservation API: the scheduler then runs without reservations).
  std::shared_ptr<const ReservationState> reservation(const std::string& name) const;
  std::vector<std::shared_ptr<const ReservationState>> allReservations() const;

  /// The namespace's budgets; none while discovery has not answered or no PDB API is served.
  std::vector<std::shared_ptr<const DisruptionBudget>> disruptionBudgets(
      std::string_view namespace_) const;

  /// The group version pods/eviction takes ("policy/v1"); nullopt until discovery has answered,
  /// or when the API server serves no Eviction (ElasticQuota's revoke then evicts nothing).
  std::optional<std::string> evictionVersion() const;

  /// Succeeded and Failed pods are left out by a field selector, as kube-scheduler's pod
  /// informer does: their resources are free and a finished pod's phase change is a delete.
  kube::Informer<PodInfo> pods;
  kube::Informer<Node> nodes;

 private:
  enum class PdbApi { kUnknown, kServed, kNotServed };
  void onPdbVersion(std::optional<std::string> version);
  bool waitForPdbs(std::chrono::milliseconds timeout) const;
  void addReservationHandlers(kube::Informer<ReservationState>& informer);

  kube::RestClient& client_;
  boost::asio::io_context& io_;
  kube::DiscoveryRetry pdb_discovery_;
  kube::DiscoveryRetry eviction_discovery_;
  mutable std::mutex eviction_mu_;
  std::optional<std::string> eviction_version_;  // under eviction_mu_
  mutable std::mutex pdb_mu_;
  bool stopped_ = false;                                    // under pdb_mu_
  std::unique_ptr<kube::Informer<DisruptionBudget>> pdbs_;  // under pdb_mu_, set once
  std::atomic<PdbApi> pdb_api_{PdbApi::kUnknown};
  /// scheduling.koordinator.sh/v1alpha1 reservations, once discovery found them served.
  std::unique_ptr<DeclaredInformer<ReservationState>> reservations_;
  Scheduler* scheduler_ = nullptr;  // set by connect(), before the informers start
  /// The plugins' declared kinds by key.
  std::map<std::string, std::unique_ptr<ObjectInformer>, std::less<>> declared_;
};

}  // namespace koord::roles::scheduler
