#include "koord/core/health.h"

namespace koord {

void Health::setReady(bool ready, std::string reason) {
  std::lock_guard lock(mu_);
  ready_ = ready;
  reason_ = ready ? std::string() : std::move(reason);
}

bool Health::ready() const {
  std::lock_guard lock(mu_);
  return ready_;
}

std::string Health::reason() const {
  std::lock_guard lock(mu_);
  return reason_;
}

}  // namespace koord
