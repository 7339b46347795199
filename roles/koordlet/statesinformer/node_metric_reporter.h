// Reports the node's usage into its NodeMetric's status every reportIntervalSeconds, with the
// window from the NodeMetric's spec; status subresource only, rate limited, retried on failure.
#pragma once

#include <memory>

#include "koord/core/metrics.h"

namespace boost::asio {
class io_context;
}
namespace koord::kube {
class RestClient;
}

namespace koord::roles::koordlet {

class StatesInformer;
namespace metriccache {
class MetricCache;
}
namespace prediction {
class PeakPredictServer;
}

class NodeMetricReporter {
 public:
  /// With `predictor` (outliving the reporter) each report carries prodReclaimableMetric.
  NodeMetricReporter(kube::RestClient& client, boost::asio::io_context& io, StatesInformer& states,
                     const metriccache::MetricCache& cache, metrics::Registry& registry,
                     const prediction::PeakPredictServer* predictor = nullptr);
  ~NodeMetricReporter();
  NodeMetricReporter(const NodeMetricReporter&) = delete;
  NodeMetricReporter& operator=(const NodeMetricReporter&) = delete;

  void start();
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace koord::roles::koordlet
