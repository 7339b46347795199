#include "qosmanager/cpuburst/cpu_burst_plugin.h"

#include "koordlet_options.h"
#include "qosmanager/cpuburst/cpu_burst.h"

namespace koord::roles::koordlet::qosmanager {

namespace {

std::chrono::milliseconds reconcileInterval(const KoordletOptions& o) {
  return std::chrono::seconds(o.reconcile_interval_seconds);
}

class CPUBurstPlugin final : public QoSStrategy {
 public:
  explicit CPUBurstPlugin(const StrategyContext& c)
      : burst_(c.cache, c.cgroups, c.topology,
               {.reconcile_interval = reconcileInterval(c.options),
                .collect_interval = c.options.collect_res_used_interval,
                .limiter_init_ratio = {}}) {}

  void runOnce(const StatesSnapshot& states, std::chrono::system_clock::time_point now) override {
    burst_.runOnce(states, now);
  }

 private:
  CPUBurst burst_;
};

}  // namespace

StrategySpec cpuBurstStrategy() {
  return {
      .name = "cpu burst",
      .gate = "CPUBurst",
      .interval = reconcileInterval,
      .make = makeStrategy<CPUBurstPlugin>,
  };
}

}  // namespace koord::roles::koordlet::qosmanager
