#include "statesinformer/node_metric_reporter.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <atomic>

#include "koord/core/log.h"
#include "koord/kube/rate_limiter.h"
#include "koord/kube/rest_client.h"
#include "metriccache/metric_cache.h"
#include "statesinformer/node_metric_status.h"
#include "statesinformer/states_informer.h"

namespace koord::roles::koordlet {

namespace asio = boost::asio;
namespace json = boost::json;

struct NodeMetricReporter::Impl : std::enable_shared_from_this<Impl> {
  Impl(kube::RestClient& c, asio::io_context& i, StatesInformer& s,
       const metriccache::MetricCache& m, metrics::Registry& r,
       const prediction::PeakPredictServer* p)
      : client(c),
        io(i),
        states(s),
        cache(m),
        predictor(p),
        timer(i),
        // Koordinator's reporter limiter: 0.1 QPS, burst 2.
        limiter(0.1, 2),
        reports(r.counter("koordlet_nodemetric_report_total", "NodeMetric status reports by result",
                          {"result"})) {}

  kube::RestClient& client;
  asio::io_context& io;
  StatesInformer& states;
  const metriccache::MetricCache& cache;
  const prediction::PeakPredictServer* predictor;
  // Why the last prodReclaimableMetric was left empty ("" when it was not): logged on change.
  std::string reclaim_error;
  asio::steady_timer timer;
  kube::RateLimiter limiter;
  metrics::CounterFamily& reports;
  std::atomic<bool> stopped{false};
  bool waiting_logged = false;

  NodeMetricCollectSettings settings() const {
    NodeMetricCollectPolicyView view;
    if (auto nm = states.nodeMetric(); nm && nm->collect_policy) {
      view.aggregate_duration_seconds = nm->collect_policy->aggregate_duration_seconds;
      view.report_interval_seconds = nm->collect_policy->report_interval_seconds;
      view.durations = nm->collect_policy->node_aggregate_durations;
      view.memory_collect_policy = nm->collect_policy->node_memory_collect_policy;
    }
    return collectSettings(view);
  }

  void schedule(std::chrono::milliseconds after) {
    timer.expires_after(after);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec && !self->stopped)
        self->report();
    });
  }

  void report() {
    auto s = settings();
    auto nm = states.nodeMetric();
    auto pods = states.pods();
    if (nm == nullptr || pods == nullptr || !states.hasSynced()) {
      // The manager creates the NodeMetric; until then there is nothing to write to.
      if (!waiting_logged)
        KOORD_LOG_INFO("node metric reporter: waiting for the NodeMetric and the node's pods");
      waiting_logged = true;
      schedule(std::chrono::seconds(5));
      return;
    }
    waiting_logged = false;
    auto slo = states.nodeSLO();
    const std::vector<HostApplication> no_apps;
    std::string reclaim;
    auto status =
        buildNodeMetricStatus(cache, *pods, s, std::chrono::system_clock::now(),
                              slo ? slo->host_applications.apps : no_apps, {predictor, &reclaim});
    if (predictor != nullptr && reclaim != reclaim_error) {
      if (!reclaim.empty())
        KOORD_LOG_WARNING("node metric reporter: prodReclaimableMetric left empty: {}", reclaim);
      else
        KOORD_LOG_INFO("node metric reporter: prodReclaimableMetric predicted again");
      reclaim_error = std::move(reclaim);
    }
    json::value patch = json::object{{"status", std::move(status)}};
    const std::string name = nm->name;
    // The limiter's wait runs on our own timer, so stop() can cancel it.
    timer.expires_after(limiter.acquire());
    timer.async_wait([self = shared_from_this(), patch = std::move(patch), name,
                      s](boost::system::error_code ec) mutable {
      if (ec || self->stopped)
        return;
      // A merge patch of the status subresource: only status changes, and no resourceVersion is
      // sent, so a concurrent spec change by the manager never makes it conflict.
      self->client.patch(
          {"slo.koordinator.sh", "v1alpha1", "nodemetrics", "", name, "status"},
          kube::PatchType::kMergePatch, std::move(patch),
          [self, name, s](kube::ApiResult<json::value> r) {
            if (self->stopped)
              return;
            if (!r) {
              self->reports.with({"error"}).inc();
              KOORD_LOG_WARNING("node metric reporter: NodeMetric {}: {}", name, r.error().message);
              // Retried sooner than a full interval, still behind the rate limiter.
              self->schedule(std::chrono::seconds(10));
              return;
            }
            self->reports.with({"success"}).inc();
            KOORD_VLOG(4, "node metric reporter: NodeMetric {} status updated", name);
            self->schedule(s.report_interval);
          });
    });
  }
};

NodeMetricReporter::NodeMetricReporter(kube::RestClient& client, asio::io_context& io,
                                       StatesInformer& states,
                                       const metriccache::MetricCache& cache,
                                       metrics::Registry& registry,
                                       const prediction::PeakPredictServer* predictor)
    : impl_(std::make_shared<Impl>(client, io, states, cache, registry, predictor)) {}

NodeMetricReporter::~NodeMetricReporter() {
  stop();
}

void NodeMetricReporter::start() {
  // The first report waits one interval's worth of samples only as long as the window needs:
  // Koordinator reports the first time after reportIntervalSeconds too.
  asio::post(impl_->io, [impl = impl_] { impl->schedule(impl->settings().report_interval); });
}

void NodeMetricReporter::stop() {
  if (impl_->stopped.exchange(true))
    return;
  asio::post(impl_->io, [impl = impl_] { impl->timer.cancel(); });
}

}  // namespace koord::roles::koordlet
