// Liveness and readiness as a role reports them at /healthz and /readyz. Readiness is false
// until the role says otherwise, with a reason a person can act on.
#pragma once

#include <mutex>
#include <string>

namespace koord {

class Health {
 public:
  /// Ready: /readyz answers 200. Not ready: 503 with `reason` in the body.
  void setReady(bool ready, std::string reason = {});
  bool ready() const;
  std::string reason() const;

 private:
  mutable std::mutex mu_;
  bool ready_ = false;
  std::string reason_ = "starting";
};

}  // namespace koord
