#include "hooks/skip_label_policy.h"

#include <fmt/format.h>

#include <algorithm>

#include "koord/core/log.h"

namespace koord::roles::runtime_proxy {

namespace {

// More pods than a node runs at once: a pod is logged once over its life in practice.
constexpr std::size_t kWarnedMemory = 4096;

}  // namespace

SkipLabelPolicy::SkipLabelPolicy(std::string key, std::string value,
                                 std::vector<std::string> namespaces)
    : key_(std::move(key)), value_(std::move(value)), namespaces_(std::move(namespaces)) {}

bool SkipLabelPolicy::allowedIn(std::string_view pod_namespace, std::string_view name,
                                std::string_view uid) {
  if (std::find(namespaces_.begin(), namespaces_.end(), pod_namespace) != namespaces_.end())
    return true;
  const std::string pod = fmt::format("{}/{} ({})", pod_namespace, name, uid);
  std::lock_guard lock(mu_);
  if (warned_.insert(pod).second) {
    warned_order_.push_back(pod);
    if (warned_order_.size() > kWarnedMemory) {
      warned_.erase(warned_order_.front());
      warned_order_.pop_front();
    }
    KOORD_LOG_WARNING(
        "runtime-proxy: pod {} has the label {}={}, which counts only in the namespaces of "
        "--skip-hookserver-namespaces; its hooks run",
        pod, key_, value_);
  }
  return false;
}

}  // namespace koord::roles::runtime_proxy
