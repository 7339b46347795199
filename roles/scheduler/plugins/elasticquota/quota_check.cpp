#include "plugins/elasticquota/quota_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace koord::roles::scheduler::elasticquota {

namespace {

// Go prints a slice of names as "[a b]".
std::string goList(std::span<const std::string> names) {
  return fmt::format("[{}]", fmt::join(names, " "));
}

}  // namespace

std::optional<std::string> checkQuotaFit(const QuotaCheckState& state, const Resources& pod_request,
                                         bool pod_non_preemptible) {
  const Resources used = maskResources(addResources(pod_request, state.used), pod_request);
  if (auto exceeded = exceededNames(used, state.used_limit); !exceeded.empty()) {
    return fmt::format(
        "Insufficient quotas, quotaName: {}, runtime: {}, used: {}, pod's request: {}, "
        "exceedDimensions: {}",
        state.quota_name, printResources(state.used_limit), printResources(state.used),
        printResources(pod_request), goList(exceeded));
  }
  if (pod_non_preemptible) {
    const Resources non_preemptible =
        maskResources(addResources(pod_request, state.non_preemptible_used), pod_request);
    if (auto exceeded = exceededNames(non_preemptible, state.min); !exceeded.empty()) {
      return fmt::format(
          "Insufficient non-preemptible quotas, quotaName: {}, min: {}, nonPreemptibleUsed: {}, "
          "pod's request: {}, exceedDimensions: {}",
          state.quota_name, printResources(state.min), printResources(state.non_preemptible_used),
          printResources(pod_request), goList(exceeded));
    }
  }
  return std::nullopt;
}

std::optional<std::string> checkAncestorFit(std::span<const std::string> quota_name_topo,
                                            const Resources& used, const Resources& used_limit,
                                            const Resources& pod_request) {
  const Resources after = maskResources(addResources(pod_request, used), pod_request);
  auto exceeded = exceededNames(after, used_limit);
  if (exceeded.empty())
    return std::nullopt;
  return fmt::format(
      "Insufficient quotas, quotaNameTopo: {}, runtime: {}, used: {}, pod's request: {}, "
      "exceedDimensions: {}",
      goList(quota_name_topo), printResources(used_limit), printResources(used),
      printResources(pod_request), goList(exceeded));
}

}  // namespace koord::roles::scheduler::elasticquota
