#include "plugins/deviceshare/pod_device_hints.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace koord::roles::scheduler::deviceshare {

namespace {

kube::Expected<std::optional<kube::Selector>> compile(
    const std::optional<kube::LabelSelector>& selector) {
  if (!selector)
    return std::optional<kube::Selector>();
  auto compiled = kube::toSelector(*selector);
  if (!compiled)
    return compiled.error();
  return std::optional<kube::Selector>(std::move(*compiled));
}

}  // namespace

kube::Expected<std::optional<PodDeviceHints>> podDeviceHints(const kube::Labels& annotations,
                                                             const PodDeviceRequests& requests) {
  auto hints = apis::podDeviceAllocateHints(annotations);
  if (!hints) {
    return kube::makeKubeError(
        fmt::format("invalid DeviceAllocateHint annotation, err: {}", hints.error().message));
  }
  auto joint = apis::podDeviceJointAllocate(annotations);
  if (!joint) {
    return kube::makeKubeError(
        fmt::format("invalid DeviceJointAllocate annotation, err: {}", joint.error().message));
  }
  if (!*hints && !*joint)
    return std::optional<PodDeviceHints>();

  PodDeviceHints out;
  if (*hints) {
    for (const auto& [name, hint] : **hints) {
      const std::optional<DeviceType> type = parseDeviceType(name);
      if (!type)
        continue;
      DeviceTypeHint h;
      auto selector = compile(hint.selector);
      auto vf_selector = compile(hint.vf_selector);
      // The parser refused selectors that do not compile.
      if (!selector || !vf_selector)
        return kube::makeKubeError(
            fmt::format("invalid DeviceAllocateHint annotation, err: {}",
                        (!selector ? selector : vf_selector).error().message));
      h.selector = std::move(*selector);
      h.vf_selector = std::move(*vf_selector);
      h.allocate_strategy = hint.allocate_strategy;
      h.exclusive_policy = hint.exclusive_policy;
      out.by_type[static_cast<std::size_t>(*type)] = std::move(h);
    }
  }
  if (*joint) {
    for (const std::string& name : (*joint)->device_types) {
      const std::optional<DeviceType> type = parseDeviceType(name);
      if (!type || !requests.has(*type))
        continue;
      const DeviceTypeHint* h = out.of(*type);
      if (h != nullptr && h->allocate_strategy == apis::DeviceAllocateStrategy::kApplyForAll)
        continue;
      if (std::find(out.joint_types.begin(), out.joint_types.end(), *type) == out.joint_types.end())
        out.joint_types.push_back(*type);
    }
    out.joint_same_pcie = (*joint)->same_pcie;
  }
  return std::optional<PodDeviceHints>(std::move(out));
}

}  // namespace koord::roles::scheduler::deviceshare
