// Which pods the skip-hookserver label (--runtime-hook-server-key/val) takes past the hook
// servers. The label bypasses koord's cgroup policy for the pod, and anyone who may create a pod
// may label it, so it counts only in the namespaces the operator lists
// (--skip-hookserver-namespaces): elsewhere the hooks run as if it were not there.
#pragma once

#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace koord::roles::runtime_proxy {

class SkipLabelPolicy {
 public:
  SkipLabelPolicy(std::string key, std::string value, std::vector<std::string> namespaces);

  /// Whether the pod `meta` names (a CRI or hook PodSandboxMetadata) with `labels` skips the
  /// hooks. A skip label outside the listed namespaces is ignored and logged once per pod
  /// sandbox, not on every call of its containers.
  template <typename Labels, typename Meta>
  bool skips(const Labels& labels, const Meta& meta) {
    auto it = labels.find(key_);
    if (it == labels.end() || it->second != value_)
      return false;
    return allowedIn(meta.namespace_(), meta.name(), meta.uid());
  }

  const std::string& key() const { return key_; }
  const std::string& value() const { return value_; }

 private:
  bool allowedIn(std::string_view pod_namespace, std::string_view name, std::string_view uid);

  std::string key_;
  std::string value_;
  std::vector<std::string> namespaces_;
  // Pods already logged for a label their namespace may not use, oldest first; bounded, so a
  // pod forgotten long ago is logged again rather than memory growing with every pod.
  std::mutex mu_;
  std::unordered_set<std::string> warned_;
  std::deque<std::string> warned_order_;
};

}  // namespace koord::roles::runtime_proxy
