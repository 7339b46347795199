#include "manager_readiness.h"

namespace koord::roles::manager {

ManagerReadiness::ManagerReadiness(Health& health, bool webhooks)
    : health_(health), serving_(!webhooks) {
  std::lock_guard lock(mu_);
  publish();
}

void ManagerReadiness::cachesSynced() {
  std::lock_guard lock(mu_);
  synced_ = true;
  publish();
}

void ManagerReadiness::webhooksServing() {
  std::lock_guard lock(mu_);
  serving_ = true;
  publish();
}

void ManagerReadiness::publish() {
  if (synced_ && serving_)
    health_.setReady(true);
  else
    health_.setReady(false,
                     synced_ ? "webhook server not serving yet" : "informer caches not synced");
}

}  // namespace koord::roles::manager
