// An informer for a kind whose CRD a cluster may lack (ElasticQuota, ElasticQuotaProfile): API
// discovery runs first, and the informer starts only when the API server serves the resource.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "koord/core/log.h"
#include "koord/kube/discovery.h"
#include "koord/kube/informer.h"

namespace koord::roles::manager {

template <typename T>
class DiscoveredInformer {
 public:
  DiscoveredInformer(kube::RestClient& client, boost::asio::io_context& io, std::string group,
                     std::string resource, std::vector<std::string> versions,
                     kube::Projection<T> projection)
      : client_(client),
        io_(io),
        group_(group),
        resource_(resource),
        projection_(std::move(projection)),
        discovery_(client, io, resource + "." + group,
                   [group, resource, versions](kube::RestClient& c, kube::VersionCallback done) {
                     kube::servedVersionOf(c, group, resource, versions, std::move(done));
                   }) {}
  ~DiscoveredInformer() { stop(); }
  DiscoveredInformer(const DiscoveredInformer&) = delete;
  DiscoveredInformer& operator=(const DiscoveredInformer&) = delete;

  /// Before start(): they are given to the informer when it is made.
  void addHandlers(kube::InformerHandlers<T> handlers) {
    std::lock_guard lock(mu_);
    handlers_.push_back(std::move(handlers));
  }

  void start() {
    discovery_.start([this](std::optional<std::string> version) {
      std::lock_guard lock(mu_);
      answered_ = true;
      if (stopped_)
        return;
      if (!version) {
        KOORD_LOG_WARNING("manager: the API server serves no {}.{}; what needs it sees none",
                          resource_, group_);
        return;
      }
      auto informer = std::make_unique<kube::Informer<T>>(
          client_, io_,
          kube::ResourceRef{group_, version->substr(version->find('/') + 1), resource_, "", "", ""},
          projection_);
      for (auto& h : handlers_)
        informer->addHandlers(h);
      informer->start();
      informer_ = std::move(informer);
      published_.store(informer_.get(), std::memory_order_release);
    });
  }

  /// Returns at once; safe on an io thread.
  void stop() {
    discovery_.stop();
    std::lock_guard lock(mu_);
    stopped_ = true;
    if (informer_)
      informer_->stop();
  }

  /// Null until discovery found the resource served; then the informer's store, for good.
  const kube::Store<T>* store() const {
    const kube::Informer<T>* i = published_.load(std::memory_order_acquire);
    return i == nullptr ? nullptr : &i->store();
  }

  /// True once discovery answered and, when the resource is served, the informer listed.
  bool waitForSync(std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      bool answered = false;
      {
        std::lock_guard lock(mu_);
        answered = answered_;
      }
      if (answered)
        break;
      if (std::chrono::steady_clock::now() >= deadline)
        return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const kube::Informer<T>* i = published_.load(std::memory_order_acquire);
    if (i == nullptr)
      return true;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return i->waitForSync(std::max(left, std::chrono::milliseconds(0)));
  }

 private:
  kube::RestClient& client_;
  boost::asio::io_context& io_;
  std::string group_;
  std::string resource_;
  kube::Projection<T> projection_;
  kube::DiscoveryRetry discovery_;
  mutable std::mutex mu_;
  bool answered_ = false;                            // under mu_
  bool stopped_ = false;                             // under mu_
  std::vector<kube::InformerHandlers<T>> handlers_;  // under mu_
  std::unique_ptr<kube::Informer<T>> informer_;      // under mu_, set once
  std::atomic<const kube::Informer<T>*> published_{nullptr};
};

}  // namespace koord::roles::manager
