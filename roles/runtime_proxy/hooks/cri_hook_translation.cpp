#include "hooks/cri_hook_translation.h"

#include "cri/runtime/v1/api.pb.h"
#include "cri/runtime/v1alpha2/api.pb.h"

namespace koord::roles::runtime_proxy {

namespace {

template <typename Map>
void mergeInto(const google::protobuf::Map<std::string, std::string>& from, Map& to) {
  for (const auto& [k, v] : from)
    to[k] = v;
}

template <typename Metadata>
void copyPodMeta(const Metadata& from, hookapi::PodSandboxMetadata& to) {
  to.set_name(from.name());
  to.set_uid(from.uid());
  to.set_namespace_(from.namespace_());
  to.set_attempt(from.attempt());
}

}  // namespace

template <typename CriResources>
hookapi::LinuxContainerResources hookResources(const CriResources& r) {
  hookapi::LinuxContainerResources out;
  out.set_cpu_period(r.cpu_period());
  out.set_cpu_quota(r.cpu_quota());
  out.set_cpu_shares(r.cpu_shares());
  out.set_memory_limit_in_bytes(r.memory_limit_in_bytes());
  out.set_oom_score_adj(r.oom_score_adj());
  out.set_cpuset_cpus(r.cpuset_cpus());
  out.set_cpuset_mems(r.cpuset_mems());
  for (const auto& h : r.hugepage_limits()) {
    auto* limit = out.add_hugepage_limits();
    limit->set_page_size(h.page_size());
    limit->set_limit(h.limit());
  }
  if constexpr (requires { r.unified(); }) {
    mergeInto(r.unified(), *out.mutable_unified());
    out.set_memory_swap_limit_in_bytes(r.memory_swap_limit_in_bytes());
  }
  return out;
}

template <typename CriResources>
void applyHookResources(const hookapi::LinuxContainerResources& a, CriResources& r) {
  if (a.cpu_period() > 0)
    r.set_cpu_period(a.cpu_period());
  if (a.cpu_quota() != 0)
    r.set_cpu_quota(a.cpu_quota());
  if (a.cpu_shares() > 0)
    r.set_cpu_shares(a.cpu_shares());
  if (a.memory_limit_in_bytes() > 0)
    r.set_memory_limit_in_bytes(a.memory_limit_in_bytes());
  // Zero cannot be told from unset in proto3: an answer moves oom_score_adj only off zero.
  if (a.oom_score_adj() != 0 && a.oom_score_adj() >= -1000 && a.oom_score_adj() <= 1000)
    r.set_oom_score_adj(a.oom_score_adj());
  if (!a.cpuset_cpus().empty())
    r.set_cpuset_cpus(a.cpuset_cpus());
  if (!a.cpuset_mems().empty())
    r.set_cpuset_mems(a.cpuset_mems());
  if constexpr (requires { r.unified(); }) {
    mergeInto(a.unified(), *r.mutable_unified());
    if (a.memory_swap_limit_in_bytes() > 0)
      r.set_memory_swap_limit_in_bytes(a.memory_swap_limit_in_bytes());
  }
}

template <typename Request>
hookapi::PodSandboxHookRequest podSandboxHookRequest(const Request& run) {
  hookapi::PodSandboxHookRequest out;
  const auto& config = run.config();
  copyPodMeta(config.metadata(), *out.mutable_pod_meta());
  out.set_runtime_handler(run.runtime_handler());
  mergeInto(config.labels(), *out.mutable_labels());
  mergeInto(config.annotations(), *out.mutable_annotations());
  out.set_cgroup_parent(config.linux().cgroup_parent());
  if constexpr (requires { config.linux().resources(); }) {
    if (config.linux().has_overhead())
      *out.mutable_overhead() = hookResources(config.linux().overhead());
    if (config.linux().has_resources())
      *out.mutable_resources() = hookResources(config.linux().resources());
  }
  return out;
}

template <typename Request>
void mergePodSandboxHookResponse(const hookapi::PodSandboxHookResponse& answer, Request& run) {
  auto& config = *run.mutable_config();
  mergeInto(answer.labels(), *config.mutable_labels());
  mergeInto(answer.annotations(), *config.mutable_annotations());
  if (!answer.cgroup_parent().empty())
    config.mutable_linux()->set_cgroup_parent(answer.cgroup_parent());
  if constexpr (requires { config.linux().resources(); }) {
    if (answer.has_resources())
      applyHookResources(answer.resources(), *config.mutable_linux()->mutable_resources());
  }
}

template <typename Request>
hookapi::ContainerResourceHookRequest containerHookRequest(const Request& create) {
  hookapi::ContainerResourceHookRequest out;
  const auto& sandbox = create.sandbox_config();
  const auto& config = create.config();
  copyPodMeta(sandbox.metadata(), *out.mutable_pod_meta());
  out.mutable_container_meta()->set_name(config.metadata().name());
  out.mutable_container_meta()->set_attempt(config.metadata().attempt());
  mergeInto(config.annotations(), *out.mutable_container_annotations());
  if (config.linux().has_resources())
    *out.mutable_container_resources() = hookResources(config.linux().resources());
  if constexpr (requires { sandbox.linux().resources(); }) {
    if (sandbox.linux().has_resources())
      *out.mutable_pod_resources() = hookResources(sandbox.linux().resources());
  }
  mergeInto(sandbox.annotations(), *out.mutable_pod_annotations());
  mergeInto(sandbox.labels(), *out.mutable_pod_labels());
  out.set_pod_cgroup_parent(sandbox.linux().cgroup_parent());
  auto& envs = *out.mutable_container_envs();
  for (const auto& kv : config.envs())
    envs[kv.key()] = kv.value();
  return out;
}

template <typename Request>
void mergeContainerHookResponse(const hookapi::ContainerResourceHookResponse& answer,
                                Request& create) {
  auto& config = *create.mutable_config();
  mergeInto(answer.container_annotations(), *config.mutable_annotations());
  if (answer.has_container_resources())
    applyHookResources(answer.container_resources(), *config.mutable_linux()->mutable_resources());
  if (!answer.pod_cgroup_parent().empty())
    create.mutable_sandbox_config()->mutable_linux()->set_cgroup_parent(answer.pod_cgroup_parent());
  // kubelet's order is kept; a hook's new variables follow it.
  for (const auto& [key, value] : answer.container_envs()) {
    bool found = false;
    for (auto& kv : *config.mutable_envs()) {
      if (kv.key() == key) {
        kv.set_value(value);
        found = true;
      }
    }
    if (!found) {
      auto* kv = config.add_envs();
      kv->set_key(key);
      kv->set_value(value);
    }
  }
  // A hook's devices and mounts follow the kubelet's; one already there for the same container
  // path is left as the kubelet asked.
  for (const auto& d : answer.container_devices()) {
    bool found = false;
    for (const auto& have : config.devices())
      found = found || have.container_path() == d.container_path();
    if (found)
      continue;
    auto* device = config.add_devices();
    device->set_container_path(d.container_path());
    device->set_host_path(d.host_path());
    device->set_permissions(d.permissions());
  }
  for (const auto& m : answer.container_mounts()) {
    bool found = false;
    for (const auto& have : config.mounts())
      found = found || have.container_path() == m.container_path();
    if (found)
      continue;
    auto* mount = config.add_mounts();
    mount->set_container_path(m.container_path());
    mount->set_host_path(m.host_path());
    mount->set_readonly(m.readonly());
  }
}

#define KOORD_INSTANTIATE_CRI(ns)                                                                 \
  template hookapi::LinuxContainerResources hookResources(const ns::LinuxContainerResources&);    \
  template void applyHookResources(const hookapi::LinuxContainerResources&,                       \
                                   ns::LinuxContainerResources&);                                 \
  template hookapi::PodSandboxHookRequest podSandboxHookRequest(const ns::RunPodSandboxRequest&); \
  template void mergePodSandboxHookResponse(const hookapi::PodSandboxHookResponse&,               \
                                            ns::RunPodSandboxRequest&);                           \
  template hookapi::ContainerResourceHookRequest containerHookRequest(                            \
      const ns::CreateContainerRequest&);                                                         \
  template void mergeContainerHookResponse(const hookapi::ContainerResourceHookResponse&,         \
                                           ns::CreateContainerRequest&);

KOORD_INSTANTIATE_CRI(::runtime::v1)
KOORD_INSTANTIATE_CRI(::runtime::v1alpha2)

#undef KOORD_INSTANTIATE_CRI

}  // namespace koord::roles::runtime_proxy
