// The manager's /readyz: ready once its informer caches have synced and, when it runs one, its
// webhook server serves. The two arrive on different threads, in either order.
#pragma once

#include <mutex>

#include "koord/core/health.h"

namespace koord::roles::manager {

class ManagerReadiness {
 public:
  /// Not ready until cachesSynced(), and webhooksServing() too when `webhooks` is true.
  ManagerReadiness(Health& health, bool webhooks);

  void cachesSynced();
  void webhooksServing();

 private:
  void publish();  // under mu_

  Health& health_;
  // One lock over both flags and the write: a caller that read a stale flag cannot publish
  // "not ready" after the other caller published "ready".
  std::mutex mu_;
  bool synced_ = false;
  bool serving_;
};

}  // namespace koord::roles::manager
