// What the descheduler's plugins are built from: their name, their args and the handle they evict
// through, and for the community descheduler's pod-picking plugins the namespaces/labelSelector
// filter their args make.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/podfilter/pod_filter.h"

namespace koord::roles::descheduler::pluginkit {

/// `Extension` is the extension point the plugin implements (DeschedulePlugin, BalancePlugin),
/// whose method the plugin adds; `kName` its registry name.
template <typename ArgsT, typename Extension, const std::string_view& kName>
class ArgsPlugin : public Extension {
 public:
  ArgsPlugin(std::shared_ptr<const ArgsT> args, FrameworkHandle& handle)
      : args_(std::move(args)), handle_(handle) {}

  std::string_view name() const override { return kName; }

 protected:
  /// `visit(pod)` for each pod on `node` until the handle's cap for the node (the rest of it is
  /// skipped) or its total cap; false once the total cap is reached, which ends the pass.
  template <typename Visit>
  bool eachPodUnderCaps(const Node& node, Visit&& visit) {
    for (const auto& pod : handle_.snapshot().podsOn(node.name)) {
      if (handle_.totalLimitReached())
        return false;
      if (handle_.nodeLimitReached(node.name))
        break;
      visit(*pod);
    }
    return true;
  }

  std::shared_ptr<const ArgsT> args_;
  FrameworkHandle& handle_;
};

template <typename ArgsT, typename Extension, const std::string_view& kName>
class FilteredPlugin : public ArgsPlugin<ArgsT, Extension, kName> {
 public:
  FilteredPlugin(std::shared_ptr<const ArgsT> args, FrameworkHandle& handle,
                 podfilter::PodFilter pod_filter)
      : ArgsPlugin<ArgsT, Extension, kName>(std::move(args), handle),
        pod_filter_(std::move(pod_filter)) {}

 protected:
  podfilter::PodFilter pod_filter_;
};

/// `PluginT` on `handle` with the filter its args make (namespaces and labelSelector, or
/// namespaces alone for args without a selector); errors when that filter does not compile.
template <typename PluginT, typename ArgsT>
Expected<std::shared_ptr<Plugin>> makeFiltered(std::shared_ptr<const ArgsT> args,
                                               FrameworkHandle& handle) {
  auto filter = [&] {
    if constexpr (requires { args->common; })
      return podfilter::PodFilter::make(args->common);
    else
      return podfilter::PodFilter::make(args->namespaces, std::nullopt);
  }();
  if (!filter)
    return filter.error();
  return std::shared_ptr<Plugin>(
      std::make_shared<PluginT>(std::move(args), handle, std::move(*filter)));
}

}  // namespace koord::roles::descheduler::pluginkit
