#include "qosmanager/cpusuppress/cpu_suppress_plugin.h"

#include "koordlet_options.h"
#include "qosmanager/cpusuppress/cpu_suppress.h"

namespace koord::roles::koordlet::qosmanager {

namespace {

class CPUSuppressPlugin final : public QoSStrategy {
 public:
  explicit CPUSuppressPlugin(const StrategyContext& c)
      : suppress_(c.cache, c.cgroups, c.topology, c.options.collect_res_used_interval, c.metrics) {}

  void runOnce(const StatesSnapshot& states, std::chrono::system_clock::time_point now) override {
    suppress_.runOnce(states, now);
  }

 private:
  CPUSuppress suppress_;
};

}  // namespace

StrategySpec cpuSuppressStrategy() {
  return {
      .name = "cpu suppress",
      .gate = "BECPUSuppress",
      .interval = [](const KoordletOptions& o) -> std::chrono::milliseconds {
        return std::chrono::seconds(o.cpu_suppress_interval_seconds);
      },
      .make = makeStrategy<CPUSuppressPlugin>,
  };
}

}  // namespace koord::roles::koordlet::qosmanager
