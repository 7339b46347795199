// What the proxy keeps of the pods and containers it saw created: the hook request that their
// later calls (start, stop, update, post hooks) carry, since those CRI calls name only an id.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "hooks/cri_hook_translation.h"

namespace koord::roles::runtime_proxy {

class RuntimeObjectCache {
 public:
  /// Entries beyond this (objects kubelet never removed) push out arbitrary old ones.
  static constexpr std::size_t kMaxEntries = 65536;

  void putSandbox(const std::string& id, hookapi::PodSandboxHookRequest request);
  void putContainer(const std::string& id, hookapi::ContainerResourceHookRequest request);
  /// For what is learnt from the runtime rather than from a create: a create's entry is richer.
  /// True when the entry was added.
  bool putSandboxIfAbsent(const std::string& id, hookapi::PodSandboxHookRequest request);
  bool putContainerIfAbsent(const std::string& id, hookapi::ContainerResourceHookRequest request);
  std::optional<hookapi::PodSandboxHookRequest> sandbox(const std::string& id) const;
  std::optional<hookapi::ContainerResourceHookRequest> container(const std::string& id) const;
  void eraseSandbox(const std::string& id);
  void eraseContainer(const std::string& id);
  std::size_t size() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, hookapi::PodSandboxHookRequest> sandboxes_;
  std::unordered_map<std::string, hookapi::ContainerResourceHookRequest> containers_;
};

}  // namespace koord::roles::runtime_proxy
