// What the descheduler watches: nodes, pods, NodeMetrics and PodDisruptionBudgets (the last two
// at the versions discovery finds served), and the Eviction version; a pass's Snapshot is taken
// from their stores.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "framework/types.h"
#include "koord/kube/discovery.h"
#include "koord/kube/informer.h"

namespace koord::roles::descheduler {

class DeschedulerInformers {
 public:
  DeschedulerInformers(kube::RestClient& client, boost::asio::io_context& io);
  ~DeschedulerInformers();
  DeschedulerInformers(const DeschedulerInformers&) = delete;
  DeschedulerInformers& operator=(const DeschedulerInformers&) = delete;

  /// Starts nodes and pods, and the discoveries that start the others.
  void start();
  /// Returns at once; safe on an io thread.
  void stop();
  /// True once every discovery has answered and each informer started has listed.
  bool waitForSync(std::chrono::milliseconds timeout);

  /// The cluster now: Ready nodes matching `node_selector` (all without one), every pod bound to
  /// them, their NodeMetrics and the PodDisruptionBudgets.
  Snapshot snapshot(TimePoint now, const std::optional<kube::Selector>& node_selector) const;
  /// "policy/v1" or "policy/v1beta1" once discovery answered (nullopt before, or when the API
  /// server serves no eviction subresource).
  std::optional<std::string> evictionVersion() const;

  kube::Informer<Node> nodes;
  kube::Informer<Pod> pods;

 private:
  bool discoveriesAnswered() const;

  kube::RestClient& client_;
  boost::asio::io_context& io_;
  kube::DiscoveryRetry metric_discovery_;
  kube::DiscoveryRetry pdb_discovery_;
  kube::DiscoveryRetry eviction_discovery_;
  mutable std::mutex mu_;
  bool stopped_ = false;                                            // under mu_
  bool metric_answered_ = false, pdb_answered_ = false;             // under mu_
  bool eviction_answered_ = false;                                  // under mu_
  std::optional<std::string> eviction_version_;                     // under mu_
  std::unique_ptr<kube::Informer<apis::NodeMetric>> node_metrics_;  // under mu_, set once
  std::unique_ptr<kube::Informer<PodDisruptionBudget>> pdbs_;       // under mu_, set once
};

}  // namespace koord::roles::descheduler
