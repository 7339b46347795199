#include "metricsadvisor/collectors/resctrl/resctrl_collector_spec.h"

#include <filesystem>
#include <string>

#include "koord/core/log.h"
#include "koordlet_options.h"
#include "qosmanager/resctrl/resctrl_collector.h"

namespace koord::roles::koordlet::metricsadvisor {

namespace {

class ResctrlMonCollector final : public Collector {
 public:
  explicit ResctrlMonCollector(const CollectorContext& context)
      : root_(std::filesystem::path(context.options.sys_fs_root_dir) / "resctrl"),
        gauges_(context.metrics, context.options.node_name) {}

  void collect(const StatesSnapshot&, std::chrono::system_clock::time_point,
               std::chrono::steady_clock::time_point) override {
    auto samples = qosmanager::readResctrlMonData(root_);
    if (!samples) {
      // Once per distinct error: a host without resctrl would otherwise log every second.
      if (samples.error().message != last_error_) {
        last_error_ = samples.error().message;
        KOORD_LOG_WARNING("resctrl collector: {}", last_error_);
      }
      gauges_.update({});
      return;
    }
    last_error_.clear();
    gauges_.update(*samples);
  }

 private:
  std::filesystem::path root_;
  qosmanager::ResctrlMetrics gauges_;
  std::string last_error_;
};

}  // namespace

CollectorSpec resctrlCollector() {
  return {.name = "resctrl collector",
          .gate = "ResctrlCollector",
          .interval = [](const KoordletOptions& o) { return o.collect_res_used_interval; },
          .make = makeCollector<ResctrlMonCollector>,
          .wanted = [](const KoordletOptions& o) { return o.enable_resctrl_collector; }};
}

}  // namespace koord::roles::koordlet::metricsadvisor
