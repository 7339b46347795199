// LowNodeLoad (Koordinator's loadaware balance plugin): moves pods off nodes whose measured usage
// (NodeMetric) has stayed over the high thresholds, while colder nodes have room under theirs.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/lownodeload/anomaly_detector.h"
#include "plugins/lownodeload/args.h"

namespace koord::roles::descheduler::lownodeload {

inline constexpr std::string_view kLowNodeLoadName = "LowNodeLoad";

class LowNodeLoad final : public BalancePlugin {
 public:
  /// Fails when a selector of `args` does not compile (decoding already checked them).
  static Expected<std::shared_ptr<LowNodeLoad>> make(std::shared_ptr<const LowNodeLoadArgs> args,
                                                     FrameworkHandle& handle);

  std::string_view name() const override { return kLowNodeLoadName; }
  Expected<void> balance(const std::vector<const Node*>& nodes) override;

  /// The detectors kept across passes (node usage and prod usage), for tests.
  AnomalyDetectors& nodeDetectors() { return node_detectors_; }
  AnomalyDetectors& prodDetectors() { return prod_detectors_; }

 private:
  struct Pool {
    const NodePool* args;
    std::optional<kube::Selector> node_selector;
  };
  struct State;

  LowNodeLoad(std::shared_ptr<const LowNodeLoadArgs> args, FrameworkHandle& handle);
  void processPool(const Pool& pool, const std::vector<const Node*>& nodes,
                   std::vector<std::string>& processed);
  bool evictable(const Pod& pod) const;

  std::shared_ptr<const LowNodeLoadArgs> args_;
  FrameworkHandle& handle_;
  std::vector<Pool> pools_;
  std::vector<kube::Selector> pod_selectors_;
  AnomalyDetectors node_detectors_;
  AnomalyDetectors prod_detectors_;
};

}  // namespace koord::roles::descheduler::lownodeload
